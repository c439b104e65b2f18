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
REVISION_HASH_LABEL = "controller-revision-hash"  # StatefulSet and DaemonSet pods
ROLLING_UPDATE = "RollingUpdate"
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


def _unknown_containers(
    label: str, revision: str, template_spec: Mapping[str, Any], wanted: Sequence[str]
) -> list[str]:
    """Requested containers the template lacks: a restart cannot add them."""
    names = _container_names(template_spec)
    return [
        f'{label}: container "{c}" is not in the pod template of revision {revision} '
        f"(containers: {', '.join(names) or 'none'})"
        for c in wanted
        if c not in names
    ]


def _pods_of(
    pods: Sequence[Mapping[str, Any]], *, owner_uid: str, label: str, value: str, containers: Sequence[str]
) -> tuple[PodTarget, ...]:
    """Live pods owned by `owner_uid` whose `label` is `value`, sorted by name.

    Terminating pods and terminal (Failed/Succeeded, e.g. evicted) pods are skipped: they are
    not serving the new revision and their containers cannot be exec'd into reliably.
    """
    targets: list[PodTarget] = []
    for pod in pods:
        pod_meta = _dict(pod, "metadata")
        if pod_meta.get("deletionTimestamp"):
            continue
        if _str(_dict(pod, "status"), "phase") in ("Failed", "Succeeded"):
            continue
        if not _owned_by(pod, owner_uid) or _str(_dict(pod_meta, "labels"), label) != value:
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
    return tuple(sorted(targets, key=lambda t: t.name))


def _count_problem(label: str, wanted: int, found: int, revision: str) -> tuple[str, ...]:
    if found == wanted:
        return ()
    return (f"{label}: expected {wanted} pods of revision {revision}, found {found}",)


def select_current_pods(
    *,
    deployment: Mapping[str, Any],
    replicasets: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    containers: Sequence[str] = (),
) -> PodSelection:
    """Pods of the Deployment's current revision: owned by its ReplicaSet, same template hash."""
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
    template_hash = _str(_dict(rs_meta, "labels"), TEMPLATE_HASH_LABEL)
    template_spec = _dict(rs, "spec", "template", "spec") or _dict(deployment, "spec", "template", "spec")
    targets = _pods_of(
        pods,
        owner_uid=_str(rs_meta, "uid"),
        label=TEMPLATE_HASH_LABEL,
        value=template_hash,
        containers=containers,
    )
    return PodSelection(
        revision=revision,
        replicaset=_str(rs_meta, "name"),
        template_hash=template_hash,
        pods=targets,
        problems=_count_problem(label, _replicas(deployment), len(targets), revision),
        permanent_problems=tuple(_unknown_containers(label, revision, template_spec, containers)),
    )


def _partition(statefulset: Mapping[str, Any]) -> int:
    rolling = _dict(statefulset, "spec", "updateStrategy", "rollingUpdate")
    return max(0, _int(rolling, "partition"))


def _start_ordinal(statefulset: Mapping[str, Any]) -> int:
    """`spec.ordinals.start`: pods are named from it, while a partition counts replica indexes
    (ordinal - start), as the StatefulSet controller's update loop does."""
    return max(0, _int(_dict(statefulset, "spec", "ordinals"), "start"))


def statefulset_state(*, statefulset: Mapping[str, Any]) -> RolloutState:
    """kubectl's StatefulSetStatusViewer, message text included."""
    meta = _dict(statefulset, "metadata")
    spec = _dict(statefulset, "spec")
    status = _dict(statefulset, "status")
    strategy = _dict(spec, "updateStrategy")
    if (_str(strategy, "type") or ROLLING_UPDATE) != ROLLING_UPDATE:
        return RolloutState(
            False, True, f"rollout status is only available for {ROLLING_UPDATE} strategy type"
        )
    observed = _int(status, "observedGeneration")
    if observed == 0 or _int(meta, "generation") > observed:
        return RolloutState(False, False, "Waiting for statefulset spec update to be observed...")
    replicas = _replicas(statefulset)
    ready = _int(status, "readyReplicas")
    if ready < replicas:
        return RolloutState(False, False, f"Waiting for {replicas - ready} pods to be ready...")
    updated = _int(status, "updatedReplicas")
    if isinstance(strategy.get("rollingUpdate"), Mapping):
        wanted = replicas - _partition(statefulset)
        if updated < wanted:
            return RolloutState(
                False,
                False,
                "Waiting for partitioned roll out to finish: "
                f"{updated} out of {wanted} new pods have been updated...",
            )
        return RolloutState(
            True, False, f"partitioned roll out complete: {updated} new pods have been updated..."
        )
    current, update = _str(status, "currentRevision"), _str(status, "updateRevision")
    if update != current:
        return RolloutState(
            False,
            False,
            f"waiting for statefulset rolling update to complete {updated} pods at revision {update}...",
        )
    return RolloutState(
        True,
        False,
        f"statefulset rolling update complete {_int(status, 'currentReplicas')} pods "
        f"at revision {current}...",
    )


def daemonset_state(*, daemonset: Mapping[str, Any]) -> RolloutState:
    """kubectl's DaemonSetStatusViewer, message text included."""
    meta = _dict(daemonset, "metadata")
    status = _dict(daemonset, "status")
    name = _str(meta, "name")
    if (_str(_dict(daemonset, "spec", "updateStrategy"), "type") or ROLLING_UPDATE) != ROLLING_UPDATE:
        return RolloutState(
            False, True, f"rollout status is only available for {ROLLING_UPDATE} strategy type"
        )
    if _int(meta, "generation") > _int(status, "observedGeneration"):
        return RolloutState(False, False, "Waiting for daemon set spec update to be observed...")
    desired = _int(status, "desiredNumberScheduled")
    updated = _int(status, "updatedNumberScheduled")
    available = _int(status, "numberAvailable")
    prefix = f'Waiting for daemon set "{name}" rollout to finish: '
    if updated < desired:
        return RolloutState(False, False, f"{prefix}{updated} out of {desired} new pods have been updated...")
    if available < desired:
        return RolloutState(False, False, f"{prefix}{available} of {desired} updated pods are available...")
    return RolloutState(True, False, f'daemon set "{name}" successfully rolled out')


def workload_state(*, kind: str, obj: Mapping[str, Any]) -> RolloutState:
    """`kubectl rollout status`'s verdict for any of the three kinds."""
    if kind == "statefulset":
        return statefulset_state(statefulset=obj)
    if kind == "daemonset":
        return daemonset_state(daemonset=obj)
    return rollout_state(deployment=obj)


def select_statefulset_pods(
    *, statefulset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], containers: Sequence[str] = ()
) -> PodSelection:
    """Pods at the StatefulSet's update revision (`controller-revision-hash`); ordinals below a
    partition stay on the old revision on purpose and are not this rollout's pods."""
    meta = _dict(statefulset, "metadata")
    label = f"statefulset {_str(meta, 'name')}"
    revision = _str(_dict(statefulset, "status"), "updateRevision")
    if not revision:
        return PodSelection("", "", "", (), (f"{label}: has no update revision yet",))
    replicas, partition = _replicas(statefulset), _partition(statefulset)
    first = _start_ordinal(statefulset) + partition
    prefix = f"{_str(meta, 'name')}-"
    # only ordinals at or above the partition are this rollout's: the ones below may sit at the
    # update revision too (a fresh StatefulSet), but a partition says they need not
    targets = tuple(
        t
        for t in _pods_of(
            pods,
            owner_uid=_str(meta, "uid"),
            label=REVISION_HASH_LABEL,
            value=revision,
            containers=containers,
        )
        if t.name.removeprefix(prefix).isdigit() and int(t.name.removeprefix(prefix)) >= first
    )
    wanted = max(0, replicas - partition)
    permanent = _unknown_containers(
        label, revision, _dict(statefulset, "spec", "template", "spec"), containers
    )
    if wanted == 0:
        permanent.append(
            f"{label}: partition {partition} leaves no pod at revision {revision}; nothing to verify"
        )
    return PodSelection(
        revision=revision,
        replicaset="",
        template_hash=revision,
        pods=targets,
        problems=_count_problem(label, wanted, len(targets), revision),
        permanent_problems=tuple(permanent),
    )


def _revision_number(rev: Mapping[str, Any]) -> int:
    return _int(rev, "revision")


def select_daemonset_pods(
    *,
    daemonset: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    containers: Sequence[str] = (),
) -> PodSelection:
    """Pods of the DaemonSet's newest ControllerRevision (its `controller-revision-hash`), one
    per node that should run it (`desiredNumberScheduled`)."""
    meta = _dict(daemonset, "metadata")
    name, uid = _str(meta, "name"), _str(meta, "uid")
    label = f"daemonset {name}"
    owned = [r for r in revisions if _owned_by(r, uid)]
    if not owned:
        return PodSelection("", "", "", (), (f"{label}: has no ControllerRevision yet",))
    newest = max(owned, key=_revision_number)
    rev_meta = _dict(newest, "metadata")
    template_hash = _str(_dict(rev_meta, "labels"), REVISION_HASH_LABEL) or _str(
        rev_meta, "name"
    ).removeprefix(f"{name}-")
    revision = str(_revision_number(newest))
    targets = _pods_of(
        pods, owner_uid=uid, label=REVISION_HASH_LABEL, value=template_hash, containers=containers
    )
    wanted = _int(_dict(daemonset, "status"), "desiredNumberScheduled")
    return PodSelection(
        revision=revision,
        replicaset=_str(rev_meta, "name"),
        template_hash=template_hash,
        pods=targets,
        problems=_count_problem(label, wanted, len(targets), revision),
        permanent_problems=tuple(
            _unknown_containers(label, revision, _dict(daemonset, "spec", "template", "spec"), containers)
        ),
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
