"""Ownership by selector (controllers/refmanager.py, after controller_ref_manager.go): a pod
relabelled out of its ReplicaSet's selector is released and replaced; orphans left by
`kubectl delete --cascade=orphan` are adopted by the next ReplicaSet or Deployment that selects
them, without new pods. Judged by the real kubectl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl


def replicaset(name: str, app: str, replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "app", "image": "debian", "command": ["sleep", "infinity"]}]},
            },
        },
    }


def apply(kubectl: Kubectl, tmp_path: Path, obj: dict[str, Any]) -> None:
    path = tmp_path / f"{obj['metadata']['name']}.json"
    path.write_text(json.dumps(obj))
    kubectl("apply", "-f", str(path))


def pods(cluster: Cluster, app: str) -> list[dict[str, Any]]:
    return [p for p in cluster.list("Pod") if (p["metadata"].get("labels") or {}).get("app") == app]


def owner_uids(pod: dict[str, Any]) -> list[str]:
    return [r["uid"] for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")]


def ready(cluster: Cluster, kind: str, name: str, n: int) -> bool:
    st = (cluster.get(kind, name) or {}).get("status") or {}
    return st.get("replicas") == n and st.get("readyReplicas") == n


def test_orphans_of_a_deleted_replicaset_are_adopted_by_the_next_one(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    apply(kubectl, tmp_path, replicaset("first", "x"))
    cluster.wait_for(lambda: ready(cluster, "ReplicaSet", "first", 2), timeout=60, what="first ready")
    before = sorted(p["metadata"]["name"] for p in pods(cluster, "x"))
    assert kubectl("delete", "rs", "first", "--cascade=orphan").strip() == 'replicaset.apps "first" deleted'
    assert all(owner_uids(p) == [] for p in pods(cluster, "x"))  # orphans, still there
    assert sorted(p["metadata"]["name"] for p in pods(cluster, "x")) == before

    apply(kubectl, tmp_path, replicaset("second", "x"))
    second = cluster.get("ReplicaSet", "second")
    assert second is not None
    uid = second["metadata"]["uid"]
    cluster.wait_for(
        lambda: all(owner_uids(p) == [uid] for p in pods(cluster, "x")), what="the orphans adopted"
    )
    cluster.wait_for(lambda: ready(cluster, "ReplicaSet", "second", 2), timeout=60, what="second ready")
    # adopted, not replaced: the same two pods, nothing created
    assert sorted(p["metadata"]["name"] for p in pods(cluster, "x")) == before
    assert "SuccessfulCreate" not in kubectl("get", "events", "--field-selector=involvedObject.name=second")


def test_a_pod_relabelled_out_of_the_selector_is_released_and_replaced(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    apply(kubectl, tmp_path, replicaset("web", "y"))
    cluster.wait_for(lambda: ready(cluster, "ReplicaSet", "web", 2), timeout=60, what="web ready")
    victim = sorted(p["metadata"]["name"] for p in pods(cluster, "y"))[0]
    kubectl("label", "pod", victim, "app=debug", "--overwrite")

    def released() -> bool:
        pod = cluster.get("Pod", victim)
        return pod is not None and "ownerReferences" not in pod["metadata"]

    cluster.wait_for(released, what="the relabelled pod released")
    cluster.wait_for(lambda: ready(cluster, "ReplicaSet", "web", 2), timeout=60, what="a replacement")
    now = sorted(p["metadata"]["name"] for p in pods(cluster, "y"))
    assert victim not in now and len(now) == 2
    # the released pod keeps running, on its own
    assert kubectl("get", "pod", victim, "-o", "jsonpath={.status.phase}") == "Running"
    out = kubectl("get", "events", "--field-selector=involvedObject.name=web")
    assert out.count("SuccessfulCreate") == 3


def test_a_recreated_deployment_adopts_the_replicaset_an_orphaning_delete_left(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    create = ("create", "deployment", "web", "--image=debian", "--replicas=2", "--", "sleep", "infinity")
    kubectl(*create)
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    rs_before = [r["metadata"]["name"] for r in cluster.list("ReplicaSet")]
    pods_before = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))
    kubectl("delete", "deployment", "web", "--cascade=orphan")
    assert all(owner_uids(r) == [] for r in cluster.list("ReplicaSet"))

    kubectl(*create)
    d = cluster.get("Deployment", "web")
    assert d is not None
    uid = d["metadata"]["uid"]
    cluster.wait_for(
        lambda: [owner_uids(r) for r in cluster.list("ReplicaSet")] == [[uid]], what="the replicaset adopted"
    )
    assert "successfully rolled out" in kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert [r["metadata"]["name"] for r in cluster.list("ReplicaSet")] == rs_before
    assert sorted(p["metadata"]["name"] for p in cluster.list("Pod")) == pods_before
