"""The disruption controller (kubernetes/kubernetes pkg/controller/disruption/disruption.go
trySync, getExpectedPodCount, countHealthyPods, buildDisruptedPodMap, updatePdbStatus): each
PodDisruptionBudget's status from the pods its selector matches: expectedPods (the pods, or with
a percentage or maxUnavailable the scale of their controllers: a Deployment's replicas through
its ReplicaSet, a ReplicaSet's, StatefulSet's or ReplicationController's), desiredHealthy,
currentHealthy (ready pods not being deleted nor recorded as disrupted by an eviction),
disruptionsAllowed, observedGeneration and the DisruptionAllowed condition (SufficientPods,
InsufficientPods). An eviction's disruptedPods entry lasts until the pod goes or 2 minutes pass
(DeletionTimeout). Synced when a budget or a pod of its namespace changes."""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING, Any

from ..storage.kindindex import index_of
from ..storage.resources import BY_PATH, Resource
from ..storage.selection import labels_match, selector_from_match
from ..storage.store import Obj, now_rfc3339
from .podutil import is_ready, parse_time
from .refmanager import controller_of

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
PDBS = BY_PATH[("policy", "poddisruptionbudgets")]
DELETION_TIMEOUT = dt.timedelta(minutes=2)
_SCALES: dict[str, Resource] = {
    "ReplicaSet": BY_PATH[("apps", "replicasets")],
    "StatefulSet": BY_PATH[("apps", "statefulsets")],
    "ReplicationController": BY_PATH[("", "replicationcontrollers")],
    "Deployment": BY_PATH[("apps", "deployments")],
}


class DisruptionController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store

    def budgets_for(self, ns: str) -> list[str]:
        return [p["metadata"]["name"] for p in index_of(self.store).list(PDBS, ns)]

    def reconcile(self, ns: str, name: str) -> None:
        pdb = self.store.find(PDBS, ns, name)
        if pdb is None or pdb["metadata"].get("deletionTimestamp"):
            return
        spec = pdb.get("spec") or {}
        selector = spec.get("selector")
        pods = (
            []
            if selector is None
            else [
                p
                for p in self.store.list(PODS, ns)
                if labels_match(p["metadata"].get("labels") or {}, selector_from_match(selector))
            ]
        )
        expected, desired = self._expected(spec, pods)
        now = dt.datetime.now(dt.UTC)
        old = pdb.get("status") or {}
        disrupted: dict[str, str] = {}
        for p in pods:
            when = (old.get("disruptedPods") or {}).get(p["metadata"]["name"])
            if (
                when
                and not p["metadata"].get("deletionTimestamp")
                and parse_time(when) + DELETION_TIMEOUT > now
            ):
                disrupted[p["metadata"]["name"]] = when
        healthy = sum(
            1
            for p in pods
            if not p["metadata"].get("deletionTimestamp")
            and p["metadata"]["name"] not in disrupted
            and is_ready(p)
        )
        allowed = max(healthy - desired, 0) if expected > 0 else 0
        condition = {
            "type": "DisruptionAllowed",
            "status": "True" if allowed > 0 else "False",
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "lastTransitionTime": now_rfc3339(),
            "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
            "message": "",
        }
        for c in old.get("conditions") or []:
            if c.get("type") == "DisruptionAllowed" and c.get("status") == condition["status"]:
                condition["lastTransitionTime"] = c.get("lastTransitionTime", condition["lastTransitionTime"])
        status: dict[str, Any] = {
            "observedGeneration": pdb["metadata"].get("generation", 1),
            **({"disruptedPods": disrupted} if disrupted else {}),
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "conditions": [condition],
        }
        if status != old:
            self.store.mutate(PDBS, ns, name, lambda o: o.__setitem__("status", status), status=True)

    def _expected(self, spec: Obj, pods: list[Obj]) -> tuple[int, int]:
        """getExpectedPodCount: (expectedCount, desiredHealthy)."""
        high, low = spec.get("maxUnavailable"), spec.get("minAvailable")
        if high is not None:
            expected = self._scale(pods)
            desired = max(expected - _scaled(high, expected), 0)
            return expected, desired
        if low is not None:
            if isinstance(low, int):
                return len(pods), low
            expected = self._scale(pods)
            return expected, _scaled(low, expected)
        return len(pods), 0

    def _scale(self, pods: list[Obj]) -> int:
        """getExpectedScale: the summed scale of the pods' controllers (each counted once)."""
        seen: dict[str, int] = {}
        for p in pods:
            ref = controller_of(p)
            if ref is None:
                continue  # an unmanaged pod: upstream fails the sync ("found no controllers")
            if ref["uid"] in seen:
                continue
            seen[ref["uid"]] = self._controller_scale(p["metadata"]["namespace"], ref)
        return sum(seen.values())

    def _controller_scale(self, ns: str, ref: dict[str, Any]) -> int:
        res = _SCALES.get(ref.get("kind", ""))
        owner = None if res is None else self.store.find(res, ns, ref.get("name", ""))
        if owner is None or owner["metadata"]["uid"] != ref.get("uid"):
            return 0
        if owner["kind"] == "ReplicaSet":  # a Deployment's ReplicaSet counts as its Deployment
            parent = controller_of(owner)
            if parent is not None and parent.get("kind") == "Deployment":
                return self._controller_scale(ns, parent)
        return int((owner.get("spec") or {}).get("replicas", 1))


def _scaled(v: object, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounding up."""
    if isinstance(v, str) and v.endswith("%"):
        return math.ceil(int(v[:-1]) * total / 100)
    return int(str(v))
