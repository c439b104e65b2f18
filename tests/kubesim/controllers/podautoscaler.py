"""The HorizontalPodAutoscaler controller of a cluster without metrics-server (kubernetes/kubernetes
pkg/controller/podautoscaler/horizontal.go reconcileAutoscaler, computeReplicasForMetrics,
getUnableComputeReplicaCountCondition): kind's clusters have no metrics API, so every metric
fails and the HPA reports it as they do: AbleToScale True `SucceededGetScale`, ScalingActive False
`FailedGetResourceMetric` "the HPA was unable to compute the replica count: failed to get cpu
utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource
metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)", the
Warning events FailedGetResourceMetric and FailedComputeMetricsReplicas, `currentMetrics` of
empty entries (TARGETS `cpu: <unknown>/80%`), desiredReplicas unchanged. What needs no metric
still happens: a target scaled below minReplicas or above maxReplicas is rescaled to the bound
(SuccessfulRescale "New size: 2; reason: Current number of replicas below Spec.MinReplicas"),
one at 0 replicas disables scaling (ScalingDisabled), and a manual scale within the bounds stays.
Synced when the HPA changes and every `Knobs.hpa_sync_period` (15 s)."""

from __future__ import annotations

import copy
from collections import Counter
from typing import TYPE_CHECKING

from ..record import Recorder, object_ref
from ..storage.resources import BY_PATH, Resource
from ..storage.store import Obj, now_rfc3339
from .duetimes import DueTimes

if TYPE_CHECKING:
    from ..cluster import Cluster

HPAS = BY_PATH[("autoscaling", "horizontalpodautoscalers")]
SCALABLE: dict[str, Resource] = {
    "Deployment": BY_PATH[("apps", "deployments")],
    "ReplicaSet": BY_PATH[("apps", "replicasets")],
    "StatefulSet": BY_PATH[("apps", "statefulsets")],
    "ReplicationController": BY_PATH[("", "replicationcontrollers")],
}
NO_METRICS = {
    "Resource": (
        "FailedGetResourceMetric",
        "unable to get metrics for resource {name}: unable to fetch metrics from resource metrics API: "
        "the server could not find the requested resource (get pods.metrics.k8s.io)",
    ),
    "ContainerResource": (
        "FailedGetContainerResourceMetric",
        "unable to get metrics for resource {name}: unable to fetch metrics from resource metrics API: "
        "the server could not find the requested resource (get pods.metrics.k8s.io)",
    ),
    "Pods": (
        "FailedGetPodsMetric",
        "unable to get metric {name}: unable to fetch metrics from custom metrics API: "
        "no custom metrics API (custom.metrics.k8s.io) registered",
    ),
    "Object": (
        "FailedGetObjectMetric",
        "unable to get metric {name}: unable to fetch metrics from custom metrics API: "
        "no custom metrics API (custom.metrics.k8s.io) registered",
    ),
    "External": (
        "FailedGetExternalMetric",
        "unable to get external metric {ns}/{name}/nil: unable to fetch metrics from external metrics API: "
        "no external metrics API (external.metrics.k8s.io) registered",
    ),
}


class HorizontalController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.events = Recorder(self.store, "horizontal-pod-autoscaler")
        self.due = DueTimes()  # each HPA's next sync: every hpa_sync_period
        self.syncs: Counter[tuple[str, str]] = Counter()  # syncs so far, by HPA (tests wait on it)

    def reconcile(self, ns: str, name: str) -> None:
        self.due.cancel((ns, name))
        hpa = self.store.find(HPAS, ns, name)
        if hpa is None:
            return
        self.due.after((ns, name), self.cluster.knobs.hpa_sync_period)
        self.syncs[(ns, name)] += 1
        status = copy.deepcopy(hpa.get("status") or {})
        conditions: list[Obj] = list(status.get("conditions") or [])
        ref_obj = object_ref(hpa, kind="HorizontalPodAutoscaler", api_version="autoscaling/v2")
        spec = hpa.get("spec") or {}
        target_ref = spec.get("scaleTargetRef") or {}
        res = SCALABLE.get(target_ref.get("kind", ""))
        target = None if res is None else self.store.find(res, ns, target_ref.get("name", ""))
        if target is None:
            missing = (
                f'{res.qualified} "{target_ref.get("name", "")}" not found'
                if res is not None
                else f'no matches for kind "{target_ref.get("kind", "")}" in group "{target_ref.get("apiVersion", "")}"'
            )
            _set(
                conditions,
                "AbleToScale",
                "False",
                "FailedGetScale",
                f"the HPA controller was unable to get the target's current scale: {missing}",
            )
            self.events.event(ref_obj, "Warning", "FailedGetScale", missing)
            self._write(hpa, status, conditions)
            return
        _set(
            conditions,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        )
        current = int((target.get("spec") or {}).get("replicas", 1))
        low, high = int(spec.get("minReplicas") or 1), int(spec.get("maxReplicas") or 1)
        desired, reason, rescale = 0, "", True
        if current == 0 and low != 0:
            rescale = False
            _set(
                conditions,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
            )
        elif current > high:
            desired, reason = high, "Current number of replicas above Spec.MaxReplicas"
        elif current < low:
            desired, reason = low, "Current number of replicas below Spec.MinReplicas"
        else:
            # every metric fails without a metrics API: the first one's condition, both events
            specs = spec.get("metrics") or []
            first = ""
            for m in specs:
                kind = m.get("type", "")
                why, text = NO_METRICS.get(
                    kind, ("FailedGetResourceMetric", "unknown metric source type {name}")
                )
                src = m.get(_key(kind)) or {}
                metric = src.get("name") or (src.get("metric") or {}).get("name", "")
                err = text.format(name=metric, ns=ns)
                if kind in ("Resource", "ContainerResource"):
                    usage = (
                        "utilization" if (src.get("target") or {}).get("type") == "Utilization" else "usage"
                    )
                    err = f"failed to get {metric} {usage}: {err}"
                    wrapped = f"failed to get {metric} resource metric value: {err}"
                else:
                    wrapped = f"failed to get {kind.lower()} metric value: {err}"
                self.events.event(ref_obj, "Warning", why, err)
                if not first:
                    first = wrapped
                    _set(
                        conditions,
                        "ScalingActive",
                        "False",
                        why,
                        f"the HPA was unable to compute the replica count: {err}",
                    )
            status["currentReplicas"] = current
            status["currentMetrics"] = [{"type": ""} for _ in specs]
            self._write(hpa, status, conditions)
            self.events.event(
                ref_obj,
                "Warning",
                "FailedComputeMetricsReplicas",
                f"invalid metrics ({len(specs)} invalid out of {len(specs)}), first error is: {first}",
            )
            return
        status.pop("currentMetrics", None)  # setStatus: no metric was read
        if rescale:
            assert res is not None
            self.store.mutate(
                res, ns, target["metadata"]["name"], lambda o: o["spec"].__setitem__("replicas", desired)
            )
            _set(
                conditions,
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            self.events.event(
                ref_obj, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}"
            )
            status["lastScaleTime"] = now_rfc3339()
        else:
            desired = current
        status["currentReplicas"] = current
        status["desiredReplicas"] = desired
        self._write(hpa, status, conditions)

    def _write(self, hpa: Obj, status: Obj, conditions: list[Obj]) -> None:
        status["conditions"] = conditions
        status.setdefault("desiredReplicas", 0)
        status.setdefault("currentReplicas", 0)
        if not status.get("currentMetrics"):
            status.pop("currentMetrics", None)
        meta = hpa["metadata"]
        self.store.mutate(
            HPAS, meta["namespace"], meta["name"], lambda o: o.__setitem__("status", status), status=True
        )


def _key(kind: str) -> str:
    return kind[:1].lower() + kind[1:]


def _set(conditions: list[Obj], ctype: str, status: str, reason: str, message: str) -> None:
    """setCondition: the transition time changes only with the status."""
    for c in conditions:
        if c.get("type") == ctype:
            if c.get("status") != status:
                c["lastTransitionTime"] = now_rfc3339()
            c.update(status=status, reason=reason, message=message)
            return
    conditions.append(
        {
            "type": ctype,
            "status": status,
            "lastTransitionTime": now_rfc3339(),
            "reason": reason,
            "message": message,
        }
    )
