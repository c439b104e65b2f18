"""Verified means stable: a container counts only when it was running and ready when its pod was
selected, had been for the settle window (--min-ready, or the workload's minReadySeconds when
longer), and is still the same container (ID and restartCount) running and ready after its
exec. A container that restarted, waits (CrashLoopBackOff, Error) or is not ready is a failure
naming its restarts and last exit, never a pass: a rollout can count a crash-looping pod
available in the instant it was ready. So is one running again after a run that ended less than
CRASH_MEMORY ago: a crash loop whose runs outlast the settle window is between two crashes when it
is inspected. Pure: the pods' JSON in, states and reasons out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from verify.kube.objects import integer, mapping, maps, text

# How long after a container's run ended the kubelet still counts it in crash-loop back-off: it
# resets a container's back-off only once it ran twice the longest back-off without exiting
# (client-go util/flowcontrol/backoff.go, hasExpired: "consider stable if it's ok for twice the
# maxDuration"; the kubelet's maxDuration is MaxContainerBackOff, 300 s, pkg/kubelet/kubelet.go).
CRASH_MEMORY = 600.0


@dataclass(frozen=True)
class ContainerState:
    """What the kubelet last said of one container (its status, never its output)."""

    name: str
    container_id: str
    restarts: int
    running: bool
    ready: bool
    started_at: str  # state.running.startedAt
    waiting: str  # state.waiting.reason
    last_exit: str  # the last termination, e.g. "exit code 3 (Error)"; "" when it never ended
    last_ended: str = ""  # lastState.terminated.finishedAt of a container that restarted

    def phrase(self) -> str:
        """Where it stands: `waiting in CrashLoopBackOff after 2 restarts (last run: exit code 3
        (Error))`."""
        if self.running:
            now = "running" + ("" if self.ready else " but not ready")
        elif self.waiting:
            now = f"waiting in {self.waiting}"
        elif self.last_exit:
            now = "exited"
        else:
            now = "not started"
        after = f" after {self.restarts} restart{'' if self.restarts == 1 else 's'}" if self.restarts else ""
        last = f" (last run: {self.last_exit})" if self.last_exit else ""
        return now + after + last


@dataclass(frozen=True)
class PodState:
    name: str
    uid: str
    ready_since: str  # the ContainersReady condition's lastTransitionTime while it is True
    containers: tuple[ContainerState, ...]

    def container(self, name: str) -> ContainerState | None:
        return next((c for c in self.containers if c.name == name), None)


def _exit(term: Mapping[str, Any]) -> str:
    if not term:
        return ""
    reason = text(term, "reason")
    return f"exit code {integer(term, 'exitCode')}" + (f" ({reason})" if reason else "")


def _container(status: Mapping[str, Any]) -> ContainerState:
    state = mapping(status, "state")
    running = "running" in state
    last = mapping(state, "terminated") or mapping(status, "lastState", "terminated")
    return ContainerState(
        name=text(status, "name"),
        container_id=text(status, "containerID"),
        restarts=integer(status, "restartCount"),
        running=running,
        ready=running and status.get("ready") is True,
        started_at=text(mapping(state, "running"), "startedAt"),
        waiting=text(mapping(state, "waiting"), "reason"),
        last_exit=_exit(last),
        last_ended=text(mapping(status, "lastState", "terminated"), "finishedAt"),
    )


def pod_state(pod: Mapping[str, Any], *, containers: Sequence[str]) -> PodState:
    """The state of `containers` (app containers and native sidecars) of one pod."""
    status = mapping(pod, "status")
    found = {
        text(cs, "name"): _container(cs)
        for key in ("initContainerStatuses", "containerStatuses")
        for cs in maps(status, key)
    }
    since = ""
    for cond in maps(status, "conditions"):
        if text(cond, "type") == "ContainersReady" and text(cond, "status") == "True":
            since = text(cond, "lastTransitionTime")
    meta = mapping(pod, "metadata")
    return PodState(
        name=text(meta, "name"),
        uid=text(meta, "uid"),
        ready_since=since,
        containers=tuple(
            found.get(name) or ContainerState(name, "", 0, False, False, "", "", "") for name in containers
        ),
    )


def settle_window(*, setting: float, workload: Mapping[str, Any]) -> float:
    """--min-ready, or the workload's minReadySeconds when that is longer (a Deployment counts a
    pod available only after it, so a shorter window would judge pods it does not yet count)."""
    return max(setting, float(integer(mapping(workload, "spec"), "minReadySeconds")))


def _seconds(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp).timestamp() if stamp else None
    except ValueError:
        return None


def unsteady_now(state: PodState, *, now: float) -> dict[str, str]:
    """The containers not running and ready when their pod was selected, each with why; and those
    running again after a run that ended less than CRASH_MEMORY before `now` (seconds since the
    epoch): still crash-looping to the kubelet, however long the current run has lasted so far."""
    out: dict[str, str] = {}
    for c in state.containers:
        if not c.ready:
            out[c.name] = c.phrase()
            continue
        ended = _seconds(c.last_ended) if c.restarts else None
        if ended is not None and now - ended < CRASH_MEMORY:
            ago = max(0, round(now - ended))
            out[c.name] = (
                f"{c.phrase()}, which ended {ago} s ago: the kubelet counts a container crash-looping "
                f"until it has run {CRASH_MEMORY / 60:g} min without exiting"
            )
    return out


def settle_seconds(*, pods: Sequence[PodState], window: float, now: float) -> float:
    """How long until every ready container has been ready for `window` seconds, by the
    kubelet's timestamps (ContainersReady's transition, the container's start) against `now`
    (seconds since the epoch). Never more than `window`: a skewed clock only ever makes it wait
    the whole window."""
    wait = 0.0
    for pod in pods:
        for c in pod.containers:
            if not c.ready:
                continue
            stamps = [s for s in (_seconds(pod.ready_since), _seconds(c.started_at)) if s is not None]
            since = max(stamps) if stamps else now
            wait = max(wait, min(window, since + window - now))
    return max(0.0, wait)


def changed(*, before: PodState, after: PodState) -> dict[str, str]:
    """The containers that did not hold still between selection and the end of their
    inspection: restarted (another ID or restartCount) or no longer running and ready."""
    out: dict[str, str] = {}
    for old in before.containers:
        if not old.ready:
            continue  # said at selection
        new = after.container(old.name)
        if new is None:
            out[old.name] = "gone from the pod's status while it was verified"
        elif new.restarts != old.restarts or (new.container_id and new.container_id != old.container_id):
            n = new.restarts - old.restarts
            during = f"{n} time{'' if n == 1 else 's'} " if n > 0 else ""
            out[old.name] = f"restarted {during}while it was verified, now {new.phrase()}"
        elif not new.running:
            out[old.name] = f"stopped while it was verified, now {new.phrase()}"
        elif not new.ready:
            out[old.name] = f"no longer ready while it was verified, now {new.phrase()}"
    return out
