"""What a fresh kind cluster has before anyone writes to it, as clients nobody here wrote see it: the
bootstrap ClusterRoles and bindings (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go),
`/readyz?verbose`, nodes with a complete nodeInfo and Services with a status (the official
Python client lists both), the kube-system pods, images as registries serve them (any tag of a
known repository; nginx's own welcome page; python runs python), and `serve --audit-log`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import REPO
from tests.support.kubectl import Kubectl


def _can(kubectl: Kubectl, who: str, *what: str) -> str:
    return kubectl.run("auth", "can-i", *what, f"--as={who}", check=False).stdout.strip()


def test_the_bootstrap_cluster_roles_grant_what_they_do_on_a_cluster(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    names = set(kubectl("get", "clusterroles", "-o", "name").split())
    for role in (
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:basic-user",
        "system:discovery",
        "system:node",
    ):
        assert f"clusterrole.rbac.authorization.k8s.io/{role}" in names
    bindings = kubectl("get", "clusterrolebindings", "-o", "wide")
    assert any(
        line.split()[:2] == ["cluster-admin", "ClusterRole/cluster-admin"] for line in bindings.splitlines()
    )
    view = json.loads(kubectl("get", "clusterrole", "view", "-o", "json"))
    assert view["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
    assert view["aggregationRule"]["clusterRoleSelectors"] == [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}
    ]
    reader, editor = "system:serviceaccount:default:reader", "system:serviceaccount:default:editor"
    kubectl("create", "rolebinding", "read", "--clusterrole=view", "--serviceaccount=default:reader")
    kubectl("create", "rolebinding", "write", "--clusterrole=edit", "--serviceaccount=default:editor")
    assert _can(kubectl, reader, "list", "pods") == "yes"
    assert _can(kubectl, reader, "get", "deployments.apps") == "yes"
    assert _can(kubectl, reader, "get", "secrets") == "no"  # view leaves Secrets out
    assert _can(kubectl, reader, "create", "pods") == "no"
    assert (
        _can(kubectl, reader, "list", "pods", "-n", "kube-system") == "no"
    )  # a RoleBinding: its namespace only
    assert _can(kubectl, editor, "create", "deployments.apps") == "yes"
    assert _can(kubectl, editor, "create", "pods/eviction") == "yes"
    assert _can(kubectl, editor, "create", "rolebindings.rbac.authorization.k8s.io") == "no"  # admin's
    # a role labelled for aggregation joins view (the aggregation controller), so the reader gains it
    extra = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": "secret-reader",
            "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"},
        },
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
    }
    kubectl("apply", "-f", "-", input=json.dumps(extra))
    cluster.wait_for(lambda: _can(kubectl, reader, "get", "secrets") == "yes", timeout=20, what="aggregated")
    assert _can(kubectl, editor, "get", "secrets") == "yes"  # edit aggregates view (and had it already)


def test_health_endpoints_list_their_checks_when_verbose(kubectl: Kubectl) -> None:
    ready = kubectl("get", "--raw", "/readyz?verbose")
    lines = ready.splitlines()
    assert lines[0] == "[+]ping ok" and lines[-1] == "readyz check passed"
    assert {
        "[+]etcd ok",
        "[+]informer-sync ok",
        "[+]poststarthook/rbac/bootstrap-roles ok",
        "[+]shutdown ok",
    } <= set(lines)
    assert kubectl("get", "--raw", "/livez?verbose").splitlines()[-1] == "livez check passed"
    assert "[+]shutdown ok" not in kubectl("get", "--raw", "/livez?verbose")
    assert "[+]etcd excluded: ok" in kubectl("get", "--raw", "/readyz?verbose&exclude=etcd")
    assert kubectl("get", "--raw", "/readyz/etcd") == "ok"
    assert kubectl("get", "--raw", "/healthz") == "ok"


def test_the_official_client_lists_nodes_and_services_with_their_status(
    cluster: Cluster, kubeconfig: str
) -> None:
    from kubernetes import client, config

    api = client.CoreV1Api(config.new_client_from_config(kubeconfig))
    nodes = api.list_node().items
    assert len(nodes) == 3
    for node in nodes:
        info = node.status.node_info
        for field in (
            "boot_id",
            "machine_id",
            "system_uuid",
            "kernel_version",
            "os_image",
            "kubelet_version",
        ):
            assert getattr(info, field), field
        assert info.kube_proxy_version is not None
        assert {c.type for c in node.status.conditions} == {
            "MemoryPressure",
            "DiskPressure",
            "PIDPressure",
            "Ready",
        }
    assert len({n.status.node_info.machine_id for n in nodes}) == 3
    services = api.list_service_for_all_namespaces().items
    assert services and all(s.status.load_balancer is not None for s in services)


def test_kube_system_runs_the_pods_a_kind_cluster_shows(tmp_path: Path) -> None:
    with Cluster(nodes=2, knobs=Knobs(system_pods=True), root=str(tmp_path / "kubesim")) as cluster:
        kubectl = Kubectl(cluster.write_kubeconfig(tmp_path / "kc"), tmp_path)

        def running() -> list[str]:
            pods = cluster.list("Pod", "kube-system")
            return [p["metadata"]["name"] for p in pods if (p.get("status") or {}).get("phase") == "Running"]

        # the four static pods, coredns' two, kube-proxy and kindnet on each of the two nodes
        cluster.wait_for(lambda: len(running()) == 10, timeout=60, what="kube-system running")
        statics = {
            "etcd-node-1",
            "kube-apiserver-node-1",
            "kube-controller-manager-node-1",
            "kube-scheduler-node-1",
        }
        assert statics <= set(running())
        cluster.wait_rollout("coredns", "kube-system", timeout=60)
        shown = kubectl("get", "pods", "-n", "kube-system")
        assert shown.count("Running") == 4 + 2 + 2 * 2, shown
        mirror = json.loads(kubectl("get", "pod", "etcd-node-1", "-n", "kube-system", "-o", "json"))
        assert mirror["metadata"]["ownerReferences"][0]["kind"] == "Node"
        assert mirror["metadata"]["annotations"]["kubernetes.io/config.source"] == "file"
        assert mirror["spec"]["priority"] == 2000001000
        assert kubectl("get", "nodes").splitlines()[1].split()[:3] == ["node-1", "Ready", "control-plane"]
        assert "10.96.0.10" in kubectl("get", "service", "kube-dns", "-n", "kube-system")


def _pod_answer(cluster: Cluster, kubectl: Kubectl, name: str, path: str) -> subprocess.CompletedProcess[str]:
    return kubectl.run("get", "--raw", f"/api/v1/namespaces/default/pods/{name}:80/proxy{path}", check=False)


def test_any_tag_of_a_known_image_pulls_and_the_stand_ins_behave_as_the_images(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    marker = Path("/tmp") / f"kubesim-host-file-{os.getpid()}"  # a host file nginx must never list
    marker.write_text("host")
    try:
        kubectl("run", "web", "--image=nginx:1.21.4", "--port=80")
        kubectl(
            "run", "py", "--image=python:3.12-slim", "--restart=Never", "--", "python", "-c", "print(6 * 7)"
        )
        kubectl("wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
        cluster.wait_for(
            lambda: (cluster.get("Pod", "py") or {}).get("status", {}).get("phase") == "Succeeded",
            timeout=60,
            what="py",
        )
        assert kubectl("logs", "py").strip() == "42"
        page = _pod_answer(cluster, kubectl, "web", "/")
        assert "<title>Welcome to nginx!</title>" in page.stdout and marker.name not in page.stdout
        missing = _pod_answer(cluster, kubectl, "web", f"/{marker.name}")
        assert (
            missing.returncode != 0 and "NotFound" in missing.stderr
        )  # 404: the image's root, not the host's /tmp
        assert kubectl("exec", "web", "--", "ls", "/usr/share/nginx/html").split() == [
            "50x.html",
            "index.html",
        ]
    finally:
        marker.unlink()


def test_serve_writes_one_audit_line_per_request(tmp_path: Path) -> None:
    audit, kc = tmp_path / "audit.log", tmp_path / "kc"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.kubesim", "serve", "--kubeconfig", str(kc), "--nodes", "1",
         "--no-system-pods", "--audit-log", str(audit)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and "kubesim ready" in proc.stdout.readline()
        kubectl = Kubectl(str(kc), tmp_path)
        for _ in range(3):
            kubectl("get", "pods", "-n", "default")
        kubectl.run("get", "pod", "nope", check=False)
        deadline = time.monotonic() + 10
        events: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            events = [json.loads(line) for line in audit.read_text().splitlines()]
            if any(e["responseStatus"]["code"] == 404 for e in events):
                break
            time.sleep(0.05)
        lists = [
            e
            for e in events
            if e["verb"] == "list" and e["requestURI"] == "/api/v1/namespaces/default/pods?limit=500"
        ]
        assert len(lists) == 3
        first = lists[0]
        assert (
            first["kind"] == "Event"
            and first["apiVersion"] == "audit.k8s.io/v1"
            and first["stage"] == "ResponseComplete"
        )
        assert first["user"]["username"] == "kubernetes-admin" and first["responseStatus"]["code"] == 200
        assert first["objectRef"] == {"resource": "pods", "namespace": "default", "apiVersion": "v1"}
        assert float(first["annotations"]["kubesim.local/latency"]) >= 0
        assert first["userAgent"].startswith("kubectl/")
        got = [e for e in events if e["verb"] == "get" and e.get("objectRef", {}).get("name") == "nope"]
        assert [e["responseStatus"]["code"] for e in got] == [404]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0)
