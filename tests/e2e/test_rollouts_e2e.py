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
from tests.support.helpers import REPO, deployment, run_verify, secret, seen
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
    stable = run_verify(
        "--rollout", "web", "--revision", "stable", "--expect-env", "FEATURE_CREDENTIAL",
        kubeconfig=kubeconfig, tmp_path=tmp_path / "stable",
    )  # fmt: skip
    assert stable.code == 1 and inspected(stable) == sorted(
        ro.pods_by_hash(kubectl, "web")[paused["stableRS"]]
    )
    assert "rollout web: inspecting 2 pods of revision 1" in stable.stderr
    assert writes(cluster) == 0

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

    # a later run on the same revision (found by --selector, as Rollouts are) whose check fails
    # again: the record says it was restarted
    cluster.inject(Fault("status", status=503, match="^create pods/exec$", times=10**6))
    again = run_verify(
        "--selector", "app=web", "--expect-env", "FEATURE_CREDENTIAL", "--exec-timeout", "1s", "--timeout", "60s",
        kubeconfig=kubeconfig, tmp_path=tmp_path / "2",
    )  # fmt: skip
    assert again.code == 1, again.everything
    assert "already restarted this revision" in again.stderr
    assert again.report is not None and [w["kind"] for w in again.report["workloads"]] == ["rollout"]
    assert cluster.requests[("patch", "rollouts")] == 1


EXAMPLES = REPO / "examples" / "argo-rollouts"


def with_the_examples(cluster: Cluster, kubectl: Kubectl, rollout_file: str) -> dict[str, Any]:
    """Argo Rollouts, the example templates and their Job's RBAC, Secret web-secrets without
    FEATURE_CREDENTIAL, and the example Rollout of `rollout_file` Healthy on revision 1; its pods
    turn Ready 2 s after they start, so the analysis starts only after that."""
    ro.install(kubectl)
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    kubectl("apply", "-f", str(EXAMPLES / "analysistemplate.yaml"), "-f", str(EXAMPLES / "rbac.yaml"))
    docs = [d for d in yaml.safe_load_all((EXAMPLES / rollout_file).read_text()) if d]
    rollout = next(d for d in docs if d["kind"] == "Rollout")
    (container,) = rollout["spec"]["template"]["spec"]["containers"]
    container["readinessProbe"] = {
        "httpGet": {"path": "/", "port": 80},
        "initialDelaySeconds": 2,
        "periodSeconds": 1,
    }
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    return ro.wait_phase(kubectl, rollout["metadata"]["name"], "Healthy")


def roll(kubectl: Kubectl, name: str, revision: str) -> None:
    """A new revision (an annotation on the pod template)."""
    patch = {"spec": {"template": {"metadata": {"annotations": {"revision": revision}}}}}
    kubectl("patch", "rollout", name, "--type", "merge", "-p", json.dumps(patch))


def started(cluster: Cluster, app_label: str, old_hash: str, n: int) -> bool:
    """`n` pods of a new revision whose containers run (not yet Ready: the analysis waits)."""
    pods = [
        p
        for p in cluster.list("Pod")
        if (p["metadata"].get("labels") or {}).get("app") == app_label
        and p["metadata"]["labels"].get(ro.HASH) != old_hash
        and not p["metadata"].get("deletionTimestamp")
    ]
    running = [
        p
        for p in pods
        if all(
            "running" in (c.get("state") or {}) for c in p.get("status", {}).get("containerStatuses") or [{}]
        )
    ]
    return len(running) == n


def analysis_runs(kubectl: Kubectl) -> list[dict[str, Any]]:
    items = json.loads(kubectl("get", "analysisruns", "-o", "json"))["items"]
    return sorted(items, key=lambda r: r["metadata"]["creationTimestamp"] + r["metadata"]["name"])


def job_logs(kubectl: Kubectl, run: dict[str, Any]) -> str:
    (measurement,) = run["status"]["metricResults"][0]["measurements"]
    logs = kubectl("logs", f"job/{measurement['metadata']['job-name']}")
    seen(logs)  # the leak guard reads them: no secret value, no token, no traceback
    return logs


def test_the_example_analysis_aborts_a_canary_whose_pods_missed_the_key_and_passes_the_next_revision(
    cluster: Cluster, kubectl: Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    stable = with_the_examples(cluster, kubectl, "rollout-canary.yaml")["stableRS"]
    assert analysis_runs(kubectl) == []  # the first revision is promoted without analysis
    roll(kubectl, "web", "2")
    cluster.reset_counts()  # from here on, only the analysis could write
    ro.wait(lambda: started(cluster, "web", stable, 2), "the canary's containers to start")
    the_key_lands(cluster)  # after they started, before the analysis: they lack it

    degraded = ro.wait_phase(kubectl, "web", "Degraded", timeout=120)
    failure = 'Metric "rollout-verify" assessed Failed due to failed (1) > failureLimit (0)'
    assert degraded["message"] == (
        f"RolloutAborted: Rollout aborted update to revision 2: Step-based analysis phase error/failed: {failure}"
    )
    (run,) = analysis_runs(kubectl)
    assert run["status"]["phase"] == "Failed"
    logs = job_logs(kubectl, run)
    assert "lacks env FEATURE_CREDENTIAL" in logs
    assert f"this run is AnalysisRun {run['metadata']['name']}'s measurement: nothing is restarted" in logs
    assert "started before secret web-secrets had FEATURE_CREDENTIAL" in logs
    assert "FAILED rollout web: 2 of 2 pods failed: container app lacks env FEATURE_CREDENTIAL" in logs
    ro.wait(lambda: list(ro.pods_by_hash(kubectl, "web")) == [stable], "the canary to scale to 0")
    assert len(ro.pods_by_hash(kubectl, "web")[stable]) == 4  # aborted back to stable
    assert "restartAt" not in ro.get(kubectl, "web")["spec"] and cluster.requests[("patch", "rollouts")] == 0
    out = run_verify("--rollout", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything  # aborted: Argo's message, not a wait for the timeout
    assert f'rollout "web" is Degraded: {degraded["message"]}' in out.stdout

    roll(kubectl, "web", "3")  # a new revision with the key in place
    healthy = ro.wait_phase(kubectl, "web", "Healthy", timeout=120)
    assert healthy["stableRS"] == healthy["currentPodHash"] != stable
    first, second = analysis_runs(kubectl)
    assert (first["status"]["phase"], second["status"]["phase"]) == ("Failed", "Successful")
    assert "PASSED rollout web: 2 pods verified" in job_logs(kubectl, second)


def test_blue_green_never_promotes_a_stale_preview_and_promotes_a_verified_one(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    blue = with_the_examples(cluster, kubectl, "rollout-bluegreen.yaml")["stableRS"]
    roll(kubectl, "checkout", "2")
    ro.wait(lambda: started(cluster, "checkout", blue, 2), "the preview's containers to start")
    the_key_lands(cluster)

    degraded = ro.wait_phase(kubectl, "checkout", "Degraded", timeout=120)
    assert "Blue/green pre-promotion analysis phase error/failed" in degraded["message"]
    assert degraded["blueGreen"]["activeSelector"] == blue  # the stale preview was never promoted
    active = ro.get(kubectl, "checkout-active", "service")["spec"]["selector"]
    assert active[ro.HASH] == blue
    (run,) = analysis_runs(kubectl)
    assert run["metadata"]["labels"]["rollout-type"] == "PrePromotion"
    assert "FAILED rollout checkout: 2 of 2 pods failed: container app lacks env FEATURE_CREDENTIAL" in job_logs(kubectl, run)

    roll(kubectl, "checkout", "3")
    healthy = ro.wait_phase(kubectl, "checkout", "Healthy", timeout=120)
    green = healthy["currentPodHash"]
    assert healthy["stableRS"] == healthy["blueGreen"]["activeSelector"] == green != blue
    assert ro.get(kubectl, "checkout-active", "service")["spec"]["selector"][ro.HASH] == green
    assert "PASSED rollout checkout: 2 pods verified" in job_logs(kubectl, analysis_runs(kubectl)[-1])


def test_a_workload_ref_rollout_is_verified_against_its_deployments_template(
    cluster: Cluster, kubectl: Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    ro.install(kubectl)
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": CREDENTIAL}))
    base = deployment("web", replicas=0, env_from=[{"secretRef": {"name": "web-secrets"}}])
    kubectl("apply", "-f", "-", input=yaml.safe_dump(base))
    rollout = ro.rollout("web", containers=[], replicas=2)
    del rollout["spec"]["template"]
    rollout["spec"]["workloadRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    kubectl("apply", "-f", "-", input=yaml.safe_dump(rollout))
    ro.wait_phase(kubectl, "web", "Healthy")
    out = run_verify(
        "ro/web", kubeconfig=kubeconfig, tmp_path=tmp_path
    )  # --from-spec: the template's sources
    assert out.code == 0, out.everything
    assert "PASSED rollout web: 2 pods verified" in out.stdout
    checks = [
        c["target"]
        for p in out.report["workloads"][0]["attempts"][0]["pods"]
        for ct in p["containers"]
        for c in ct["checks"]
    ]  # type: ignore[index]
    assert "FEATURE_CREDENTIAL" in checks and "DB_URL" in checks  # from the Deployment's envFrom
