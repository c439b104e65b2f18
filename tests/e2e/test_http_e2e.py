"""--expect-http end to end: each pod through the API server's pod proxy, never the Service.

The second seed's trap: the Service's `/health` answered 200 while one of two pods lacked
FEATURE_CREDENTIAL. The app here (tests/kubesim/apps/configapp.py) reports only whether keys
are present, never their values."""

from __future__ import annotations

from pathlib import Path

from tests.kubesim import Cluster, Rule
from tests.support.helpers import (
    configmap,
    http_app_deployment,
    run_verify,
    secret,
    service,
    since_first_request,
)
from tests.support.kubectl import Kubectl

PLANTED = "s3cr3t-http-planted-77b0"


def web_with_stale_pod(cluster: Cluster, kubectl: Kubectl, **extra: object) -> str:
    """`web` (2 pods of configapp) whose Secret gains FEATURE_CREDENTIAL after the pods
    started; one pod is replaced and sees it. Returns the stale pod's name."""
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    cluster.apply(
        http_app_deployment(
            "web",
            replicas=2,
            env_from=[{"secretRef": {"name": "web-secrets"}}],
            **extra,  # type: ignore[arg-type]
        )
    )
    cluster.apply(service("web"))
    cluster.wait_rollout("web")
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    first, second = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))
    kubectl("delete", "pod", first)
    cluster.wait_rollout("web")
    return second


def test_service_health_passes_but_each_pod_check_finds_the_stale_pod(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    stale = web_with_stale_pod(cluster, kubectl, required_env=["FEATURE_CREDENTIAL"])
    # what a load-balancer check sees: green, every time
    for _ in range(10):
        assert (
            kubectl("get", "--raw", "/api/v1/namespaces/default/services/web:80/proxy/health").strip() == "ok"
        )
    # the shallow check through each pod passes too: that is the trap
    shallow = run_verify(
        "--deployment",
        "web",
        "--no-from-spec",
        "--expect-http",
        "8080/health",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert shallow.code == 0, shallow.everything
    cluster.reset_counts()

    out = run_verify(
        "--deployment",
        "web",
        "--no-from-spec",
        "--expect-http",
        "8080/config",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    assert f"deployment web: pod {stale} (node-" in out.stderr
    assert "http 8080/config answered HTTP 503, expected 200" in out.stderr
    assert out.report is not None
    pods = {p["name"]: p for p in out.report["workloads"][0]["attempts"][0]["pods"]}
    assert pods[stale]["status"] == "mismatch"
    assert [p["status"] for name, p in pods.items() if name != stale] == ["ok"]
    assert pods[stale]["checks"] == [
        {
            "type": "http",
            "target": "8080/config",
            "status": "mismatch",
            "detail": "answered HTTP 503, expected 200",
            # --no-from-spec and no env/file expectations: nothing shows the pod's config is stale
            "restart_can_fix": False,
            "why": f"nothing tells whether pod {stale}'s configuration is stale (no env or file "
            "expectations): a restart may not change its answer to 8080/config",
        }
    ]
    assert cluster.requests[("get", "pods/proxy")] == 2  # one call per pod, no exec needed
    assert cluster.requests[("create", "pods/exec")] == 0
    assert f"{stale}/http 8080/config" in out.junit
    assert PLANTED not in out.everything


def test_http_mismatch_gets_the_one_restart_and_then_passes(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    web_with_stale_pod(cluster, kubectl, required_env=["FEATURE_CREDENTIAL"])
    cluster.reset_counts()
    out = run_verify(
        "--deployment", "web", "--expect-http", "8080/config", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    assert cluster.requests[("patch", "deployments")] == 1
    # from-spec ran alongside: the env check found the same pod
    assert "lacks env FEATURE_CREDENTIAL" in out.stderr
    assert PLANTED not in out.everything


def test_json_fields_compare_with_literals_and_configmap_values(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(configmap("web-release", {"version": "42"}))
    stale = web_with_stale_pod(cluster, kubectl, env=[{"name": "CONFIG_VERSION", "value": "41"}])
    config = tmp_path / "verify.yaml"
    config.write_text(
        "targets:\n"
        "  - target: deployment/web\n"
        "    from-spec: false\n"
        "    restart: never\n"
        "    expect-http:\n"
        "      - {port: 8080, path: /config, json: {field: feature_credential, equals: true}}\n"
        "      - {port: 8080, path: /config, json: {field: config_version, equals-configmap: web-release/version}}\n"
    )
    out = run_verify("--config", str(config), kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert f"pod {stale} (node-" in out.stderr
    assert "http 8080/config JSON field feature_credential is false, expected true" in out.stderr
    assert (
        'http 8080/config JSON field config_version is "41", expected "42" (configmap web-release/version)'
        in out.stderr
    )
    assert out.report is not None
    statuses = sorted(p["status"] for p in out.report["workloads"][0]["attempts"][0]["pods"])
    assert statuses == ["mismatch", "mismatch"]  # both pods run version 41; only one lacks the key


def test_a_port_nothing_listens_on_is_uninspectable_not_a_pass(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(http_app_deployment("web", replicas=1))
    cluster.wait_rollout("web")
    out = run_verify(
        "--deployment",
        "web",
        "--no-from-spec",
        "--expect-http",
        "9999/health",
        "--exec-timeout",
        "2s",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    assert out.report is not None
    (pod,) = out.report["workloads"][0]["attempts"][0]["pods"]
    assert pod["status"] == "uninspectable"
    assert "cannot be checked on http 9999/health: port 9999 unreachable through the pod proxy" in out.stderr
    assert "connection refused" in out.stderr


def test_missing_pods_proxy_permission_fails_at_once_without_a_restart(
    cluster: Cluster, tmp_path: Path
) -> None:
    # without access reviews the proxy's own 403 names the rule (the preflight would name it first)
    cluster.knobs.access_reviews = False
    cluster.apply(http_app_deployment("web", replicas=1))
    cluster.wait_rollout("web")
    token = cluster.add_user(
        "system:serviceaccount:default:verifier",
        [
            Rule.of(["get", "list", "watch", "patch"], ["deployments", "replicasets"], "apps"),
            Rule.of(["get", "list", "watch"], ["pods"]),
        ],
    )
    kc = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token=token, user="verifier")
    out = run_verify(
        "--deployment",
        "web",
        "--no-from-spec",
        "--expect-http",
        "8080/health",
        kubeconfig=kc,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    assert "missing RBAC rule `get pods/proxy`" in out.stderr
    assert cluster.requests[("patch", "deployments")] == 0


def test_an_answer_that_never_ends_is_cut_at_the_exec_timeout(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(http_app_deployment("web", replicas=1))
    cluster.wait_rollout("web")
    cluster.mark()
    out = run_verify(
        "--deployment",
        "web",
        "--no-from-spec",
        "--expect-http",
        "8080/trickle",
        "--exec-timeout",
        "2s",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    elapsed = since_first_request(cluster)
    assert out.code == 1, out.everything
    # timed from the first request, not the spawn a loaded machine stretches: the wait, the 2 s
    # check, the reports and the exit (an answer read to its end would take the 10-minute --timeout)
    assert elapsed < 2 + 5, elapsed
    assert out.report is not None
    (pod,) = out.report["workloads"][0]["attempts"][0]["pods"]
    assert pod["status"] == "uninspectable"


def test_a_pod_deleted_as_its_http_check_runs_is_replaced_and_checked_without_a_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(http_app_deployment("web", replicas=2))
    cluster.wait_rollout("web")
    victim = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))[0]
    cluster.knobs.delete_during_proxy.add(victim)
    cluster.reset_counts()
    out = run_verify(
        "--deployment",
        "web",
        "--no-from-spec",
        "--expect-http",
        "8080/health",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert cluster.injected["proxy-delete"] == 1
    assert out.code == 0, out.everything
    assert (
        f"{victim} was deleted during inspection; inspecting the rollout's pods again without a restart"
        in (out.stderr)
    )
    assert cluster.requests[("patch", "deployments")] == 0
    assert out.report is not None and out.report["restarted"] is False
    first, second = out.report["workloads"][0]["attempts"]
    assert {p["name"]: p["status"] for p in first["pods"]}[victim] == "uninspectable"
    assert victim not in {p["name"] for p in second["pods"]} and len(second["pods"]) == 2


def test_execs_and_http_checks_share_one_concurrency_budget(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(http_app_deployment("web", replicas=6, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    cluster.knobs.exec_latency = 0.3
    cluster.knobs.api_latency = 0.05
    cluster.reset_counts()
    try:
        out = run_verify(
            "--deployment",
            "web",
            "--expect-env",
            "A",
            "--expect-http",
            "8080/config",
            "--concurrency",
            "3",
            kubeconfig=kubeconfig,
            tmp_path=tmp_path,
        )
    finally:
        cluster.knobs.exec_latency = 0.0
        cluster.knobs.api_latency = 0.0
    assert out.code == 0, out.everything
    assert cluster.requests[("create", "pods/exec")] == 6 and cluster.requests[("get", "pods/proxy")] == 6
    assert cluster.peak_in_flight == 3  # execs and HTTP checks together, never more
