"""The ephemeral debug container rollout-verify adds to inspect a container without a shell, and
how to read its state from the pod. Pure: plain pod dicts in, plain data out.

The container joins the target's PID namespace (`targetContainerName`), so the target's first
process is PID 1 there and its environment and files are readable through /proc/1 — by the same
user only: it runs as the target's runAsUser/runAsGroup, without privileges, capabilities or
writes, so it is admitted under the "restricted" Pod Security level wherever the target is. It
only sleeps (the probe is exec'd into it, its input on stdin, so the run's HMAC pad never lands in
the pod spec or the container's logs) and ends on its own after `lifetime` seconds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

PREFIX = "rv-"
# the kubelet's waiting reasons that will not resolve by waiting for them
_STUCK = {
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "StartError",
}
# copied from the target container so the debug container is the same user
_IDENTITY = ("runAsUser", "runAsGroup", "runAsNonRoot")


@dataclass(frozen=True)
class DebugState:
    """Where a debug container is: running (exec into it), starting (wait) or failed (why)."""

    phase: Literal["running", "starting", "failed", "absent"]
    reason: str = ""


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod.get("spec") or {}
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def shared_pid_namespace(pod: dict[str, Any]) -> str | None:
    """Why /proc/1 would not be the target: with `shareProcessNamespace` every container of the
    pod shares the sandbox's PID namespace, whose PID 1 is the pause process (None: it is)."""
    if (pod.get("spec") or {}).get("shareProcessNamespace") is True:
        return (
            "the pod shares one process namespace (shareProcessNamespace: true), where PID 1 is the "
            "pause process, not this container: a debug container cannot tell its process apart; "
            "give the image the probe's tools (sh, tr, sha256sum, readlink)"
        )
    return None


def debug_container(
    *, pod: dict[str, Any], target: str, image: str, name: str, lifetime: int
) -> dict[str, Any]:
    """The ephemeral container to add: a sleeper in `target`'s PID namespace, as its user."""
    own = next((c for c in _containers(pod) if c.get("name") == target), {})
    theirs = own.get("securityContext") or {}
    security: dict[str, Any] = {k: theirs[k] for k in _IDENTITY if k in theirs}
    if isinstance(security.get("runAsUser"), int) and security["runAsUser"] != 0:
        security.setdefault("runAsNonRoot", True)
    security.update(
        {
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
    )
    return {
        "name": name,
        "image": image,
        "command": ["sleep", str(lifetime)],
        "targetContainerName": target,
        "stdin": False,
        "tty": False,
        "securityContext": security,
    }


def reusable(pod: dict[str, Any], *, target: str, image: str) -> str | None:
    """A debug container an earlier run (or an earlier try of this job) added for `target` with
    this image that is running or still starting: using it again adds nothing to the pod."""
    for ec in (pod.get("spec") or {}).get("ephemeralContainers") or []:
        name = str(ec.get("name", ""))
        if not name.startswith(PREFIX) or ec.get("targetContainerName") != target or ec.get("image") != image:
            continue
        if state(pod, name).phase in ("running", "starting"):
            return name
    return None


def free_name(pod: dict[str, Any], run_id: str) -> str:
    """`rv-<runid>`, or `rv-<runid>-2`... when this run already added one to another container."""
    spec = pod.get("spec") or {}
    taken = {c.get("name") for c in [*_containers(pod), *(spec.get("ephemeralContainers") or [])]}
    base = f"{PREFIX}{run_id}"
    n = 1
    name = base
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def state(pod: dict[str, Any], name: str) -> DebugState:
    """The debug container's state as the kubelet reports it."""
    if not any(ec.get("name") == name for ec in (pod.get("spec") or {}).get("ephemeralContainers") or []):
        return DebugState("absent")
    statuses = (pod.get("status") or {}).get("ephemeralContainerStatuses") or []
    st = next((s for s in statuses if s.get("name") == name), None)
    if st is None:
        return DebugState("starting")
    now = st.get("state") or {}
    if "running" in now:
        return DebugState("running")
    if "terminated" in now:
        term = now["terminated"] or {}
        return DebugState(
            "failed", f"debug container {name} exited ({term.get('reason', '')} {term.get('exitCode', '?')})"
        )
    waiting = now.get("waiting") or {}
    reason = str(waiting.get("reason", ""))
    if reason in _STUCK:
        message = str(waiting.get("message", ""))[:200]
        return DebugState(
            "failed", f"debug container {name} cannot start: {reason}" + (f": {message}" if message else "")
        )
    return DebugState("starting")
