"""StatefulSets and DaemonSets end to end: kubectl's rollout conditions, pods of the current
revision only, restart once, several kinds in one run, with the least-privilege Role."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.kubesim import Cluster
from tests.support.helpers import REPO, daemonset, deployment, run_verify, secret, statefulset
from tests.support.kubectl import KUBECTL, Kubectl

PLANTED = "s3cr3t-workloads-planted-5d2a"


def pods_of(cluster: Cluster, app: str) -> list[dict[str, Any]]:
    return sorted(
        (
            p
            for p in cluster.list("Pod")
            if (p["metadata"].get("labels") or {}).get("app") == app
            and not p["metadata"].get("deletionTimestamp")
        ),
        key=lambda p: p["metadata"]["name"],
    )


def inspected(out: Any, name: str) -> list[dict[str, Any]]:
    wl = next(w for w in out.report["workloads"] if w["name"] == name)
    return list(wl["attempts"][-1]["pods"])


def test_partitioned_statefulset_verifies_only_the_updated_ordinals_and_agrees_with_kubectl(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    sts = statefulset(
        "db",
        replicas=3,
        env=[{"name": "CONFIG_VERSION", "value": "1"}],
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
    )
    cluster.apply(sts)
    cluster.wait_statefulset("db")
    kubectl("set", "env", "statefulset/db", "CONFIG_VERSION=2")
    # kubectl's own wait and ours, side by side on the same object
    status = subprocess.Popen(
        [KUBECTL, "--kubeconfig", kubeconfig, "rollout", "status", "statefulset/db", "--timeout=60s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = run_verify("--target", "sts/db", kubeconfig=kubeconfig, tmp_path=tmp_path)
    stdout, _ = status.communicate(timeout=60)
    assert status.returncode == 0 and "partitioned roll out complete: 1 new pods have been updated" in stdout
    assert out.code == 0, out.everything
    update = (cluster.get("StatefulSet", "db") or {})["status"]["updateRevision"]
    assert [p["name"] for p in inspected(out, "db")] == ["db-2"]
    assert out.report is not None and out.report["workloads"][0]["attempts"][0]["revision"] == update
    labels = {
        p["metadata"]["name"]: p["metadata"]["labels"]["controller-revision-hash"]
        for p in pods_of(cluster, "db")
    }
    assert labels["db-2"] == update and labels["db-0"] != update and labels["db-1"] != update
    # from the spec: the updated pod's env value is the new one, compared without printing it
    checks = inspected(out, "db")[0]["containers"][0]["checks"]
    assert {"type": "env", "target": "CONFIG_VERSION", "status": "ok", "detail": ""} in checks


def test_daemonset_over_three_nodes_verifies_one_pod_per_node_and_restarts_once(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(secret("agent-secrets", {"DB_URL": "postgres://x"}))
    cluster.apply(daemonset("agent", env_from=[{"secretRef": {"name": "agent-secrets"}}]))
    cluster.wait_daemonset("agent")
    # the key is synced after the pods started; one pod is replaced and sees it
    cluster.apply(secret("agent-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    kubectl("delete", "pod", pods_of(cluster, "agent")[0]["metadata"]["name"], "--wait=false")
    cluster.wait_for(lambda: len(pods_of(cluster, "agent")) == 3 and cluster.daemonset_complete("agent"))
    assert "successfully rolled out" in kubectl("rollout", "status", "ds/agent", "--timeout=30s")
    cluster.reset_counts()

    out = run_verify(
        "--target",
        "daemonset/agent",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    first, second = out.report["workloads"][0]["attempts"]
    assert sorted(p["status"] for p in first["pods"]) == ["missing", "missing", "ok"]
    assert sorted(p["node"] for p in second["pods"]) == ["node-1", "node-2", "node-3"]
    assert {p["status"] for p in second["pods"]} == {"ok"}
    assert cluster.requests[("patch", "daemonsets")] == 1
    assert int(second["revision"]) == int(first["revision"]) + 1
    assert "daemonset agent: restarted (once)" in out.stderr
    assert PLANTED not in out.everything


def test_two_deployments_and_a_daemonset_in_one_run_one_failing_fails_the_run(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(secret("shared", {"DB_URL": "postgres://x"}))
    for name in ("web", "api"):
        cluster.apply(deployment(name, replicas=2, env_from=[{"secretRef": {"name": "shared"}}]))
    cluster.apply(daemonset("agent", env_from=[{"secretRef": {"name": "shared"}}]))
    cluster.wait_rollout("web")
    cluster.wait_rollout("api")
    cluster.wait_daemonset("agent")
    cluster.apply(secret("shared", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    for name in ("web", "api"):  # the Deployments were rolled after the sync; the DaemonSet was not
        kubectl("rollout", "restart", f"deployment/{name}")
    for name in ("web", "api"):
        kubectl("rollout", "status", f"deployment/{name}", "--timeout=60s")
    cluster.reset_counts()

    out = run_verify(
        "--target",
        "deployment/web,deployment/api,daemonset/agent",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    assert out.report is not None and out.report["result"] == "failed"
    results = {(w["kind"], w["name"]): w["result"] for w in out.report["workloads"]}
    assert results == {
        ("deployment", "web"): "passed",
        ("deployment", "api"): "passed",
        ("daemonset", "agent"): "failed",
    }
    head = out.stdout.splitlines()[-1]
    # what failed leads: a passing workload said first read as a pass
    assert head.startswith("rollout-verify: FAILED daemonset agent: 3 of 3 pods failed: ")
    assert "deployment web: 2 pods verified" in head and "deployment api: 2 pods verified" in head
    assert out.junit.count("<testsuite ") == 3 and "daemonset `default/agent`" in out.summary
    assert cluster.requests.total() > 0 and cluster.requests[("patch", "daemonsets")] == 0
    assert PLANTED not in out.everything


def test_selector_picks_deployments_statefulsets_and_daemonsets_alike(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    for obj in (deployment("web", replicas=1), statefulset("db", replicas=2), daemonset("agent")):
        obj["metadata"]["labels"] = {"app.kubernetes.io/part-of": "shop"}
        cluster.apply(obj)
    cluster.apply(deployment("other", replicas=1))
    out = run_verify(
        "-l",
        "app.kubernetes.io/part-of=shop",
        "--expect-env",
        "PATH",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    assert out.report is not None
    assert [(w["kind"], w["name"], len(w["attempts"][0]["pods"])) for w in out.report["workloads"]] == [
        ("deployment", "web", 1),
        ("statefulset", "db", 2),
        ("daemonset", "agent", 3),
    ]


def test_least_privilege_roles_cover_statefulsets_daemonsets_and_the_selector(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    docs = [
        d
        for f in ("rbac.yaml", "rbac-workloads.yaml")
        for d in yaml.safe_load_all((REPO / "examples" / f).read_text())
        if d
    ]
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    # the second seed on both kinds: their pods started before Secret web-env (one the Role may
    # read) had FEATURE_CREDENTIAL, so one restart each delivers it
    cluster.apply(secret("web-env", {"DB_URL": "postgres://x"}))
    env_from = [{"secretRef": {"name": "web-env"}}]
    for obj in (statefulset("db", replicas=2, env_from=env_from), daemonset("agent", env_from=env_from)):
        obj["metadata"]["labels"] = {"tier": "data"}
        cluster.apply(obj)
    cluster.wait_statefulset("db")
    cluster.wait_daemonset("agent")
    cluster.apply(secret("web-env", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": "late-key-4d2a"}))
    token = cluster.serviceaccount_token("default", "rollout-verify")
    kc = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token=token, user="rollout-verify")
    cluster.reset_counts()
    out = run_verify(
        "--selector", "tier=data", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kc, tmp_path=tmp_path
    )
    # each workload is restarted once (the Roles allow the patch, the watch after it and the
    # revision history the record names), then passes
    assert out.code == 0, out.everything
    assert out.report is not None
    assert {(w["kind"], w["restarted"], w["result"]) for w in out.report["workloads"]} == {
        ("statefulset", True, "passed"),
        ("daemonset", True, "passed"),
    }
    assert cluster.requests[("patch", "statefulsets")] == 1 and cluster.requests[("patch", "daemonsets")] == 1
    # each record names the ControllerRevision restarted and the number its restart created
    for kind, name in (("StatefulSet", "db"), ("DaemonSet", "agent")):
        record = (cluster.get(kind, name) or {})["metadata"]["annotations"]["rollout-verify.io/restarted-for"]
        history = [r for r in cluster.list("ControllerRevision") if r["metadata"]["name"].startswith(f"{name}-")]
        first = min(history, key=lambda r: r["revision"])
        assert record.startswith(f"revision={first['metadata']['name']};next=2;"), (kind, record)
    assert "forbidden" not in out.everything
