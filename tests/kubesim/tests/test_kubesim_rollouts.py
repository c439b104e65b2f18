"""Argo Rollouts on kubesim, judged by the real kubectl against what upstream's own e2e tests expect
(argoproj/argo-rollouts v1.9.1 test/e2e/{canary,analysis,bluegreen}_test.go): the CRDs as
published, a canary without a traffic router weighted by replicas, paused at its step and
promoted with the plugin's patch, aborted (by hand or by a failed analysis step) back to stable and
retried, an AnalysisRun's Job measurements, blue-green with prePromotionAnalysis, spec.restartAt
and a workloadRef (controllers/rollout.py, analysisrun.py, canary.py)."""

from __future__ import annotations

import datetime as dt
import json
import time

import yaml

from tests.kubesim import Cluster
from tests.kubesim.controllers import canary
from tests.support import rollouts as ro
from tests.support.helpers import deployment, service
from tests.support.kubectl import Kubectl


def sleeper(value: str) -> list[dict[str, object]]:
    return [
        {
            "name": "app",
            "image": "busybox:1.36",
            "command": ["sleep", "3600"],
            "env": [{"name": "REVISION", "value": value}],
        }
    ]


def update(kubectl: Kubectl, name: str, value: str) -> None:
    """upstream's UpdateSpec: a new pod template (a new revision)."""
    patch = {"spec": {"template": {"spec": {"containers": sleeper(value)}}}}
    kubectl("patch", "rollout", name, "--type", "merge", "-p", json.dumps(patch))


def test_replica_weights_follow_upstreams_approximation() -> None:
    # utils/replicaset/canary_test.go and the e2e tests' expected pod counts
    assert canary.approximate(4, 50, 1) == (2, 2)
    assert canary.approximate(3, 20, 1) == (1, 3)  # TestCanaryProgressDeadlineExceededWithPause
    assert canary.approximate(10, 10, 3) == (1, 9)
    assert canary.approximate(1, 50, 0) == (1, 0)  # a tie on one replica without surge: the canary
    assert canary.approximate(3, 100, 2) == (3, 0)


def test_counts_honour_max_surge_and_max_unavailable_when_the_weight_goes_down() -> None:
    # upstream TestReduceWeightAndHonorMaxUnavailable: 3 replicas, maxSurge 2, maxUnavailable 0,
    # from setWeight 100 to setWeight 0: the stable ReplicaSet grows by the surge first, the
    # canary keeps its 3 pods until the stable ones are available
    steps = [{"setWeight": 100}, {"pause": {}}, {"setWeight": 0}, {"pause": {}}]
    rollout = {
        "spec": {"replicas": 3, "strategy": {"canary": {"maxSurge": 2, "maxUnavailable": 0, "steps": steps}}},
        "status": {"currentPodHash": "new", "stableRS": "old", "currentStepIndex": 2},
    }

    def rs(name: str, n: int, available: int) -> dict[str, object]:
        return {
            "metadata": {"name": name},
            "spec": {"replicas": n},
            "status": {"availableReplicas": available},
        }

    assert canary.basic_canary_counts(rollout, rs("new", 3, 3), rs("old", 0, 0), []) == (3, 2)
    assert canary.basic_canary_counts(rollout, rs("new", 3, 3), rs("old", 3, 3), []) == (0, 3)


def test_a_rollout_paused_by_its_spec_is_paused_and_promotion_unpauses_it(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # upstream TestCanaryWithSpecPause: a Healthy Rollout paused by spec.paused is Paused without a
    # Progressing RolloutPaused condition; the plugin's promote sends spec.paused false
    ro.install(kubectl)
    kubectl("apply", "-f", "-", input=yaml.safe_dump(ro.rollout("web", containers=sleeper("1"))))
    ro.wait_phase(kubectl, "web", "Healthy")
    kubectl("patch", "rollout", "web", "--type", "merge", "-p", '{"spec":{"paused":true}}')
    paused = ro.wait_phase(kubectl, "web", "Paused")
    assert paused["message"] == "manually paused"
    conditions = {c["type"]: c for c in paused["conditions"]}
    assert conditions["Paused"]["status"] == "True" and conditions["Progressing"]["reason"] != "RolloutPaused"
    ro.promote(kubectl, "web")
    assert ro.get(kubectl, "web")["spec"]["paused"] is False
    ro.wait_phase(kubectl, "web", "Healthy")


def test_a_canary_pauses_at_its_step_with_weighted_pods_and_promotion_makes_it_healthy(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    ro.install(kubectl)
    kubectl("apply", "-f", "-", input=yaml.safe_dump(ro.rollout("web", containers=sleeper("1"))))
    first = ro.wait_phase(kubectl, "web", "Healthy")
    assert first["stableRS"] == first["currentPodHash"]
    table = kubectl("get", "rollout", "web").splitlines()  # the CRD's additionalPrinterColumns
    assert table[0].split() == ["NAME", "DESIRED", "CURRENT", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:5] == ["web", "4", "4", "4", "4"]
    assert kubectl("get", "ro", "web", "-o", "name") == "rollout.argoproj.io/web\n"

    update(kubectl, "web", "2")
    paused = ro.wait_phase(kubectl, "web", "Paused")
    assert paused["message"] == "CanaryPauseStep"
    assert [p["reason"] for p in paused["pauseConditions"]] == ["CanaryPauseStep"]
    assert paused["controllerPause"] is True and paused["currentStepIndex"] == 1
    pods = ro.pods_by_hash(kubectl, "web")
    assert len(pods[paused["currentPodHash"]]) == 2 and len(pods[paused["stableRS"]]) == 2
    events = kubectl("get", "events", "--field-selector", "involvedObject.kind=Rollout", "-o", "json")
    messages = [e["message"] for e in json.loads(events)["items"]]
    assert "Rollout step 1/2 completed (setWeight: 50)" in messages
    assert "Rollout is paused (CanaryPauseStep)" in messages

    ro.promote(kubectl, "web")
    done = ro.wait_phase(kubectl, "web", "Healthy")
    assert done["stableRS"] == done["currentPodHash"] == paused["currentPodHash"]
    assert done["currentStepIndex"] == 2 and "pauseConditions" not in done
    ro.wait(lambda: list(ro.pods_by_hash(kubectl, "web")) == [done["currentPodHash"]], "old pods to go")
    assert ro.get(kubectl, "web")["metadata"]["annotations"]["rollout.argoproj.io/revision"] == "2"


def test_abort_returns_to_stable_and_the_canary_service_follows_then_retry_resumes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # upstream TestCanaryScaleDownOnAbortNoTrafficRouting on its own manifest (kubesim serves no
    # Ingress, so that document is left out)
    ro.install(kubectl)
    docs = [
        d
        for d in yaml.safe_load_all(
            (ro.UPSTREAM_E2E / "canary-scaledownonabortnotrafficrouting.yaml").read_text()
        )
        if d
    ]
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all([d for d in docs if d["kind"] != "Ingress"]))
    name = "canary-scaledownd-on-abort"
    stable = ro.wait_phase(kubectl, name, "Healthy")["stableRS"]
    kubectl(
        "patch",
        "rollout",
        name,
        "--type",
        "merge",
        "-p",
        '{"spec":{"template":{"metadata":{"annotations":{"rev":"2"}}}}}',
    )
    ro.wait_phase(kubectl, name, "Paused")
    ro.abort(kubectl, name)
    degraded = ro.wait_phase(kubectl, name, "Degraded")
    assert (
        degraded["abort"] is True
        and degraded["message"] == "RolloutAborted: Rollout aborted update to revision 2"
    )
    selector = ro.get(kubectl, "canary-scaledowndelay-canary", "service")["spec"]["selector"]
    assert selector == {"app": "canary-scaledowndelay", "rollouts-pod-template-hash": stable}
    ro.wait(
        lambda: list(ro.pods_by_hash(kubectl, "canary-scaledowndelay")) == [stable],
        "the canary to scale to 0",
    )

    ro.retry(kubectl, name)
    again = ro.wait_phase(kubectl, name, "Paused")
    assert "abort" not in again and again["currentStepIndex"] == 1


def test_a_failed_analysis_step_aborts_to_stable_and_a_fixed_retry_promotes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    ro.install(kubectl)
    kubectl("apply", "-f", str(ro.UPSTREAM_E2E / "analysistemplate-sleep-job.yaml"))
    step = {
        "analysis": {
            "templates": [{"templateName": "sleep-job"}],
            "args": [
                {"name": "exit-code", "value": "1"},
                {"name": "rev", "valueFrom": {"podTemplateHashValue": "Latest"}},
            ],
        }
    }
    strategy = {"canary": {"steps": [{"setWeight": 50}, step]}}
    kubectl(
        "apply",
        "-f",
        "-",
        input=yaml.safe_dump(ro.rollout("web", containers=sleeper("1"), strategy=strategy)),
    )
    stable = ro.wait_phase(kubectl, "web", "Healthy")["stableRS"]
    assert kubectl("get", "analysisruns", "-o", "name") == ""  # the initial deploy runs no analysis

    update(kubectl, "web", "2")
    degraded = ro.wait_phase(kubectl, "web", "Degraded")
    latest = degraded["currentPodHash"]
    failure = 'Metric "sleep-job" assessed Failed due to failed (1) > failureLimit (0)'
    assert degraded["message"] == (
        f"RolloutAborted: Rollout aborted update to revision 2: Step-based analysis phase error/failed: {failure}"
    )
    (run,) = json.loads(kubectl("get", "analysisruns", "-o", "json"))["items"]
    assert run["metadata"]["name"] == f"web-{latest}-2-1"
    assert run["metadata"]["labels"] == {
        "app": "web",
        "rollouts-pod-template-hash": latest,
        "rollout-type": "Step",
        "step-index": "1",
    }
    assert run["status"]["phase"] == "Failed" and run["status"]["message"] == failure
    (job,) = json.loads(kubectl("get", "jobs", "-o", "json"))["items"]
    assert job["metadata"]["name"] == f"{run['metadata']['uid']}.sleep-job.1"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "AnalysisRun"
    assert job["metadata"]["annotations"]["analysisrun.argoproj.io/metric-name"] == "sleep-job"
    assert job["spec"]["template"]["metadata"]["labels"]["rev"] == latest  # {{ args.rev }} resolved
    ro.wait(lambda: ro.pods_by_hash(kubectl, "web").keys() == {stable}, "the canary to scale to 0")
    assert len(ro.pods_by_hash(kubectl, "web")[stable]) == 4
    summary = {"name": run["metadata"]["name"], "status": "Failed", "message": failure}
    assert degraded["canary"]["currentStepAnalysisRunStatus"] == summary

    # upstream's PatchSpec then RetryRollout: a passing analysis, and the canary promoted
    kubectl("patch", "rollout", "web", "--type", "json", "-p",
            '[{"op":"replace","path":"/spec/strategy/canary/steps/1/analysis/args/0/value","value":"0"}]')  # fmt: skip
    ro.retry(kubectl, "web")
    healthy = ro.wait_phase(kubectl, "web", "Healthy")
    assert healthy["stableRS"] == latest
    phases = sorted(
        r["status"]["phase"] for r in json.loads(kubectl("get", "analysisruns", "-o", "json"))["items"]
    )
    assert phases == ["Failed", "Successful"]


def test_an_analysis_run_fails_once_a_metric_passes_its_failure_limit(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # upstream's analysistemplate-fail-multiple-job.yaml: sleep-job-rep fails twice (count 2,
    # interval 1s, failureLimit 1) while sleep-job waits out a 10000s initialDelay; a failed metric
    # ends the run (IsTerminating), the other one terminated
    ro.install(kubectl)
    template = yaml.safe_load((ro.UPSTREAM_E2E / "analysistemplate-fail-multiple-job.yaml").read_text())
    run = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisRun",
        "metadata": {"name": "multiple-job-fail"},
        "spec": {"args": template["spec"]["args"], "metrics": template["spec"]["metrics"]},
    }
    kubectl("apply", "-f", "-", input=yaml.safe_dump(run))
    ro.wait(
        lambda: (
            ro.get(kubectl, "multiple-job-fail", "analysisrun").get("status", {}).get("phase") == "Failed"
        ),
        "the run to fail",
    )
    st = ro.get(kubectl, "multiple-job-fail", "analysisrun")["status"]
    assert st["message"] == 'Metric "sleep-job-rep" assessed Failed due to failed (2) > failureLimit (1)'
    results = {r["name"]: r for r in st["metricResults"]}
    assert results["sleep-job-rep"]["count"] == 2 and len(results["sleep-job-rep"]["measurements"]) == 2
    assert "sleep-job" not in results  # never measured: its initial delay had not passed
    first, second = (m for m in results["sleep-job-rep"]["measurements"])
    assert second["startedAt"] >= first["finishedAt"]
    assert kubectl("get", "analysisrun", "multiple-job-fail").split()[:4] == [
        "NAME",
        "STATUS",
        "AGE",
        "multiple-job-fail",
    ]


def test_blue_green_promotes_only_after_its_pre_promotion_analysis_passes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # upstream TestBlueGreenPrePromotionFail, then a pause awaiting promotion (autoPromotionEnabled false)
    ro.install(kubectl)
    kubectl("apply", "-f", str(ro.UPSTREAM_E2E / "analysistemplate-sleep-job.yaml"))
    kubectl(
        "apply",
        "-f",
        "-",
        input=yaml.safe_dump_all(
            [service("bg-active", selector={"app": "bg"}), service("bg-preview", selector={"app": "bg"})]
        ),
    )
    strategy = {
        "blueGreen": {
            "activeService": "bg-active",
            "previewService": "bg-preview",
            "autoPromotionEnabled": False,
            "prePromotionAnalysis": {
                "templates": [{"templateName": "sleep-job"}],
                "args": [{"name": "exit-code", "value": "1"}],
            },
        }
    }
    kubectl(
        "apply",
        "-f",
        "-",
        input=yaml.safe_dump(ro.rollout("bg", containers=sleeper("1"), replicas=2, strategy=strategy)),
    )
    blue = ro.wait_phase(kubectl, "bg", "Healthy")["stableRS"]
    update(kubectl, "bg", "2")
    degraded = ro.wait_phase(kubectl, "bg", "Degraded")
    green = degraded["currentPodHash"]
    assert degraded["message"].startswith(
        "RolloutAborted: Rollout aborted update to revision 2: Blue/green pre-promotion analysis phase error/failed: "
    )
    assert (
        degraded["blueGreen"]["activeSelector"] == blue and degraded["blueGreen"]["previewSelector"] == green
    )
    active = ro.get(kubectl, "bg-active", "service")["spec"]["selector"]
    assert active["rollouts-pod-template-hash"] == blue  # never promoted

    kubectl("patch", "rollout", "bg", "--type", "json", "-p",
            '[{"op":"replace","path":"/spec/strategy/blueGreen/prePromotionAnalysis/args/0/value","value":"0"}]')  # fmt: skip
    ro.retry(kubectl, "bg")
    paused = ro.wait_phase(kubectl, "bg", "Paused")
    assert (
        paused["message"] == "BlueGreenPause"
        and paused["blueGreen"]["prePromotionAnalysisRunStatus"]["status"] == "Successful"
    )
    assert ro.get(kubectl, "bg-active", "service")["spec"]["selector"]["rollouts-pod-template-hash"] == blue
    ro.promote(kubectl, "bg")
    healthy = ro.wait_phase(kubectl, "bg", "Healthy")
    assert healthy["stableRS"] == green and healthy["blueGreen"]["activeSelector"] == green
    assert ro.get(kubectl, "bg-active", "service")["spec"]["selector"]["rollouts-pod-template-hash"] == green


def test_restart_at_replaces_every_pod_without_a_new_revision(cluster: Cluster, kubectl: Kubectl) -> None:
    ro.install(kubectl)
    kubectl("apply", "-f", "-", input=yaml.safe_dump(ro.rollout("web", containers=sleeper("1"))))
    before = ro.wait_phase(kubectl, "web", "Healthy")
    old = set(ro.pods_by_hash(kubectl, "web")[before["currentPodHash"]])
    time.sleep(1)  # restartAt has a resolution of seconds: the pods are older than it
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    kubectl(
        "patch", "rollout", "web", "--type", "merge", "-p", json.dumps({"spec": {"restartAt": at}})
    )  # the plugin's patch
    ro.wait(lambda: ro.status(kubectl, "web").get("restartedAt") == at, "status.restartedAt")
    after = ro.wait_phase(kubectl, "web", "Healthy")
    assert after["currentPodHash"] == before["currentPodHash"]
    now = ro.pods_by_hash(kubectl, "web")
    assert list(now) == [before["currentPodHash"]] and len(now[before["currentPodHash"]]) == 4
    assert not old & set(now[before["currentPodHash"]])


def test_a_workload_ref_rollout_runs_the_deployments_template(cluster: Cluster, kubectl: Kubectl) -> None:
    ro.install(kubectl)
    web = deployment("web", replicas=0, command=["sleep", "3600"])
    kubectl("apply", "-f", "-", input=yaml.safe_dump(web))
    rollout = ro.rollout("web", containers=[], replicas=2)
    del rollout["spec"]["template"]
    rollout["spec"]["workloadRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    kubectl("apply", "-f", "-", input=yaml.safe_dump(rollout))
    st = ro.wait_phase(kubectl, "web", "Healthy")
    assert st["workloadObservedGeneration"] == "1"
    assert "template" not in ro.get(kubectl, "web")["spec"]  # resolved, never written back
    (pod, *_) = ro.pods_by_hash(kubectl, "web")[st["currentPodHash"]]
    spec = ro.get(kubectl, pod, "pod")["spec"]
    assert spec["containers"][0]["command"] == ["sleep", "3600"]


def test_a_timed_pause_step_resumes_by_itself(cluster: Cluster, kubectl: Kubectl) -> None:
    ro.install(kubectl)
    strategy = {"canary": {"steps": [{"setWeight": 50}, {"pause": {"duration": "2s"}}]}}
    kubectl(
        "apply",
        "-f",
        "-",
        input=yaml.safe_dump(ro.rollout("web", containers=sleeper("1"), strategy=strategy)),
    )
    ro.wait_phase(kubectl, "web", "Healthy")
    update(kubectl, "web", "2")
    paused = ro.wait_phase(kubectl, "web", "Paused")
    started = paused["pauseConditions"][0]["startTime"]
    done = ro.wait_phase(kubectl, "web", "Healthy")  # no promotion: the duration ran out
    assert done["stableRS"] == paused["currentPodHash"]
    events = json.loads(
        kubectl("get", "events", "--field-selector", "reason=RolloutStepCompleted", "-o", "json")
    )
    completed = [e for e in events["items"] if e["message"] == "Rollout step 2/2 completed (pause: 2s)"]
    assert completed
    waited = dt.datetime.fromisoformat(completed[0]["firstTimestamp"]) - dt.datetime.fromisoformat(started)
    assert waited >= dt.timedelta(seconds=2)  # not before the pause's duration
