"""The Node object a kubelet registers (pkg/kubelet/kubelet_node_status.go initialNode and
setNodeStatus): labels, podCIDR, the Ready condition, addresses, nodeInfo, and capacity and
allocatable from `Knobs.node_cpu`, `node_memory` and `max_pods` (the kubelet's --max-pods,
110 by default) that the scheduler's NodeResourcesFit filter counts against."""

from __future__ import annotations

import hashlib
import os
import uuid

from ..knobs import Knobs
from ..storage.store import Obj, now_rfc3339
from .sandbox import pod_cidr

# a kind node's image (kindest/node, Debian 12) on this host's kernel
OS_IMAGE = "Debian GNU/Linux 12 (bookworm)"


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


_PRESSURES = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def node_info(name: str) -> Obj:
    """NodeSystemInfo complete (setNodeStatus's machineInfo and versionInfo): the official client
    requires every field. Stable per node name; the boot id is new at each start.
    kubeProxyVersion is empty: the kubelet stopped setting it in 1.31 (DisableNodeKubeProxyVersion)."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {
        "machineID": digest[:32],
        "systemUUID": str(uuid.UUID(digest[32:64])),
        "bootID": str(uuid.uuid4()),
        "kernelVersion": os.uname().release,
        "osImage": OS_IMAGE,
        "containerRuntimeVersion": "containerd://1.7.24",
        "kubeletVersion": "v1.32.4-kubesim",
        "kubeProxyVersion": "",
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


def node_object(name: str, idx: int, knobs: Knobs) -> Obj:
    return {
        "metadata": {
            "name": name,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"podCIDR": pod_cidr(idx), "podCIDRs": [pod_cidr(idx)]},
        "status": {
            "conditions": [
                *(
                    {
                        "type": kind,
                        "status": "False",
                        "reason": reason,
                        "message": message,
                        "lastHeartbeatTime": now_rfc3339(),
                        "lastTransitionTime": now_rfc3339(),
                    }
                    for kind, reason, message in _PRESSURES
                ),
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
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": node_info(name),
            "capacity": node_resources(knobs),
            "allocatable": node_resources(knobs),
        },
    }
