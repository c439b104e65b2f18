"""The scheduler's filters (controllers/filters.py after pkg/scheduler/framework/plugins
noderesources/fit.go, nodeports, interpodaffinity, volumebinding, nodeunschedulable) and the
FitError text of framework/types.go, judged by the real kubectl: a pod that fits nowhere stays
Pending with `FailedScheduling` and the upstream message, and is bound once room appears."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import deployment
from tests.support.kubectl import Kubectl


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0, node_cpu="2", node_memory="4Gi", max_pods=4)


def pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": spec.pop("labels", {"app": name})},
        "spec": {"containers": [container], **spec},
    }


def scheduled(cluster: Cluster, name: str) -> dict[str, Any]:
    p = cluster.get("Pod", name) or {}
    return next(
        (c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"), {}
    )


def unschedulable(cluster: Cluster, name: str) -> str:
    cluster.wait_for(
        lambda: scheduled(cluster, name).get("status") == "False", timeout=30, what=f"{name} unschedulable"
    )
    cond = scheduled(cluster, name)
    assert cond["reason"] == "Unschedulable"
    return str(cond["message"])


def test_requests_beyond_every_nodes_allocatable_fail_with_the_upstream_fit_error(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(pod("big", container={"resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}))
    message = unschedulable(cluster, "big")
    assert message == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.."
    )
    events = kubectl("get", "events", "--field-selector", "involvedObject.name=big,reason=FailedScheduling")
    assert "3 Insufficient cpu" in events
    described = kubectl("describe", "pod", "big")
    assert "FailedScheduling" in described and "default-scheduler" in described
    assert "Pending" in kubectl("get", "pod", "big")


def test_requests_add_up_on_a_node_and_a_limit_alone_counts_as_the_request(cluster: Cluster) -> None:
    # 3 nodes x 2 cpu: three 1500m pods take one node each; a fourth fits nowhere
    for i in range(3):
        cluster.apply(pod(f"half{i}", container={"resources": {"limits": {"cpu": "1500m", "memory": "1Gi"}}}))
    cluster.wait_for(
        lambda: all(scheduled(cluster, f"half{i}").get("status") == "True" for i in range(3)), what="bound"
    )
    nodes = {(cluster.get("Pod", f"half{i}") or {})["spec"]["nodeName"] for i in range(3)}
    assert len(nodes) == 3
    cluster.apply(pod("more", container={"resources": {"requests": {"cpu": "600m", "memory": "5Gi"}}}))
    assert unschedulable(cluster, "more").startswith(
        "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. preemption:"
    )
    cluster.delete("Pod", "half1")  # room appears once it is gone (its grace period): the scheduler tries again
    cluster.apply(pod("fits", container={"resources": {"requests": {"cpu": "600m"}}}))
    cluster.wait_for(
        lambda: scheduled(cluster, "fits").get("status") == "True", timeout=90, what="fits bound"
    )


def test_max_pods_per_node_is_too_many_pods(cluster: Cluster) -> None:
    cluster.apply(deployment("many", replicas=12, command=["sleep", "3600"]))
    cluster.wait_for(
        lambda: sum(1 for p in cluster.list("Pod") if p["spec"].get("nodeName")) == 12,
        timeout=60,
        what="12 bound",
    )
    cluster.apply(pod("thirteenth"))
    assert unschedulable(cluster, "thirteenth") == (
        "0/3 nodes are available: 3 Too many pods. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.."
    )


def test_a_host_port_in_use_on_every_node_blocks_the_next_pod(cluster: Cluster) -> None:
    ports = {"ports": [{"containerPort": 8080, "hostPort": 8080}]}
    for i in range(3):
        cluster.apply(pod(f"hp{i}", container=ports))
    cluster.wait_for(
        lambda: all(scheduled(cluster, f"hp{i}").get("status") == "True" for i in range(3)), what="bound"
    )
    assert len({(cluster.get("Pod", f"hp{i}") or {})["spec"]["nodeName"] for i in range(3)}) == 3
    cluster.apply(pod("hp3", container=ports))
    assert unschedulable(cluster, "hp3").startswith(
        "0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports. preemption:"
    )


def test_required_pod_anti_affinity_spreads_replicas_and_leaves_the_fourth_pending(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "spread"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    spread = deployment("spread", replicas=4, command=["sleep", "3600"])
    spread["spec"]["template"]["spec"]["affinity"] = anti
    cluster.apply(spread)
    cluster.wait_for(
        lambda: sum(1 for p in cluster.list("Pod") if p["spec"].get("nodeName")) == 3,
        timeout=60,
        what="3 bound",
    )
    pending = [p["metadata"]["name"] for p in cluster.list("Pod") if not p["spec"].get("nodeName")]
    assert len(pending) == 1
    assert unschedulable(cluster, pending[0]) == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: "
        "0/3 nodes are available: 3 No preemption victims found for incoming pod.."
    )
    nodes = [p["spec"]["nodeName"] for p in cluster.list("Pod") if p["spec"].get("nodeName")]
    assert len(set(nodes)) == 3
    out = kubectl.run("rollout", "status", "deployment/spread", "--timeout=2s", check=False)
    assert out.returncode != 0


def test_a_missing_claim_and_a_cordoned_node_give_their_own_reasons(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    vol = [{"name": "data", "persistentVolumeClaim": {"claimName": "nope"}}]
    cluster.apply(pod("claims", volumes=vol))
    assert unschedulable(cluster, "claims") == (
        '0/3 nodes are available: persistentvolumeclaim "nope" not found. preemption: 0/3 nodes are '
        "available: 3 No preemption victims found for incoming pod.."
    )
    for n in ("node-1", "node-2"):
        kubectl("cordon", n)
    cluster.apply(pod("picky", nodeSelector={"kubernetes.io/hostname": "node-2"}))
    cluster.apply(pod("greedy", container={"resources": {"requests": {"cpu": "4"}}}))
    assert unschedulable(cluster, "picky") == (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) were "
        "unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."
    )
    assert unschedulable(cluster, "greedy") == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable. preemption: 0/3 nodes "
        "are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for "
        "scheduling.."
    )
    kubectl("uncordon", "node-2")
    cluster.wait_for(
        lambda: scheduled(cluster, "picky").get("status") == "True", timeout=30, what="picky bound"
    )
    shown = json.loads(kubectl("get", "pod", "picky", "-o", "json"))
    assert shown["spec"]["nodeName"] == "node-2"


def test_a_pod_bound_by_node_name_past_the_nodes_room_is_rejected_by_the_kubelet(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    """No scheduler checks a pod created with spec.nodeName: the kubelet's admission does
    (lifecycle/predicate.go), and the pod fails without ever starting."""
    cluster.apply(pod("pinned", nodeName="node-1", container={"resources": {"requests": {"cpu": "64"}}}))
    cluster.wait_for(
        lambda: ((cluster.get("Pod", "pinned") or {}).get("status") or {}).get("phase") == "Failed",
        timeout=30,
        what="rejected",
    )
    st = json.loads(kubectl("get", "pod", "pinned", "-o", "json"))["status"]
    assert st["reason"] == "OutOfcpu"
    assert st["message"] == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 64000, used: 0, capacity: 2000"
    )
    assert not st.get("containerStatuses")
    assert kubectl("get", "pod", "pinned", "--no-headers").split()[2] == "OutOfcpu"
    assert "OutOfcpu" in kubectl("events", "--for=pod/pinned")
    cluster.apply(pod("fits", nodeName="node-1", container={"resources": {"requests": {"cpu": "1"}}}))
    cluster.wait_for(
        lambda: ((cluster.get("Pod", "fits") or {}).get("status") or {}).get("phase") == "Running",
        timeout=60,
        what="fits running",
    )


def test_topology_spread_counts_a_cordoned_nodes_domain_and_needs_its_key(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    """The classic: maxSkew 1 over hostnames with one node cordoned leaves the third replica
    Pending (the cordoned node's empty domain still counts); a key the nodes lack fits nowhere."""
    kubectl("cordon", "node-3")
    spread = deployment("spread", replicas=3, command=["sleep", "3600"])
    spread["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "spread"}},
        }
    ]
    cluster.apply(spread)
    cluster.wait_for(
        lambda: sum(1 for p in cluster.list("Pod") if p["spec"].get("nodeName")) == 2,
        timeout=60,
        what="2 bound",
    )
    (pending,) = [p["metadata"]["name"] for p in cluster.list("Pod") if not p["spec"].get("nodeName")]
    assert unschedulable(cluster, pending) == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match pod topology spread "
        "constraints. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
        "preemption victims found for incoming pod.."
    )
    kubectl("uncordon", "node-3")
    cluster.wait_for(lambda: scheduled(cluster, pending).get("status") == "True", timeout=30, what="bound")
    assert (cluster.get("Pod", pending) or {})["spec"]["nodeName"] == "node-3"
    zoned = pod(
        "zoned",
        topologySpreadConstraints=[
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "zoned"}},
            }
        ],
    )
    cluster.apply(zoned)
    assert unschedulable(cluster, "zoned").startswith(
        "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints (missing required label)."
    )


def test_scheduling_gates_hold_a_pod_until_removed_and_another_schedulers_pods_are_left_alone(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(pod("gated", schedulingGates=[{"name": "example.com/quota"}]))
    cluster.apply(pod("custom", schedulerName="my-scheduler"))
    cluster.wait_for(
        lambda: scheduled(cluster, "gated").get("reason") == "SchedulingGated",
        timeout=30,
        what="SchedulingGated",
    )
    assert scheduled(cluster, "gated")["message"] == "Scheduling is blocked due to non-empty scheduling gates"
    assert kubectl("get", "pod", "gated", "--no-headers").split()[2] == "SchedulingGated"
    kubectl("patch", "pod", "gated", "--type=json", "-p", '[{"op":"remove","path":"/spec/schedulingGates"}]')
    cluster.wait_for(
        lambda: scheduled(cluster, "gated").get("status") == "True", timeout=30, what="gated bound"
    )
    custom = cluster.get("Pod", "custom") or {}
    assert not custom["spec"].get("nodeName") and not scheduled(cluster, "custom")
    assert "FailedScheduling" not in kubectl("events", "--for=pod/custom")
