"""Pure rollout logic over Deployment/ReplicaSet/Pod JSON dicts, exactly as the API returns them.

`rollout_state` mirrors kubectl's DeploymentStatusViewer (polymorphichelpers/rollout_status.go)
so "done" here means what `kubectl rollout status` means; the pod selection then pins the
pods of the new revision only, never old or terminating ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verify.model import PodTarget

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
TEMPLATE_HASH_LABEL = "pod-template-hash"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
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


@dataclass(frozen=True)
class RolloutState:
    """Where a rollout stands: `done` and `failed` are never both true."""

    done: bool
    failed: bool
    message: str


@dataclass(frozen=True)
class PodSelection:
    """The pods of the Deployment's current revision, plus why the set may be incomplete.

    `problems` may clear up on a restart (e.g. a pod short); `permanent_problems` cannot
    (e.g. a requested container that the pod template does not have).
    """

    revision: str
    replicaset: str
    template_hash: str
    pods: tuple[PodTarget, ...]
    problems: tuple[str, ...] = ()
    permanent_problems: tuple[str, ...] = ()


def _dict(obj: Any, *keys: str) -> Mapping[str, Any]:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, Mapping) else {}


def _list(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _int(obj: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _replicas(deployment: Mapping[str, Any]) -> int:
    """spec.replicas, defaulting to 1 as the API server does when it is unset."""
    return _int(_dict(deployment, "spec"), "replicas", 1)


def rollout_state(*, deployment: Mapping[str, Any]) -> RolloutState:
    """kubectl's rollout-status verdict for one Deployment, message text included."""
    meta = _dict(deployment, "metadata")
    status = _dict(deployment, "status")
    name = _str(meta, "name")
    if _int(meta, "generation") > _int(status, "observedGeneration"):
        return RolloutState(False, False, "Waiting for deployment spec update to be observed...")
    for cond in _list(status, "conditions"):
        if (
            isinstance(cond, Mapping)
            and cond.get("type") == "Progressing"
            and cond.get("reason") == TIMED_OUT_REASON
        ):
            return RolloutState(False, True, f'deployment "{name}" exceeded its progress deadline')
    wanted = _replicas(deployment)
    updated = _int(status, "updatedReplicas")
    total = _int(status, "replicas")
    available = _int(status, "availableReplicas")
    prefix = f'Waiting for deployment "{name}" rollout to finish: '
    if updated < wanted:
        return RolloutState(
            False, False, f"{prefix}{updated} out of {wanted} new replicas have been updated..."
        )
    if total > updated:
        return RolloutState(
            False, False, f"{prefix}{total - updated} old replicas are pending termination..."
        )
    if available < updated:
        return RolloutState(
            False, False, f"{prefix}{available} of {updated} updated replicas are available..."
        )
    return RolloutState(True, False, f'deployment "{name}" successfully rolled out')


def _owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    refs = _list(_dict(obj, "metadata"), "ownerReferences")
    return bool(uid) and any(isinstance(r, Mapping) and r.get("uid") == uid for r in refs)


def _container_names(pod_spec: Mapping[str, Any]) -> list[str]:
    return [_str(c, "name") for c in _list(pod_spec, "containers") if isinstance(c, Mapping)]


def select_current_pods(
    *,
    deployment: Mapping[str, Any],
    replicasets: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    containers: Sequence[str] = (),
) -> PodSelection:
    """Pods of the Deployment's current revision: owned by its ReplicaSet, same template hash.

    Terminating pods and terminal (Failed/Succeeded, e.g. evicted) pods are skipped: they are
    not serving the new revision and their containers cannot be exec'd into reliably.
    """
    meta = _dict(deployment, "metadata")
    name = _str(meta, "name")
    uid = _str(meta, "uid")
    revision = _str(_dict(meta, "annotations"), REVISION_ANNOTATION)
    label = f"deployment {name}"
    if not revision:
        return PodSelection("", "", "", (), (f"{label}: has no revision annotation yet",))
    current = [
        rs
        for rs in replicasets
        if _owned_by(rs, uid) and _str(_dict(rs, "metadata", "annotations"), REVISION_ANNOTATION) == revision
    ]
    if not current:
        return PodSelection(revision, "", "", (), (f"{label}: no ReplicaSet for revision {revision}",))
    rs = current[0]
    rs_meta = _dict(rs, "metadata")
    rs_name = _str(rs_meta, "name")
    rs_uid = _str(rs_meta, "uid")
    template_hash = _str(_dict(rs_meta, "labels"), TEMPLATE_HASH_LABEL)

    template_spec = _dict(rs, "spec", "template", "spec") or _dict(deployment, "spec", "template", "spec")
    template_containers = _container_names(template_spec)
    permanent: list[str] = []
    unknown = [c for c in containers if c not in template_containers]
    for missing in unknown:
        permanent.append(
            f'{label}: container "{missing}" is not in the pod template of revision {revision} '
            f"(containers: {', '.join(template_containers) or 'none'})"
        )

    targets: list[PodTarget] = []
    for pod in pods:
        pod_meta = _dict(pod, "metadata")
        if pod_meta.get("deletionTimestamp"):
            continue
        if _str(_dict(pod, "status"), "phase") in ("Failed", "Succeeded"):
            continue
        if not _owned_by(pod, rs_uid):
            continue
        if _str(_dict(pod_meta, "labels"), TEMPLATE_HASH_LABEL) != template_hash:
            continue
        pod_spec = _dict(pod, "spec")
        names = _container_names(pod_spec)
        if containers:
            names = [c for c in names if c in containers]
        targets.append(
            PodTarget(
                name=_str(pod_meta, "name"),
                node=_str(pod_spec, "nodeName"),
                containers=tuple(names),
                uid=_str(pod_meta, "uid"),
            )
        )
    targets.sort(key=lambda t: t.name)

    problems: list[str] = []
    wanted = _replicas(deployment)
    if len(targets) != wanted:
        problems.append(f"{label}: expected {wanted} pods of revision {revision}, found {len(targets)}")
    return PodSelection(
        revision=revision,
        replicaset=rs_name,
        template_hash=template_hash,
        pods=tuple(targets),
        problems=tuple(problems),
        permanent_problems=tuple(permanent),
    )


def _clean(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 3] + "..."


def _pod_label(pod: Mapping[str, Any]) -> str:
    name = _str(_dict(pod, "metadata"), "name")
    node = _str(_dict(pod, "spec"), "nodeName")
    return f"pod {name} ({node})" if node else f"pod {name}"


def _terminated_text(term: Mapping[str, Any]) -> str:
    parts = [f"exit code {_int(term, 'exitCode')}"]
    if _str(term, "reason"):
        parts.append(f"({_str(term, 'reason')})")
    # never the termination message: with FallbackToLogsOnError it is the tail of the app's log
    return " ".join(parts)


def _container_reasons(pod: Mapping[str, Any], statuses: list[Any], init: bool) -> list[str]:
    lines: list[str] = []
    kind = "init container" if init else "container"
    for cs in statuses:
        if not isinstance(cs, Mapping):
            continue
        head = f"{_pod_label(pod)} {kind} {_str(cs, 'name')}"
        waiting = _dict(cs, "state", "waiting")
        terminated = _dict(cs, "state", "terminated")
        if waiting:
            line = f"{head}: {_str(waiting, 'reason') or 'Waiting'}"
            if _str(waiting, "message") and _str(waiting, "reason") in KUBELET_MESSAGES:
                line += f": {_clean(_str(waiting, 'message'))}"
            last = _dict(cs, "lastState", "terminated")
            if _str(waiting, "reason") == "CrashLoopBackOff" and last:
                line += f"; last run: {_terminated_text(last)}"
            lines.append(line)
        elif terminated and not (init and _int(terminated, "exitCode") == 0):
            lines.append(f"{head}: terminated, {_terminated_text(terminated)}")
        elif not init and "running" in _dict(cs, "state") and cs.get("ready") is False:
            lines.append(f"{head}: running but not ready")
    return lines


def waiting_reasons(*, pods: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why pods are not ready yet, one line each, so a stuck rollout explains itself."""
    lines: list[str] = []
    for pod in pods:
        if _dict(pod, "metadata").get("deletionTimestamp"):
            continue
        status = _dict(pod, "status")
        phase = _str(status, "phase") or "Unknown"
        label = _pod_label(pod)
        if phase == "Pending" and not _str(_dict(pod, "spec"), "nodeName"):
            line = f"{label}: Pending (unscheduled)"
            for cond in _list(status, "conditions"):
                if (
                    isinstance(cond, Mapping)
                    and cond.get("type") == "PodScheduled"
                    and cond.get("status") == "False"
                    and _str(cond, "message")
                ):
                    line += f": {_clean(_str(cond, 'message'))}"
            lines.append(line)
            continue
        if phase in ("Failed", "Unknown"):
            line = f"{label}: {phase}"
            if _str(status, "reason"):
                line += f": {_str(status, 'reason')}"
            if _str(status, "message"):
                line += f": {_clean(_str(status, 'message'))}"
            lines.append(line)
            continue
        lines.extend(_container_reasons(pod, _list(status, "initContainerStatuses"), True))
        lines.extend(_container_reasons(pod, _list(status, "containerStatuses"), False))
    return lines
