"""The Node object a kubelet registers (pkg/kubelet/kubelet_node_status.go initialNode and
setNodeStatus): labels, podCIDR, the Ready condition, addresses, nodeInfo, and capacity and
allocatable from `Knobs.node_cpu`, `node_memory` and `max_pods` (the kubelet's --max-pods,
110 by default) that the scheduler's NodeResourcesFit filter counts against."""

from __future__ import annotations

from ..knobs import Knobs
from ..storage.store import Obj, now_rfc3339
from .sandbox import pod_cidr


def node_resources(knobs: Knobs) -> dict[str, str]:
    """capacity = allocatable (no system or kube reserved)."""
    return {
        "cpu": knobs.node_cpu,
        "ephemeral-storage": "100Gi",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": knobs.node_memory,
        "pods": str(knobs.max_pods),
    }


def node_object(name: str, idx: int, knobs: Knobs) -> Obj:
    return {
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
        },
        "spec": {"podCIDR": pod_cidr(idx), "podCIDRs": [pod_cidr(idx)]},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": now_rfc3339(),
                    "lastTransitionTime": now_rfc3339(),
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"172.18.0.{idx + 1}"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.32.4-kubesim",
                "containerRuntimeVersion": "containerd://1.7.24",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "capacity": node_resources(knobs),
            "allocatable": node_resources(knobs),
        },
    }
