"""Deleting a namespace as a real cluster does (apiserver/namespace_lifecycle.py,
controllers/namespace.py): it turns Terminating, refuses new content, its objects are deleted and
its pods stopped, and only then is its finalizer removed and the namespace gone. Judged by the real
kubectl and the apiserver's wire answers."""

from __future__ import annotations

import json
import ssl
from pathlib import Path

import httpx

from tests.kubesim import Cluster
from tests.support.helpers import STOPS_ON_TERM
from tests.support.kubectl import Kubectl

# ignores SIGTERM (and so does its sleep), so it holds the namespace until its grace period ends
STUBBORN = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "stubborn", "namespace": "team"},
    "spec": {
        "terminationGracePeriodSeconds": 25,  # the window the checks below run in, under load too
        "containers": [
            {
                "name": "app",
                "image": "debian",
                "command": ["sh", "-c", "trap '' TERM; while true; do sleep 1; done"],
            }
        ],
    },
}
def _http(cluster: Cluster) -> httpx.Client:
    return httpx.Client(
        verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
        base_url=cluster.url,
    )


def _running(cluster: Cluster, ns: str, n: int) -> bool:
    pods = cluster.list("Pod", ns)
    return len(pods) == n and all((p.get("status") or {}).get("phase") == "Running" for p in pods)


def test_a_deleted_namespace_terminates_its_contents_then_goes(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "namespace", "team")
    (tmp_path / "pod.json").write_text(json.dumps(STUBBORN))
    kubectl("apply", "-f", str(tmp_path / "pod.json"))
    kubectl("create", "deployment", "web", "-n", "team", "--image=debian", "--replicas=2", "--", *STOPS_ON_TERM)
    kubectl("create", "configmap", "cfg", "-n", "team", "--from-literal=a=1")
    cluster.wait_for(lambda: _running(cluster, "team", 3), timeout=60, what="3 pods running in team")

    with _http(cluster) as http:
        r = http.delete("/api/v1/namespaces/team")
        assert r.status_code == 200
        ns = r.json()
        assert ns["kind"] == "Namespace" and ns["status"]["phase"] == "Terminating"
        assert ns["metadata"]["deletionTimestamp"] and ns["spec"]["finalizers"] == ["kubernetes"]
        # NamespaceLifecycle: nothing new while it terminates
        r = http.post("/api/v1/namespaces/team/configmaps", json={"metadata": {"name": "late"}})
        assert r.status_code == 403
        assert r.json()["details"]["causes"][0]["reason"] == "NamespaceTerminating"

    assert "Terminating" in kubectl("get", "namespace", "team")
    proc = kubectl.run("create", "configmap", "late", "-n", "team", "--from-literal=a=1", check=False)
    assert proc.stderr.strip() == (
        'error: failed to create configmap: configmaps "late" is forbidden: unable to create new content '
        "in namespace team because it is being terminated"
    )
    # the deployment, its pods and the configmap go; the stubborn pod holds the namespace meanwhile
    cluster.wait_for(
        lambda: [p["metadata"]["name"] for p in cluster.list("Pod", "team")] == ["stubborn"],
        timeout=60,
        what="only the stubborn pod left",
    )
    assert cluster.list("Deployment", "team") == [] and cluster.list("ConfigMap", "team") == []
    stubborn = cluster.get("Pod", "stubborn", "team")
    assert stubborn is not None and stubborn["metadata"]["deletionTimestamp"]

    def remaining() -> str:
        ns = cluster.get("Namespace", "team") or {}
        conds = {c["type"]: c for c in (ns.get("status") or {}).get("conditions") or []}
        c = conds.get("NamespaceContentRemaining") or {}
        return str(c.get("message", "")) if c.get("status") == "True" else ""

    cluster.wait_for(lambda: "pods. has 1 resource instances" in remaining(), what="the remaining condition")
    assert remaining().startswith("Some resources are remaining: ")

    kubectl("wait", "--for=delete", "namespace/team", "--timeout=90s")
    assert cluster.list("Pod", "team") == []
    assert kubectl.run("get", "namespace", "team", check=False).returncode == 1


def test_kubectl_delete_namespace_waits_until_it_is_gone(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "quick")
    kubectl("create", "deployment", "web", "-n", "quick", "--image=debian", "--", *STOPS_ON_TERM)
    cluster.wait_for(lambda: _running(cluster, "quick", 1), timeout=60, what="a pod running in quick")
    assert kubectl("delete", "namespace", "quick", timeout=120).strip() == 'namespace "quick" deleted'
    assert cluster.get("Namespace", "quick") is None and cluster.list("Pod", "quick") == []


def test_the_default_namespace_may_not_be_deleted(kubectl: Kubectl) -> None:
    proc = kubectl.run("delete", "namespace", "default", check=False)
    assert proc.returncode == 1
    assert 'namespaces "default" is forbidden: this namespace may not be deleted' in proc.stderr
    assert "Active" in kubectl("get", "namespace", "default")
