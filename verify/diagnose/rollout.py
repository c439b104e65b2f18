"""Why a rollout is stuck: one line per pod or container that holds it back, from the kubelet's
own waiting reasons and messages (never application output). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from verify.kube.objects import integer, items, mapping, text

_MAX_MESSAGE = 300
# waiting reasons whose message the kubelet writes itself (never application output)
KUBELET_MESSAGES = frozenset(
    {
        "CreateContainerConfigError",
        "CreateContainerError",
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "ContainerCreating",
        "CrashLoopBackOff",
    }
)



def _clean(message: str) -> str:
    line = " ".join(message.split())
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 3] + "..."


def _pod_label(pod: Mapping[str, Any]) -> str:
    name = text(mapping(pod, "metadata"), "name")
    node = text(mapping(pod, "spec"), "nodeName")
    return f"pod {name} ({node})" if node else f"pod {name}"


def _terminated_text(term: Mapping[str, Any]) -> str:
    parts = [f"exit code {integer(term, 'exitCode')}"]
    if text(term, "reason"):
        parts.append(f"({text(term, 'reason')})")
    # never the termination message: with FallbackToLogsOnError it is the tail of the app's log
    return " ".join(parts)


def not_ready(pod: Mapping[str, Any]) -> list[str]:
    """The pod's containers that run but are not ready: their readiness probe fails."""
    return [
        text(cs, "name")
        for cs in items(mapping(pod, "status"), "containerStatuses")
        if isinstance(cs, Mapping) and "running" in mapping(cs, "state") and cs.get("ready") is False
    ]


def _container_reasons(
    pod: Mapping[str, Any], statuses: list[Any], init: bool, probes: Mapping[str, str]
) -> list[str]:
    lines: list[str] = []
    kind = "init container" if init else "container"
    for cs in statuses:
        if not isinstance(cs, Mapping):
            continue
        head = f"{_pod_label(pod)} {kind} {text(cs, 'name')}"
        waiting = mapping(cs, "state", "waiting")
        terminated = mapping(cs, "state", "terminated")
        if waiting:
            line = f"{head}: {text(waiting, 'reason') or 'Waiting'}"
            if text(waiting, "message") and text(waiting, "reason") in KUBELET_MESSAGES:
                line += f": {_clean(text(waiting, 'message'))}"
            last = mapping(cs, "lastState", "terminated")
            if text(waiting, "reason") == "CrashLoopBackOff" and last:
                line += f"; last run: {_terminated_text(last)}"
            lines.append(line)
        elif terminated and not (init and integer(terminated, "exitCode") == 0):
            lines.append(f"{head}: terminated, {_terminated_text(terminated)}")
        elif not init and "running" in mapping(cs, "state") and cs.get("ready") is False:
            # why, as `kubectl describe pod` shows it: the kubelet's last Unhealthy event
            failed = probes.get(text(cs, "name"), "")
            lines.append(f"{head}: running but not ready" + (f": {_clean(failed)}" if failed else ""))
    return lines


def creating_silently(pod: Mapping[str, Any]) -> bool:
    """A pod whose containers wait in ContainerCreating with no message: the kubelet says why
    only in events (a volume it cannot mount: FailedMount)."""
    return any(
        text(mapping(cs, "state", "waiting"), "reason") == "ContainerCreating"
        and not text(mapping(cs, "state", "waiting"), "message")
        for cs in items(mapping(pod, "status"), "containerStatuses")
        if isinstance(cs, Mapping)
    )


def waiting_reasons(
    *,
    pods: Sequence[Mapping[str, Any]],
    mount_failures: Mapping[str, str] | None = None,
    probe_failures: Mapping[str, Mapping[str, str]] | None = None,
) -> list[str]:
    """Why pods are not ready yet, one line each, so a stuck rollout explains itself.
    `mount_failures`: pod name -> the kubelet's last FailedMount event message; `probe_failures`:
    pod name -> container -> its last probe failure (an Unhealthy event: `Readiness probe failed: …`)."""
    lines: list[str] = []
    for pod in pods:
        if mapping(pod, "metadata").get("deletionTimestamp"):
            continue
        status = mapping(pod, "status")
        phase = text(status, "phase") or "Unknown"
        label = _pod_label(pod)
        if phase == "Pending" and not text(mapping(pod, "spec"), "nodeName"):
            line = f"{label}: Pending (unscheduled)"
            for cond in items(status, "conditions"):
                if (
                    isinstance(cond, Mapping)
                    and cond.get("type") == "PodScheduled"
                    and cond.get("status") == "False"
                    and text(cond, "message")
                ):
                    line += f": {_clean(text(cond, 'message'))}"
            lines.append(line)
            continue
        if phase in ("Failed", "Unknown"):
            line = f"{label}: {phase}"
            if text(status, "reason"):
                line += f": {text(status, 'reason')}"
            if text(status, "message"):
                line += f": {_clean(text(status, 'message'))}"
            lines.append(line)
            continue
        failed = (mount_failures or {}).get(text(mapping(pod, "metadata"), "name"), "")
        if failed and creating_silently(pod):
            lines.append(f"{label}: ContainerCreating: {_clean(failed)}")
            continue
        probes = (probe_failures or {}).get(text(mapping(pod, "metadata"), "name"), {})
        lines.extend(_container_reasons(pod, items(status, "initContainerStatuses"), True, {}))
        lines.extend(_container_reasons(pod, items(status, "containerStatuses"), False, probes))
    return lines


def creation_failure(*, workload: Mapping[str, Any]) -> str | None:
    """Why a Deployment has no new pods at all: the API refuses to create them (a missing
    ServiceAccount, a quota, an admission webhook). The ReplicaSet controller records that in its
    ReplicaFailure condition and the deployment controller copies it to the Deployment; no pod
    exists to carry a waiting reason, so this is the only trace. Its message is the API server's."""
    for cond in items(mapping(workload, "status"), "conditions"):
        if (
            isinstance(cond, Mapping)
            and cond.get("type") == "ReplicaFailure"
            and cond.get("status") == "True"
        ):
            return f"pods cannot be created: {_clean(text(cond, 'message'))}"
    return None
