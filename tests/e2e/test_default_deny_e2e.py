"""A restart is sent only for configuration the run saw to be stale: pods whose execs are refused by
anyone (the API server, a proxy, the kubelet) or whose files the container's user cannot read are
inspected again, then fail naming who refused and the status, and nothing is written. Every
deployment here also has a pod that started before its Secret gained a key, so a restart is what a
careless run would send. Writes are counted as kubesim saw them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.kubesim import Cluster, Fault
from tests.support.helpers import deployment, run_verify, secret

CREDENTIAL = "feature-credential-late-5c1f"


def late_key(
    cluster: Cluster, *names: str, replicas: int = 1, security: dict[str, Any] | None = None, **mounted: Any
) -> None:
    """Deployments whose pods started before Secret web-secrets had FEATURE_CREDENTIAL (the second
    seed): a restart would deliver it, if the run could see that it is missing."""
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    for name in names:
        obj = deployment(name, replicas=replicas, env_from=[{"secretRef": {"name": "web-secrets"}}], **mounted)
        if security:
            obj["spec"]["template"]["spec"]["securityContext"] = security
        cluster.apply(obj)
    for name in names:
        cluster.wait_rollout(name)
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": CREDENTIAL}))
    cluster.reset_counts()


def execs_of(name: str) -> str:
    """A fault's `match` for every exec into the pods of deployment `name` (the query follows)."""
    return rf"/pods/{name}-[a-z0-9]+-[a-z0-9]+/exec\?"


FOREVER = 10**6
# deployment -> the refusal every exec into its pods meets, and how the verdict must name it
REFUSALS: dict[str, tuple[Fault, str]] = {
    "api-429": (
        Fault("status", status=429, times=FOREVER),
        "exec refused by the API server (HTTP 429): the server has received too many requests",
    ),
    "api-500": (Fault("status", status=500, times=FOREVER), "exec refused by the API server (HTTP 500)"),
    "api-503": (
        Fault("status", status=503, times=FOREVER),
        "exec refused by the API server (HTTP 503): the server is currently unable to handle the request",
    ),
    "api-504": (
        Fault("status", status=504, times=FOREVER),
        "exec refused by the API server (HTTP 504): Timeout: request did not complete",
    ),
    "api-403": (
        Fault("status", status=403, times=FOREVER),
        "exec refused by the API server (HTTP 403): it was not ready to handle requests yet (pods ",
    ),
    "proxy-502": (
        Fault("status", status=502, via="proxy", times=FOREVER),
        "exec refused by a proxy in front of the API server (HTTP 502, an HTML page)",
    ),
    "proxy-408": (
        Fault("status", status=408, via="proxy", times=FOREVER),
        "exec refused by a proxy in front of the API server (HTTP 408, an HTML page)",
    ),
    "kubelet-429": (
        Fault("status", status=429, via="kubelet", times=FOREVER),
        "exec refused by the kubelet (HTTP 500): rpc error: code = ResourceExhausted desc = maximum number of "
        "in-flight requests exceeded",
    ),
    "kubelet-gone": (
        Fault(
            "status",
            status=500,
            message="error dialing backend: dial tcp 10.0.0.7:10250: connect: connection refused",
            times=FOREVER,
        ),
        "exec failed: the API server could not reach the kubelet (HTTP 500): error dialing backend",
    ),
    "upgrade-broken": (
        Fault("upgrade-broken", times=FOREVER),
        "the exec's WebSocket upgrade failed: the answer to the upgrade was no valid WebSocket handshake",
    ),
    "upgrade-ignored": (
        Fault("upgrade-ignored", times=FOREVER),
        "the exec's WebSocket upgrade failed: a proxy in front of the API server answered HTTP 200 instead "
        "of 101 Switching Protocols",
    ),
}


def test_execs_refused_by_anyone_are_inspected_again_then_fail_naming_who_refused_and_restart_nothing(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    late_key(cluster, *REFUSALS)
    for name, (fault, _) in REFUSALS.items():
        fault.match = execs_of(name)
        cluster.inject(fault)
    out = run_verify(
        "--target", ",".join(f"deployment/{n}" for n in REFUSALS), "--exec-timeout", "1s", "--timeout", "60s",
        kubeconfig=kubeconfig, tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 1, out.everything
    assert cluster.requests[("patch", "deployments")] == 0
    assert "restarting once" not in out.everything
    assert out.report is not None
    by_name = {w["name"]: w for w in out.report["workloads"]}
    for name, (_, said) in REFUSALS.items():
        wl = by_name[name]
        assert (wl["result"], wl["exit_code"], wl["restarted"]) == ("failed", 1, False), name
        (pod,) = wl["attempts"][-1]["pods"]
        (app,) = pod["containers"]
        assert app["reason"].startswith(said), (name, app["reason"])
        assert f"deployment {name}: pod {pod['name']} ({pod['node']}) container app cannot be inspected: {said}" in (
            out.stderr
        )
    # every refusal that may pass was asked again; a proxy that never passes upgrades was not
    assert "inspecting it again for up to" in out.stderr
    assert cluster.requests[("create", "pods/exec")] >= 2 * (len(REFUSALS) - 1)
    assert "not restarted: a restart is sent only for configuration seen to be stale" in out.report["message"]


def test_a_stale_pod_beside_one_that_cannot_be_inspected_is_not_restarted(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    late_key(cluster, "web", replicas=2)
    pods = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))
    blind, seen = pods
    cluster.inject(Fault("status", status=503, match=rf"/pods/{blind}/exec\?", times=FOREVER))
    out = run_verify(
        "--deployment", "web", "--exec-timeout", "1s", "--timeout", "60s", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 1, out.everything
    assert cluster.requests[("patch", "deployments")] == 0
    assert out.report is not None
    pods_seen = {p["name"]: p for p in out.report["workloads"][0]["attempts"][-1]["pods"]}
    # the stale pod is judged fixable by a restart, and is not restarted: the other was not seen
    stale = [c for c in pods_seen[seen]["containers"][0]["checks"] if c["status"] != "ok"]
    assert [(c["target"], c["status"], c["restart_can_fix"]) for c in stale] == [
        ("FEATURE_CREDENTIAL", "missing", True)
    ]
    assert pods_seen[blind]["containers"][0]["reason"].startswith("exec refused by the API server (HTTP 503)")
    assert out.report["message"].startswith("not restarted: ")
    assert f"pod {blind} container app: exec refused by the API server (HTTP 503)" in out.report["message"]


def test_a_file_the_containers_user_cannot_read_is_never_restarted_and_the_report_says_so(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("tls", {"tls.key": "tls-key-material-77e1"}))
    late_key(
        cluster,
        "web",
        # root's file, mode 0400, and a container running as 1000 without an fsGroup
        volumes=[{"name": "tls", "secret": {"secretName": "tls", "defaultMode": 0o400}}],
        mounts=[{"name": "tls", "mountPath": "/etc/tls"}],
        security={"runAsUser": 1000, "runAsGroup": 1000},
    )
    out = run_verify("--deployment", "web", "--timeout", "60s", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert cluster.requests[("patch", "deployments")] == 0
    assert out.report is not None
    checks = {
        c["target"]: c for c in out.report["workloads"][0]["attempts"][-1]["pods"][0]["containers"][0]["checks"]
    }
    unreadable = checks["/etc/tls/tls.key"]
    assert (unreadable["status"], unreadable["restart_can_fix"]) == ("uninspectable", False)
    assert unreadable["why"].startswith("exists but the exec's user cannot read it")
    assert checks["FEATURE_CREDENTIAL"]["restart_can_fix"] is True  # fixable alone, not beside it
    # the decision says what the report says
    assert out.report["message"].startswith("a restart cannot fix this: ")
    assert "/etc/tls/tls.key: exists but the exec's user cannot read it" in out.report["message"]
    assert "restarting once" not in out.everything
