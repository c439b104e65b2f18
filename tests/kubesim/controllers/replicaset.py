"""The ReplicaSet controller: as many active pods as replicas, and the RS status. The same loop is
the ReplicationController manager (kubernetes/kubernetes pkg/controller/replication: a
ReplicaSet controller over the core kind, whose selector is a plain label map)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import TYPE_CHECKING

from ..record import Recorder, object_ref
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH, Resource
from ..storage.store import Obj, now_rfc3339
from .podcontrol import PodControl
from .podutil import controller_ref, has_owner_ref, is_active, is_ready, parse_time
from .refmanager import claim

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
RS = BY_PATH[("apps", "replicasets")]
RC = BY_PATH[("", "replicationcontrollers")]


class ReplicaSetController:
    def __init__(self, cluster: Cluster, res: Resource = RS) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.rng = cluster.rng
        self.res = res
        # replica_set.go: "SuccessfulCreate" "Created pod: NAME", "SuccessfulDelete" "Deleted pod: NAME"
        self.events = Recorder(self.store, "replicaset-controller" if res is RS else "replication-controller")
        self.pods = PodControl(self.store, self.events)

    def reconcile(self, ns: str, name: str) -> None:
        rs = self.store.find(self.res, ns, name)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return
        if self.res is RC:  # a ReplicaSet's view of it: the map is its selector's matchLabels
            rs = {**rs, "spec": {**rs["spec"], "selector": {"matchLabels": rs["spec"].get("selector") or {}}}}
        # FilterActivePods, then claimPods: adopt matching orphans, release what no longer matches
        active = claim(self.store, PODS, rs, [p for p in self.store.list(PODS, ns) if is_active(p)])
        want = int(rs["spec"].get("replicas", 1))
        conditions = list((rs.get("status") or {}).get("conditions") or [])
        if len(active) < want and not self.pods.may_create(rs):
            pass  # the last refusal's back-off lasts: nothing changes
        elif len(active) < want:
            refused = None
            for _ in range(want - len(active)):
                made = self._create_pod(rs)
                if isinstance(made, ApiError):
                    refused = made  # slowStartBatch: the rest is not sent
                    break
            conditions = _replica_failure(conditions, refused)
        else:
            conditions = _replica_failure(conditions, None)
        if len(active) > want:

            def rank(p: Obj) -> tuple[int, int, int, str]:
                return (
                    0 if not p["spec"].get("nodeName") else 1,
                    0 if (p.get("status") or {}).get("phase") == "Pending" else 1,
                    0 if not is_ready(p) else 1,
                    # newest first
                    "".join(chr(255 - ord(c)) for c in p["metadata"]["creationTimestamp"]),
                )

            for p in sorted(active, key=rank)[: len(active) - want]:
                self.cluster.delete_object(
                    PODS, ns, p["metadata"]["name"], grace=None, propagation="Background"
                )
                self.events.event(
                    object_ref(rs, kind=rs["kind"], api_version=rs["apiVersion"]),
                    "Normal",
                    "SuccessfulDelete",
                    f"Deleted pod: {p['metadata']['name']}",
                )
        active = [p for p in self.store.list(PODS, ns) if has_owner_ref(p, rs) and is_active(p)]
        ready = [p for p in active if is_ready(p)]
        min_ready = int(rs["spec"].get("minReadySeconds", 0))
        now = dt.datetime.now(dt.UTC)
        available = [p for p in ready if min_ready == 0 or self._ready_since(p, now) >= min_ready]
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": len(active),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
        if conditions:
            status["conditions"] = conditions
        self.store.mutate(self.res, ns, name, lambda o: o.__setitem__("status", status), status=True)

    @staticmethod
    def _ready_since(p: Obj, now: dt.datetime) -> float:
        for c in (p.get("status") or {}).get("conditions") or []:
            if c.get("type") == "Ready" and c.get("lastTransitionTime"):
                return (now - parse_time(c["lastTransitionTime"])).total_seconds()
        return 0.0

    def _create_pod(self, rs: Obj) -> Obj | ApiError:
        tpl = copy.deepcopy(rs["spec"]["template"])
        meta = tpl.setdefault("metadata", {})
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": f"{rs['metadata']['name']}-",
                "labels": meta.get("labels") or {},
                "annotations": meta.get("annotations") or {},
                "ownerReferences": [controller_ref(rs)],
            },
            "spec": tpl.get("spec") or {},
            "status": {"phase": "Pending", "qosClass": "BestEffort"},
        }
        if not pod["metadata"]["annotations"]:
            del pod["metadata"]["annotations"]
        return self.pods.create(rs, pod)


def _replica_failure(conditions: list[Obj], refused: ApiError | None) -> list[Obj]:
    """replica_set_utils.go calculateStatus: a refused create sets `ReplicaFailure`
    (FailedCreate, the API's message) unless one is set; a sync without error removes it."""
    has = any(c.get("type") == "ReplicaFailure" for c in conditions)
    if refused is not None and not has:
        return [
            *conditions,
            {
                "type": "ReplicaFailure",
                "status": "True",
                "lastTransitionTime": now_rfc3339(),
                "reason": "FailedCreate",
                "message": refused.message,
            },
        ]
    if refused is None and has:
        return [c for c in conditions if c.get("type") != "ReplicaFailure"]
    return conditions
