"""Exactly the pods of the new revision: owned by the current ReplicaSet (Deployment) or at the
update/newest ControllerRevision (StatefulSet, DaemonSet), never old, terminating or finished
ones, and whether their number is what the rollout promised. Pure: JSON lists in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verify.findings import PodTarget
from verify.flow import argo_rollout, rollout_status
from verify.kube import objects
from verify.kube.names import REVISION_ANNOTATION, REVISION_HASH_LABEL, TEMPLATE_HASH_LABEL
from verify.kube.objects import integer, mapping, text


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
    # the pod template the pods were made from, when it is not the workload's (a Rollout's stable
    # revision): what they are judged against
    template: Mapping[str, Any] | None = None


def _unknown_containers(
    label: str, revision: str, template_spec: Mapping[str, Any], wanted: Sequence[str]
) -> list[str]:
    """Requested containers the template lacks: a restart cannot add them."""
    names = objects.container_names(template_spec)
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
        pod_meta = mapping(pod, "metadata")
        if pod_meta.get("deletionTimestamp"):
            continue
        if text(mapping(pod, "status"), "phase") in ("Failed", "Succeeded"):
            continue
        if not objects.owned_by(pod, owner_uid) or text(mapping(pod_meta, "labels"), label) != value:
            continue
        pod_spec = mapping(pod, "spec")
        names = objects.container_names(pod_spec)
        if containers:
            names = [c for c in names if c in containers]
        targets.append(
            PodTarget(
                name=text(pod_meta, "name"),
                node=text(pod_spec, "nodeName"),
                containers=tuple(names),
                uid=text(pod_meta, "uid"),
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
    meta = mapping(deployment, "metadata")
    name = text(meta, "name")
    uid = text(meta, "uid")
    revision = text(mapping(meta, "annotations"), REVISION_ANNOTATION)
    label = f"deployment {name}"
    if not revision:
        return PodSelection("", "", "", (), (f"{label}: has no revision annotation yet",))
    current = [
        rs
        for rs in replicasets
        if objects.owned_by(rs, uid) and objects.annotations_of(rs).get(REVISION_ANNOTATION) == revision
    ]
    if not current:
        return PodSelection(revision, "", "", (), (f"{label}: no ReplicaSet for revision {revision}",))
    rs = current[0]
    rs_meta = mapping(rs, "metadata")
    template_hash = text(mapping(rs_meta, "labels"), TEMPLATE_HASH_LABEL)
    template_spec = mapping(rs, "spec", "template", "spec") or mapping(deployment, "spec", "template", "spec")
    targets = _pods_of(
        pods,
        owner_uid=text(rs_meta, "uid"),
        label=TEMPLATE_HASH_LABEL,
        value=template_hash,
        containers=containers,
    )
    return PodSelection(
        revision=revision,
        replicaset=text(rs_meta, "name"),
        template_hash=template_hash,
        pods=targets,
        problems=_count_problem(label, objects.replicas(deployment), len(targets), revision),
        permanent_problems=tuple(_unknown_containers(label, revision, template_spec, containers)),
    )


def select_statefulset_pods(
    *, statefulset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], containers: Sequence[str] = ()
) -> PodSelection:
    """Pods at the StatefulSet's update revision (`controller-revision-hash`); ordinals below a
    partition stay on the old revision on purpose and are not this rollout's pods."""
    meta = mapping(statefulset, "metadata")
    label = f"statefulset {text(meta, 'name')}"
    revision = text(mapping(statefulset, "status"), "updateRevision")
    if not revision:
        return PodSelection("", "", "", (), (f"{label}: has no update revision yet",))
    replicas, partition = objects.replicas(statefulset), rollout_status.partition(statefulset)
    first = rollout_status.start_ordinal(statefulset) + partition
    prefix = f"{text(meta, 'name')}-"
    # only ordinals at or above the partition are this rollout's: the ones below may sit at the
    # update revision too (a fresh StatefulSet), but a partition says they need not
    targets = tuple(
        t
        for t in _pods_of(
            pods,
            owner_uid=text(meta, "uid"),
            label=REVISION_HASH_LABEL,
            value=revision,
            containers=containers,
        )
        if t.name.removeprefix(prefix).isdigit() and int(t.name.removeprefix(prefix)) >= first
    )
    wanted = max(0, replicas - partition)
    permanent = _unknown_containers(
        label, revision, mapping(statefulset, "spec", "template", "spec"), containers
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
    return integer(rev, "revision")


def select_daemonset_pods(
    *,
    daemonset: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    containers: Sequence[str] = (),
) -> PodSelection:
    """Pods of the DaemonSet's newest ControllerRevision (its `controller-revision-hash`), one
    per node that should run it (`desiredNumberScheduled`)."""
    meta = mapping(daemonset, "metadata")
    name, uid = text(meta, "name"), text(meta, "uid")
    label = f"daemonset {name}"
    owned = [r for r in revisions if objects.owned_by(r, uid)]
    if not owned:
        return PodSelection("", "", "", (), (f"{label}: has no ControllerRevision yet",))
    newest = max(owned, key=_revision_number)
    rev_meta = mapping(newest, "metadata")
    template_hash = text(mapping(rev_meta, "labels"), REVISION_HASH_LABEL) or text(
        rev_meta, "name"
    ).removeprefix(f"{name}-")
    revision = str(_revision_number(newest))
    targets = _pods_of(
        pods, owner_uid=uid, label=REVISION_HASH_LABEL, value=template_hash, containers=containers
    )
    wanted = integer(mapping(daemonset, "status"), "desiredNumberScheduled")
    return PodSelection(
        revision=revision,
        replicaset=text(rev_meta, "name"),
        template_hash=template_hash,
        pods=targets,
        problems=_count_problem(label, wanted, len(targets), revision),
        permanent_problems=tuple(
            _unknown_containers(label, revision, mapping(daemonset, "spec", "template", "spec"), containers)
        ),
    )


def select_rollout_pods(
    *,
    rollout: Mapping[str, Any],
    replicasets: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    containers: Sequence[str] = (),
    revision: str = "latest",
) -> PodSelection:
    """Pods of an Argo Rollout's latest revision (status.currentPodHash) or of its stable one
    (status.stableRS): owned by the Rollout's ReplicaSet of that `rollouts-pod-template-hash`, as
    many as the current step wants of it (the ReplicaSet's replicas: a paused canary's share, a
    preview's, or all of them once promoted)."""
    meta, status = mapping(rollout, "metadata"), mapping(rollout, "status")
    label = f"rollout {text(meta, 'name')}"
    wanted_hash = text(status, "stableRS" if revision == "stable" else "currentPodHash")
    if not wanted_hash:
        return PodSelection("", "", "", (), (f"{label}: has no {revision} revision yet",))
    owned = [
        rs
        for rs in replicasets
        if objects.owned_by(rs, text(meta, "uid"))
        and objects.labels_of(rs).get(argo_rollout.HASH_LABEL) == wanted_hash
    ]
    if not owned:
        return PodSelection(
            "", "", wanted_hash, (), (f"{label}: no ReplicaSet for its {revision} revision {wanted_hash}",)
        )
    rs = owned[0]
    rs_meta = mapping(rs, "metadata")
    number = objects.annotations_of(rs).get(argo_rollout.REVISION_ANNOTATION) or wanted_hash
    targets = _pods_of(
        pods,
        owner_uid=text(rs_meta, "uid"),
        label=argo_rollout.HASH_LABEL,
        value=wanted_hash,
        containers=containers,
    )
    wanted = integer(mapping(rs, "spec"), "replicas")
    permanent = _unknown_containers(label, number, mapping(rs, "spec", "template", "spec"), containers)
    if wanted == 0:
        permanent.append(
            f"{label}: its current step wants no pod of revision {number} yet; nothing to verify"
        )
    return PodSelection(
        revision=number,
        replicaset=text(rs_meta, "name"),
        template_hash=wanted_hash,
        pods=targets,
        problems=_count_problem(label, wanted, len(targets), number),
        permanent_problems=tuple(permanent),
        template=mapping(rs, "spec", "template"),
    )
