"""Where a rollout stands, exactly as `kubectl rollout status` judges it: its Deployment,
StatefulSet and DaemonSet status viewers (kubectl polymorphichelpers/rollout_status.go), message
texts included. Pure: the workload's JSON in, a RolloutState out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verify.flow import argo_rollout
from verify.kube import objects
from verify.kube.objects import integer, items, mapping, text

ROLLING_UPDATE = "RollingUpdate"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"


@dataclass(frozen=True)
class RolloutState:
    """Where a rollout stands: `done` and `failed` are never both true."""

    done: bool
    failed: bool
    message: str


def rollout_state(*, deployment: Mapping[str, Any]) -> RolloutState:
    """kubectl's rollout-status verdict for one Deployment, message text included."""
    meta = mapping(deployment, "metadata")
    status = mapping(deployment, "status")
    name = text(meta, "name")
    if integer(meta, "generation") > integer(status, "observedGeneration"):
        return RolloutState(False, False, "Waiting for deployment spec update to be observed...")
    for cond in items(status, "conditions"):
        if (
            isinstance(cond, Mapping)
            and cond.get("type") == "Progressing"
            and cond.get("reason") == TIMED_OUT_REASON
        ):
            return RolloutState(False, True, f'deployment "{name}" exceeded its progress deadline')
    wanted = objects.replicas(deployment)
    updated = integer(status, "updatedReplicas")
    total = integer(status, "replicas")
    available = integer(status, "availableReplicas")
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


def partition(statefulset: Mapping[str, Any]) -> int:
    rolling = mapping(statefulset, "spec", "updateStrategy", "rollingUpdate")
    return max(0, integer(rolling, "partition"))


def start_ordinal(statefulset: Mapping[str, Any]) -> int:
    """`spec.ordinals.start`: pods are named from it, while a partition counts replica indexes
    (ordinal - start), as the StatefulSet controller's update loop does."""
    return max(0, integer(mapping(statefulset, "spec", "ordinals"), "start"))


def statefulset_state(*, statefulset: Mapping[str, Any]) -> RolloutState:
    """kubectl's StatefulSetStatusViewer, message text included."""
    meta = mapping(statefulset, "metadata")
    spec = mapping(statefulset, "spec")
    status = mapping(statefulset, "status")
    strategy = mapping(spec, "updateStrategy")
    if (text(strategy, "type") or ROLLING_UPDATE) != ROLLING_UPDATE:
        return RolloutState(
            False, True, f"rollout status is only available for {ROLLING_UPDATE} strategy type"
        )
    observed = integer(status, "observedGeneration")
    if observed == 0 or integer(meta, "generation") > observed:
        return RolloutState(False, False, "Waiting for statefulset spec update to be observed...")
    replicas = objects.replicas(statefulset)
    ready = integer(status, "readyReplicas")
    if ready < replicas:
        return RolloutState(False, False, f"Waiting for {replicas - ready} pods to be ready...")
    updated = integer(status, "updatedReplicas")
    if isinstance(strategy.get("rollingUpdate"), Mapping):
        wanted = replicas - partition(statefulset)
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
    current, update = text(status, "currentRevision"), text(status, "updateRevision")
    if update != current:
        return RolloutState(
            False,
            False,
            f"waiting for statefulset rolling update to complete {updated} pods at revision {update}...",
        )
    return RolloutState(
        True,
        False,
        f"statefulset rolling update complete {integer(status, 'currentReplicas')} pods "
        f"at revision {current}...",
    )


def daemonset_state(*, daemonset: Mapping[str, Any]) -> RolloutState:
    """kubectl's DaemonSetStatusViewer, message text included."""
    meta = mapping(daemonset, "metadata")
    status = mapping(daemonset, "status")
    name = text(meta, "name")
    if (text(mapping(daemonset, "spec", "updateStrategy"), "type") or ROLLING_UPDATE) != ROLLING_UPDATE:
        return RolloutState(
            False, True, f"rollout status is only available for {ROLLING_UPDATE} strategy type"
        )
    if integer(meta, "generation") > integer(status, "observedGeneration"):
        return RolloutState(False, False, "Waiting for daemon set spec update to be observed...")
    desired = integer(status, "desiredNumberScheduled")
    updated = integer(status, "updatedNumberScheduled")
    available = integer(status, "numberAvailable")
    prefix = f'Waiting for daemon set "{name}" rollout to finish: '
    if updated < desired:
        return RolloutState(False, False, f"{prefix}{updated} out of {desired} new pods have been updated...")
    if available < desired:
        return RolloutState(False, False, f"{prefix}{available} of {desired} updated pods are available...")
    return RolloutState(True, False, f'daemon set "{name}" successfully rolled out')


def workload_state(*, kind: str, obj: Mapping[str, Any]) -> RolloutState:
    """`kubectl rollout status`'s verdict for the three kinds; Argo's own for a Rollout."""
    if kind == "rollout":
        return RolloutState(*argo_rollout.rollout_state(rollout=obj))
    if kind == "statefulset":
        return statefulset_state(statefulset=obj)
    if kind == "daemonset":
        return daemonset_state(daemonset=obj)
    return rollout_state(deployment=obj)
