"""The kubelet's node Lease (kubernetes/kubernetes pkg/kubelet/nodelease and
staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go): `kube-node-lease/NODE`,
held by the node for 40 s (leaseDurationSeconds), owned by its Node, its renewTime (a MicroTime)
renewed every `Knobs.node_lease_renew` seconds (a quarter of the duration: 10 s)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from typing import TYPE_CHECKING

from ..storage.resources import BY_PATH
from ..storage.store import Obj

if TYPE_CHECKING:
    from ..cluster import Cluster

LEASES = BY_PATH[("coordination.k8s.io", "leases")]
NODES = BY_PATH[("", "nodes")]
NAMESPACE = "kube-node-lease"
DURATION = 40


def micro_now() -> str:
    """metav1.MicroTime as JSON: RFC 3339 with microseconds."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def renew(cluster: Cluster, node: str) -> None:
    """Create the node's Lease, or renew it (the controller's ensureLease / retryUpdateLease)."""
    store = cluster.store
    found = store.find(LEASES, NAMESPACE, node)
    if found is not None:
        store.mutate(LEASES, NAMESPACE, node, lambda o: o["spec"].__setitem__("renewTime", micro_now()))
        return
    owner = store.find(NODES, "", node)
    lease: Obj = {
        "metadata": {"name": node},
        "spec": {"holderIdentity": node, "leaseDurationSeconds": DURATION, "renewTime": micro_now()},
    }
    if owner is not None:
        lease["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Node", "name": node, "uid": owner["metadata"]["uid"]}
        ]
    store.create(LEASES, NAMESPACE, lease)


async def renew_forever(cluster: Cluster, node: str) -> None:
    while True:
        with contextlib.suppress(Exception):  # a failed renewal is tried again at the next period
            renew(cluster, node)
        await asyncio.sleep(cluster.knobs.node_lease_renew)
