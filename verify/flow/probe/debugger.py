"""--debug-image: inspect a container whose image has no shell (distroless, scratch) through an
ephemeral debug container that shares its PID namespace, as `kubectl debug --target` does.

Adding one is a write that stays in the pod's spec until the pod is replaced, so it happens only
when the plain exec could not run the probe, at most once per pod and target container per run,
never in a dry run, and a debug container an earlier try of the job added (still running) is
used again. Every pod that got one is reported (`debug_containers`)."""

from __future__ import annotations

import secrets
import string
import threading
import time
from dataclasses import dataclass

from verify import errors
from verify.findings import ContainerObservation, Expectations, PodTarget, Uninspectable
from verify.flow.probe.debug_spec import (
    debug_container,
    free_name,
    reusable,
    shared_pid_namespace,
    state,
)
from verify.flow.probe.protocol import RunKey, debug_probe_argv, parse_probe, probe_input
from verify.kube.api import Api
from verify.kube.exec import Exec
from verify.kube.retry import Deadline, rbac_denial
from verify.redact import one_line

# how long a debug container may take to pull its image and start (within the run's --timeout)
START_BUDGET = 120.0
POLL = 0.5
# the debug container's sleep: long enough for a retried job to find it running again
LIFETIME = 3600
PATCH_TYPE = "application/strategic-merge-patch+json"


@dataclass(frozen=True)
class DebugContainer:
    """A debug container this run used: `added` by this run, or found running and reused."""

    namespace: str
    pod: str
    container: str
    name: str
    added: bool


def debug_lines(used: tuple[DebugContainer, ...]) -> list[str]:
    """The run's account of its one side effect besides the restart: which pods got a debug
    container (it stays in their spec until they are replaced) and which ones were reused."""
    added = [d for d in used if d.added]
    reused = [d for d in used if not d.added]
    lines = []
    if added:
        names = ", ".join(f"{d.namespace}/{d.pod} ({d.name} -> {d.container})" for d in added)
        lines.append(
            f"added {len(added)} ephemeral debug container{'s' if len(added) != 1 else ''} (they stay in "
            f"the pod spec until the pod is replaced): {names}"
        )
    if reused:
        names = ", ".join(f"{d.namespace}/{d.pod} ({d.name} -> {d.container})" for d in reused)
        lines.append(
            f"reused {len(reused)} ephemeral debug container{'s' if len(reused) != 1 else ''}: {names}"
        )
    return [one_line(x) for x in lines]


def _run_id() -> str:
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(5))


class Debugger:
    """Adds (or reuses) one ephemeral debug container per pod and target, execs the debug probe."""

    def __init__(
        self,
        *,
        api: Api,
        transport: Exec,
        image: str,
        run_key: RunKey,
        dry_run: bool = False,
        run_id: str | None = None,
    ) -> None:
        self.api = api
        self.transport = transport
        self.image = image
        self.run_key = run_key
        self.dry_run = dry_run
        self.run_id = run_id or _run_id()
        self._lock = threading.Lock()
        self._pod_locks: dict[tuple[str, str], threading.Lock] = {}
        self.used: dict[tuple[str, str, str], DebugContainer] = {}

    def containers(self) -> list[DebugContainer]:
        with self._lock:
            return list(self.used.values())

    def _pod_lock(self, namespace: str, pod: str) -> threading.Lock:
        with self._lock:
            return self._pod_locks.setdefault((namespace, pod), threading.Lock())

    def inspect(
        self, *, namespace: str, pod: PodTarget, container: str, expectations: Expectations, limit: float
    ) -> ContainerObservation:
        """The same observation the exec probe gives, read from the target's /proc/1."""
        found = self._ensure(namespace=namespace, pod=pod.name, container=container)
        if isinstance(found, Uninspectable):
            return ContainerObservation(container=container, error=found)
        result = self.transport.run(
            namespace=namespace,
            pod=pod.name,
            container=found,
            argv=debug_probe_argv(),
            stdin=probe_input(expectations, self.run_key),
            limit=limit,
        )
        if result.error is not None:
            err = result.error
            said = err.reason
            if err.code == "no_shell":
                said = f"the debug image {one_line(self.image)} has no shell (sh); use one that has (busybox)"
            why = Uninspectable(err.code, f"through debug container {found}: {said}", err.permanent)
            return ContainerObservation(container=container, error=why)
        return parse_probe(
            container=container, stdout=result.stdout, expectations=expectations, run_key=self.run_key
        )

    def _ensure(self, *, namespace: str, pod: str, container: str) -> str | Uninspectable:
        """The running debug container's name for (pod, container), added if need be."""
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}"
        with self._pod_lock(namespace, pod):
            known = self.used.get((namespace, pod, container))
            try:
                live = self.api.get(path)
                shared = shared_pid_namespace(live)
                if shared is not None:
                    return Uninspectable("debug_failed", shared, permanent=True)
                name = known.name if known is not None else reusable(live, target=container, image=self.image)
                if name is not None:
                    if known is None:
                        with self._lock:
                            self.used[(namespace, pod, container)] = DebugContainer(
                                namespace, pod, container, name, added=False
                            )
                elif self.dry_run:
                    return Uninspectable(
                        "debug_failed",
                        f"--dry-run: would add an ephemeral debug container ({one_line(self.image)}) to "
                        "inspect it; nothing was sent",
                        permanent=True,
                    )
                else:
                    name = free_name(live, self.run_id)
                    spec = debug_container(
                        pod=live, target=container, image=self.image, name=name, lifetime=LIFETIME
                    )
                    body = {"spec": {"ephemeralContainers": [spec]}}
                    self.api.patch(f"{path}/ephemeralcontainers", body, PATCH_TYPE)
                    with self._lock:
                        self.used[(namespace, pod, container)] = DebugContainer(
                            namespace, pod, container, name, added=True
                        )
            except errors.VerifyError as e:
                return _refusal(e, namespace=namespace, pod=pod)
        return self._wait_running(path=path, name=name, pod=pod)

    def _wait_running(self, *, path: str, name: str, pod: str) -> str | Uninspectable:
        budget = Deadline(min(START_BUDGET, max(self.api.deadline.remaining(), 0.0)))
        while True:
            try:
                now = state(self.api.get(path), name)
            except errors.VerifyError as e:
                return _refusal(e, namespace="", pod=pod)
            if now.phase == "running":
                return name
            if now.phase == "failed":
                return Uninspectable("debug_failed", one_line(now.reason), permanent=True)
            if now.phase == "absent":
                return Uninspectable("pod_gone", f"pod {pod} was replaced during inspection", permanent=False)
            if budget.remaining() <= POLL:
                return Uninspectable(
                    "timeout",
                    f"debug container {name} did not start within {budget.seconds:.0f}s",
                    permanent=False,
                )
            time.sleep(POLL)


def _refusal(e: errors.VerifyError, *, namespace: str, pod: str) -> Uninspectable:
    """Why the debug container could not be added or read."""
    msg = one_line(str(e))[:300]
    if isinstance(e, errors.NotFound):
        return Uninspectable("pod_gone", f"pod {pod} no longer exists", permanent=False)
    if isinstance(e, errors.Forbidden) and rbac_denial(msg):
        where = f" in namespace {namespace}" if namespace else ""
        return Uninspectable(
            "forbidden",
            "adding a debug container is forbidden: missing RBAC rule "
            f"`patch pods/ephemeralcontainers`{where}",
            permanent=True,
        )
    if isinstance(e, errors.Forbidden | errors.Invalid):
        # Pod Security admission or a policy engine: its own words say what it refused
        return Uninspectable("debug_failed", f"the debug container was refused: {msg}", permanent=True)
    return Uninspectable("debug_failed", f"the debug container could not be added: {msg}", permanent=False)
