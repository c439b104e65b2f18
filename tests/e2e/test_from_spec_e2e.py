"""Zero-config expectations from the pod spec, secret-safe value checks and the diagnosis."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import cache_keepers, configmap, deployment, run_verify, secret
from tests.support.kubectl import Kubectl

MANIFESTS = Path(__file__).parent.parent / "manifests"
PLANTED = "planted-S3CRET-value-9c1d"


def assert_no_secret(text: str) -> None:
    assert PLANTED not in text
    for v in (PLANTED, PLANTED + "-rotated"):
        assert hashlib.sha256(v.encode()).hexdigest()[:12] not in text


def test_first_seed_without_expectations_finds_stale_nodes_and_says_a_restart_cannot_help(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    kubectl("create", "-f", str(MANIFESTS / "cm-test.yaml"))
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    cache_keepers(cluster, "testcm", ["node-1", "node-2", "node-3"])
    cluster.add_node("node-4")
    kubectl("delete", "cm", "testcm")
    kubectl(
        "apply", "-f", "-", input=(MANIFESTS / "cm-test.yaml").read_text().replace("content7", "content8")
    )
    kubectl("rollout", "restart", "deployment", "cm-test")
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    cluster.reset_counts()

    out = run_verify("--deployment", "cm-test", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    # judged before any restart: a rolling restart cannot get past the nodes' cached copies
    assert cluster.requests[("patch", "deployments")] == 0
    assert out.report is not None and out.report["restarted"] is False
    assert out.report["message"].startswith("a restart cannot fix this: ")
    (last,) = out.report["workloads"][0]["attempts"]
    stale = {p["node"] for p in last["pods"] if p["status"] == "mismatch"}
    fresh = {p["node"] for p in last["pods"] if p["status"] == "ok"}
    assert stale and stale <= {"node-1", "node-2", "node-3"}
    assert fresh <= {"node-4"}  # only the node that never cached the old object serves the new one
    judged = [c for p in last["pods"] for ct in p["containers"] for c in ct["checks"] if c["status"] != "ok"]
    assert judged and all(c["restart_can_fix"] is False for c in judged)
    diag = " ".join(last["diagnosis"])
    assert "configmap testcm is immutable and was recreated" in diag
    assert "a restart will not help" in diag and "new name" in diag
    for node in stale:
        assert f"{node} (" in diag
    assert "node-4" not in diag
    assert "diagnosis: deployment cm-test: configmap testcm is immutable" in out.stdout


def test_second_seed_without_expectations_restarts_once_and_passes(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-secrets"}}]))
    cluster.wait_rollout("web")
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    kubectl("delete", "pod", sorted(p["metadata"]["name"] for p in cluster.list("Pod"))[0])
    cluster.wait_rollout("web")
    cluster.reset_counts()

    out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    first = out.report["workloads"][0]["attempts"][0]
    assert sorted(p["status"] for p in first["pods"]) == ["missing", "ok"]
    assert "started before secret web-secrets had FEATURE_CREDENTIAL" in " ".join(first["diagnosis"])
    assert "a restart fixes it" in out.stderr
    assert cluster.requests[("patch", "deployments")] == 1
    assert "<testsuite" in out.junit and "web" in out.summary and "passed" in out.outputs  # all were written
    assert_no_secret(out.everything)


def test_healthy_rollout_of_every_spec_shape_has_no_false_positives(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(
        configmap(
            "app", {"LOG_LEVEL": "info", "MODE": "a", "settings.yaml": "x: 1\n", "bad-key.name": "skip"}
        )
    )
    cluster.apply(secret("creds", {"token": PLANTED, "PASSWORD": PLANTED}))
    cluster.apply(configmap("extra", {"feature.json": "{}"}))
    dep = deployment(
        "shapes",
        replicas=2,
        env_from=[
            {"configMapRef": {"name": "app"}},
            {"secretRef": {"name": "creds"}, "prefix": "DB_"},
            {"configMapRef": {"name": "absent", "optional": True}},
        ],
        env=[
            {"name": "MODE", "value": "override"},  # env beats envFrom
            {
                "name": "MISSING_OK",
                "valueFrom": {"configMapKeyRef": {"name": "app", "key": "nope", "optional": True}},
            },
            {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "EXPANDED", "value": "level=$(LOG_LEVEL)"},
        ],
        volumes=[
            {
                "name": "cfg",
                "configMap": {"name": "app", "items": [{"key": "settings.yaml", "path": "conf/app.yaml"}]},
            },
            {
                "name": "proj",
                "projected": {
                    "sources": [
                        {"configMap": {"name": "extra"}},
                        {"secret": {"name": "creds", "items": [{"key": "token", "path": "tok"}]}},
                    ]
                },
            },
            {"name": "single", "configMap": {"name": "app"}},
        ],
        mounts=[
            {"name": "cfg", "mountPath": "/etc/app"},
            {"name": "proj", "mountPath": "/var/run/proj"},
            {"name": "single", "mountPath": "/etc/settings.yaml", "subPath": "settings.yaml"},
        ],
    )
    cluster.apply(dep)
    out = run_verify("--deployment", "shapes", "--restart", "never", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None
    checks = {
        (c["type"], c["target"])
        for c in out.report["workloads"][0]["attempts"][0]["pods"][0]["containers"][0]["checks"]
    }
    assert {
        ("env", k)
        for k in ("LOG_LEVEL", "MODE", "DB_token", "DB_PASSWORD", "FROM_SECRET", "NODE", "EXPANDED")
    } <= checks
    assert ("env", "MISSING_OK") not in checks
    assert ("env", "bad-key.name") in checks  # a valid (relaxed) env name: the kubelet sets it
    assert {
        ("file", "/etc/app/conf/app.yaml"),
        ("file", "/var/run/proj/feature.json"),
        ("file", "/var/run/proj/tok"),
        ("file", "/etc/settings.yaml"),
    } <= checks
    assert_no_secret(out.everything)


def test_rotated_secret_env_value_is_a_mismatch_without_revealing_it(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("creds", {"API_KEY": PLANTED}))
    cluster.apply(deployment("web", replicas=1, env_from=[{"secretRef": {"name": "creds"}}]))
    cluster.wait_rollout("web")
    cluster.apply(secret("creds", {"API_KEY": PLANTED + "-rotated"}))
    out = run_verify("--deployment", "web", "--restart", "never", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert "env API_KEY value differs from secret creds/API_KEY" in out.stdout or "API_KEY" in out.stdout
    assert "hold an old value of API_KEY from secret creds" in out.stdout
    assert_no_secret(out.everything)


def test_subpath_mount_is_diagnosed_as_never_updating(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(configmap("app", {"settings.yaml": "v: 1\n"}))
    cluster.apply(
        deployment(
            "web",
            replicas=1,
            volumes=[{"name": "c", "configMap": {"name": "app"}}],
            mounts=[{"name": "c", "mountPath": "/etc/settings.yaml", "subPath": "settings.yaml"}],
        )
    )
    cluster.wait_rollout("web")
    cluster.apply(configmap("app", {"settings.yaml": "v: 2\n"}))
    cluster.sync_volumes()
    out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything  # the restart re-binds the file
    assert "with subPath, which never receives updates" in out.stderr


@pytest.fixture
def knobs(request: pytest.FixtureRequest) -> Knobs:
    return Knobs(sync_period=getattr(request, "param", 3.0))


# no periodic refresh: the test refreshes the volumes itself once the run has inspected every pod,
# so the run sees the old file first however slowly a loaded machine starts it
@pytest.mark.parametrize("knobs", [3600.0], indirect=True)
def test_configmap_volume_updated_just_before_passes_within_grace_without_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(configmap("app", {"app.conf": "v1"}))
    cluster.apply(
        deployment(
            "web",
            replicas=2,
            volumes=[{"name": "c", "configMap": {"name": "app"}}],
            mounts=[{"name": "c", "mountPath": "/etc/app"}],
        )
    )
    cluster.wait_rollout("web")
    cluster.apply(configmap("app", {"app.conf": "v2"}))
    cluster.reset_counts()

    def refresh_once_both_pods_were_inspected() -> None:
        deadline = time.monotonic() + 60
        # both execs sent and answered (in_flight counts open exec streams): each read the old file
        while (cluster.requests[("create", "pods/exec")] < 2 or cluster.in_flight) and time.monotonic() < deadline:
            time.sleep(0.05)
        cluster.sync_volumes()

    refresher = threading.Thread(target=refresh_once_both_pods_were_inspected, daemon=True)
    refresher.start()
    out = run_verify("--deployment", "web", "--volume-grace", "30s", kubeconfig=kubeconfig, tmp_path=tmp_path)
    refresher.join(timeout=5)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is False
    assert "wait for a volume refresh" in out.stderr
    assert cluster.requests[("patch", "deployments")] == 0
