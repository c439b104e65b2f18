"""Argo Rollouts end to end on kubesim (its Rollouts controller, the real kubectl, the real CLI;
the `kubectl argo rollouts` plugin's patches sent as it sends them): a paused canary's pods are
verified before its promotion and never restarted, a Healthy Rollout is restarted as the plugin
restarts it (spec.restartAt) once per revision, and the example AnalysisTemplate stops a canary
or a blue-green preview whose pods started before their Secret had the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.kubesim import Cluster, Fault
from tests.support import rollouts as ro
from tests.support.helpers import deployment, run_verify, secret
from tests.support.kubectl import Kubectl

CREDENTIAL = "rollouts-credential-planted-4c1e"
WRITES = ("create", "update", "patch", "delete", "deletecollection")


def writes(cluster: Cluster) -> int:
    """Write requests kubesim served, but the reviews the preflight asks (a POST that stores
    nothing) and the execs."""
    return sum(
        n
        for (verb, resource), n in cluster.requests.counts.items()
        if verb in WRITES and resource not in ("pods/exec", "selfsubjectaccessreviews")
    )


def app(revision: str) -> list[dict[str, Any]]:
    """busybox with env from Secret web-secrets, REVISION telling the templates apart."""
    d = deployment(
        "web",
        env=[{"name": "REVISION", "value": revision}],
        env_from=[{"secretRef": {"name": "web-secrets"}}],
    )
    return list(d["spec"]["template"]["spec"]["containers"])


def healthy_canary(cluster: Cluster, kubectl: Kubectl, **strategy: Any) -> dict[str, Any]:
    """Rollout web (4 replicas, canary [setWeight: 50, pause: {}] unless given) Healthy on
    revision 1, its Secret without FEATURE_CREDENTIAL."""
    ro.install(kubectl)
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    kubectl("apply", "-f", "-", input=yaml.safe_dump(ro.rollout("web", containers=app("1"), **strategy)))
    return ro.wait_phase(kubectl, "web", "Healthy")


def new_revision(kubectl: Kubectl, revision: str) -> None:
    patch = {"spec": {"template": {"spec": {"containers": app(revision)}}}}
    kubectl("patch", "rollout", "web", "--type", "merge", "-p", json.dumps(patch))


def the_key_lands(cluster: Cluster) -> None:
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": CREDENTIAL}))


def inspected(out: Any) -> list[str]:
    assert out.report is not None, out.everything
    return sorted(p["name"] for p in out.report["workloads"][0]["attempts"][-1]["pods"])


def test_a_paused_canary_is_verified_on_its_new_pods_only_never_restarted_then_promoted(
    cluster: Cluster, kubectl: Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    healthy_canary(cluster, kubectl)
    new_revision(kubectl, "2")
    paused = ro.wait_phase(kubectl, "web", "Paused")
    canary = sorted(ro.pods_by_hash(kubectl, "web")[paused["currentPodHash"]])
    assert len(canary) == 2 and len(ro.pods_by_hash(kubectl, "web")[paused["stableRS"]]) == 2
    the_key_lands(cluster)  # after the canary's pods started: they lack it
    cluster.reset_counts()

    out = run_verify(
        "--rollout", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 1, out.everything
    assert inspected(out) == canary  # the latest revision's pods, not the stable ones
    assert "rollout web: inspecting 2 pods of revision 2" in out.stderr
    assert "lacks env FEATURE_CREDENTIAL" in out.stderr
    assert (
        "rollout web is at step 2/2 (pause): not restarted (spec.restartAt would evict its stable pods too)"
        in out.stderr
    )
    assert writes(cluster) == 0 and "restartAt" not in ro.get(kubectl, "web")["spec"]
    assert out.report is not None and out.report["workloads"][0]["kind"] == "rollout"

    ro.promote(kubectl, "web")
    done = ro.wait_phase(kubectl, "web", "Healthy")
    assert done["stableRS"] == paused["currentPodHash"]
    ro.wait(lambda: list(ro.pods_by_hash(kubectl, "web")) == [done["stableRS"]], "the stable pods to go")
    assert len(ro.pods_by_hash(kubectl, "web")[done["stableRS"]]) == 4


def test_a_healthy_rollout_is_restarted_once_through_restart_at_and_never_again(
    cluster: Cluster, kubectl: Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    first = healthy_canary(cluster, kubectl)
    before = set(ro.pods_by_hash(kubectl, "web")[first["currentPodHash"]])
    the_key_lands(cluster)  # the second seed: every pod started before the Secret had it
    cluster.reset_counts()

    out = run_verify(
        "--rollout",
        "web",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path / "1",
    )
    assert out.code == 0, out.everything
    assert cluster.requests[("patch", "rollouts")] == 1
    assert "PASSED rollout web: 4 pods verified after 1 restart" in out.stdout
    rollout = ro.get(kubectl, "web")
    assert rollout["status"]["restartedAt"] == rollout["spec"]["restartAt"]  # as the plugin's restart
    assert rollout["status"]["currentPodHash"] == first["currentPodHash"]  # no new revision
    assert not before & set(inspected(out))  # every pod verified is a new one

    # a later run on the same revision whose check fails again: the record says it was restarted
    cluster.inject(Fault("status", status=503, match="^create pods/exec$", times=10**6))
    again = run_verify(
        "--rollout", "web", "--expect-env", "FEATURE_CREDENTIAL", "--exec-timeout", "2s", "--timeout", "60s",
        kubeconfig=kubeconfig, tmp_path=tmp_path / "2",
    )  # fmt: skip
    assert again.code == 1, again.everything
    assert "already restarted this revision" in again.stderr
    assert cluster.requests[("patch", "rollouts")] == 1
