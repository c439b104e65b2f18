"""Argo Rollouts as a target, pure: where a Rollout stands (Argo's own phase and message, and the
steps that wait with their pods up), which pods are its latest or stable revision's, when a
restart may be sent and what it sends, the names kubectl takes, the rules it needs, and whether
a run is an AnalysisRun's measurement."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from verify.config.job import load_job
from verify.config.values import parse_target
from verify.errors import ConfigError
from verify.flow import analysis_run, argo_rollout
from verify.flow.permissions import needed
from verify.flow.restart import Restarter, Revision, record_of
from verify.flow.rollout_status import workload_state
from verify.flow.selection import select_rollout_pods
from verify.kube.kinds import api_path
from verify.model import WorkloadRef

STEPS = [
    {"setWeight": 50},
    {"pause": {}},
    {"setWeight": 100},
    {"analysis": {"templates": [{"templateName": "v"}]}},
]


def canary(*, index: int = 1, generation: int = 2, paused: bool = False, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "uid": "ro-uid", "generation": generation, "resourceVersion": "7"},
        "spec": {
            "replicas": 4,
            "paused": paused,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "app"}]}},
            "strategy": {"canary": {"steps": STEPS}},
        },
        "status": {
            "observedGeneration": "2",
            "currentPodHash": "new",
            "stableRS": "old",
            "currentStepIndex": index,
            "phase": "Paused",
            "message": "CanaryPauseStep",
            **status,
        },
    }


def blue_green(**status: Any) -> dict[str, Any]:
    ro = canary()
    ro["spec"]["strategy"] = {"blueGreen": {"activeService": "a", "previewService": "p"}}
    ro["status"] = {
        "observedGeneration": "2",
        "currentPodHash": "new",
        "stableRS": "old",
        "phase": "Progressing",
        "message": "active service cutover pending",
        "blueGreen": {"activeSelector": "old", "previewSelector": "new"},
        **status,
    }
    return ro


def state(ro: dict[str, Any]) -> tuple[bool, bool, str]:
    s = workload_state(kind="rollout", obj=ro)
    return s.done, s.failed, s.message


def test_a_canary_paused_at_its_step_is_ready_to_verify() -> None:
    assert state(canary()) == (True, False, 'rollout "web" is Paused at step 2/4 (pause)')


def test_a_canary_at_its_analysis_step_is_ready_to_verify_so_the_analysis_job_does_not_wait_for_itself() -> (
    None
):
    ro = canary(index=3, phase="Progressing", message="waiting for all steps to complete")
    assert state(ro) == (True, False, 'rollout "web" is Progressing at step 4/4 (analysis)')


def test_a_canary_still_scaling_to_its_weight_is_waited_for_with_argos_words() -> None:
    ro = canary(index=0, phase="Progressing", message="more replicas need to be updated")
    assert state(ro) == (
        False,
        False,
        'Waiting for rollout "web" to finish: Progressing - more replicas need to be updated',
    )


def test_healthy_is_done_and_degraded_or_aborted_fails_with_argos_message() -> None:
    healthy = canary(phase="Healthy", message="", stableRS="new", currentStepIndex=4)
    assert state(healthy) == (True, False, 'rollout "web" is Healthy')
    msg = "RolloutAborted: Rollout aborted update to revision 2: Step-based analysis phase error/failed"
    assert state(canary(phase="Degraded", message=msg, abort=True)) == (
        False,
        True,
        f'rollout "web" is Degraded: {msg}',
    )
    assert state(canary(abort=True))[1]  # aborted, its status not yet Degraded


def test_a_spec_change_not_yet_observed_or_a_rollout_no_controller_saw_is_waited_for() -> None:
    assert state(canary(generation=3))[:2] == (False, False)
    unseen = canary()
    unseen["status"] = {}
    assert state(unseen) == (False, False, 'Waiting for rollout "web" spec update to be observed...')
    unpausing = canary(controllerPause=True)
    assert state(unpausing)[2] == 'Waiting for rollout "web" to unpause...'


def test_a_rollout_paused_by_hand_mid_way_fails_at_once_and_one_settled_on_stable_is_verified() -> None:
    done, failed, message = state(canary(paused=True))
    assert (done, failed) == (False, True) and "kubectl argo rollouts promote web" in message
    settled = canary(
        paused=True, stableRS="new", updatedReplicas=4, availableReplicas=4, message="manually paused"
    )
    assert state(settled) == (True, False, 'rollout "web" is paused by hand on its stable revision')
    assert argo_rollout.restart_held(rollout=settled)  # an operator's pause: not restarted


def test_a_blue_green_preview_awaiting_its_analysis_or_promotion_is_ready_to_verify() -> None:
    assert state(blue_green())[:2] == (False, False)  # the preview is still coming up
    analysed = blue_green(
        blueGreen={
            "activeSelector": "old",
            "prePromotionAnalysisRunStatus": {"name": "x", "status": "Running"},
        }
    )
    assert state(analysed) == (
        True,
        False,
        'rollout "web" is Progressing with its preview under pre-promotion analysis',
    )
    paused = blue_green(
        phase="Paused", message="BlueGreenPause", pauseConditions=[{"reason": "BlueGreenPause"}]
    )
    assert state(paused) == (True, False, 'rollout "web" is Paused with its preview awaiting promotion')


def test_only_a_fully_promoted_rollout_may_be_restarted() -> None:
    assert argo_rollout.restart_held(rollout=canary(stableRS="new")) == ""
    held = argo_rollout.restart_held(rollout=canary())
    assert held.startswith("rollout web is at step 2/4 (pause): not restarted")
    assert "kubectl argo rollouts abort web" in held


def rs(name: str, h: str, replicas: int, revision: str, owner: str = "ro-uid") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"rs-{name}",
            "labels": {"app": "web", "rollouts-pod-template-hash": h},
            "annotations": {"rollout.argoproj.io/revision": revision},
            "ownerReferences": [{"uid": owner, "controller": True}],
        },
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "app"}]}}},
    }


def pod(name: str, rs_name: str, h: str, **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"u-{name}",
            "labels": {"app": "web", "rollouts-pod-template-hash": h},
            "ownerReferences": [{"uid": f"rs-{rs_name}", "controller": True}],
            **meta,
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "app"}]},
        "status": {"phase": "Running"},
    }


RSS = [rs("web-new", "new", 2, "2"), rs("web-old", "old", 2, "1"), rs("other-new", "new", 4, "9", owner="x")]
PODS = [
    pod("web-new-a", "web-new", "new"),
    pod("web-new-b", "web-new", "new"),
    pod("web-new-c", "web-new", "new", deletionTimestamp="2026-12-05T00:00:00Z"),
    pod("web-old-a", "web-old", "old"),
    pod("web-old-b", "web-old", "old"),
]


def test_the_latest_revision_is_the_current_pod_hashs_pods_as_many_as_its_step_wants() -> None:
    sel = select_rollout_pods(rollout=canary(), replicasets=RSS, pods=PODS)
    assert [p.name for p in sel.pods] == ["web-new-a", "web-new-b"]
    assert (sel.revision, sel.replicaset, sel.problems) == ("2", "web-new", ())
    short = select_rollout_pods(rollout=canary(), replicasets=RSS, pods=PODS[:1])
    assert short.problems == ("rollout web: expected 2 pods of revision 2, found 1",)


def test_the_stable_revision_is_the_stable_replicasets_pods_judged_against_its_own_template() -> None:
    sel = select_rollout_pods(rollout=canary(), replicasets=RSS, pods=PODS, revision="stable")
    assert [p.name for p in sel.pods] == ["web-old-a", "web-old-b"] and sel.revision == "1"
    assert sel.template == RSS[1]["spec"]["template"]


def test_a_step_that_wants_no_pod_of_the_revision_has_nothing_to_verify() -> None:
    sel = select_rollout_pods(rollout=canary(), replicasets=[rs("web-new", "new", 0, "2")], pods=[])
    assert sel.permanent_problems == (
        "rollout web: its current step wants no pod of revision 2 yet; nothing to verify",
    )


def test_a_workload_ref_lends_its_template_and_selector_without_changing_the_rollout() -> None:
    ro = canary()
    del ro["spec"]["template"], ro["spec"]["selector"]
    ro["spec"]["workloadRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    dep = {
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "d"}]}},
        }
    }
    before = copy.deepcopy(ro)
    out = argo_rollout.with_workload(ro, dep)
    assert (
        out["spec"]["template"] == dep["spec"]["template"]
        and out["spec"]["selector"] == dep["spec"]["selector"]
    )
    assert ro == before and argo_rollout.workload_ref(ro) == "web"


class Api:
    def __init__(self) -> None:
        self.patches: list[tuple[str, Any, str]] = []

    def get(self, path: str, **params: Any) -> Any:
        raise AssertionError("no read expected")

    def patch(self, path: str, body: Any, content_type: str) -> Any:
        self.patches.append((path, body, content_type))
        return {}


def test_a_rollouts_restart_is_the_plugins_merge_patch_of_restart_at_with_the_record() -> None:
    api = Api()
    r = Restarter(
        api=api,
        ref=WorkloadRef(kind="rollout", name="web"),
        namespace="shop",
        label="rollout web",
        log=lambda _: None,
        clock=lambda: "2026-12-05T04:00:07+01:00",
    )
    r.restart(canary(stableRS="new"), revision=Revision(name="new", number=2), sources={}, attempts=1)
    ((path, body, content_type),) = api.patches
    assert path == "/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/web"
    assert content_type == "application/merge-patch+json"
    # RFC 3339 in UTC, as the plugin's, a second on (`--in 1s`): a pod created in the second it
    # names counts as restarted
    assert body["spec"] == {"restartAt": "2026-12-05T03:00:08Z"}
    assert body["metadata"]["resourceVersion"] == "7"
    record = record_of({"metadata": {"annotations": body["metadata"]["annotations"]}})
    assert record is not None and record.restarted == "new"  # the revision stays: the record covers it


@pytest.mark.parametrize(
    "text", ["rollout/web", "ro/web", "rollouts/web", "rollouts.argoproj.io/web", "Rollout.argoproj.io/web"]
)
def test_kubectls_spellings_name_a_rollout(text: str) -> None:
    assert parse_target(text) == WorkloadRef(kind="rollout", name="web")
    assert api_path(kind="rollout", namespace="ns") == "/apis/argoproj.io/v1alpha1/namespaces/ns/rollouts"


def test_rollout_and_revision_flags_and_env_and_config_keys(tmp_path: Any) -> None:
    job = load_job(argv=["--rollout", "web", "--revision", "stable"], environ={})
    ((plan,),) = [job.targets]
    assert (plan.ref, plan.revision) == (WorkloadRef(kind="rollout", name="web"), "stable")
    assert load_job(argv=[], environ={"VERIFY_ROLLOUT": "web"}).targets[0].revision == "latest"
    config = tmp_path / "v.yaml"
    config.write_text("targets:\n  - {target: rollout/web, revision: stable}\n  - target: ro/api\n")
    plans = load_job(argv=["--config", str(config)], environ={}).targets
    assert [(p.ref.name, p.revision) for p in plans] == [("web", "stable"), ("api", "latest")]
    with pytest.raises(ConfigError) as twice:
        load_job(argv=["--rollout", "a", "--rollout", "b"], environ={})
    assert "names one Rollout but was given 2" in str(twice.value)
    with pytest.raises(ConfigError) as bad:
        load_job(argv=["--rollout", "web", "--revision", "newest"], environ={})
    assert "VERIFY_REVISION" in str(bad.value) and "'latest' or 'stable'" in str(bad.value)


def test_the_rules_a_rollout_needs_are_argos_group_its_replicasets_and_a_workload_refs_deployment() -> None:
    job = load_job(argv=["--rollout", "web"], environ={})
    ro = canary()
    ro["spec"]["workloadRef"] = {"kind": "Deployment", "name": "base"}
    rules = {
        (r.verb, r.resource, r.group, r.name) for r in needed(plan=job.targets[0], workload=ro, restart=True)
    }
    assert {
        ("get", "rollouts", "argoproj.io", "web"),
        ("watch", "rollouts", "argoproj.io", "web"),
        ("patch", "rollouts", "argoproj.io", "web"),
        ("list", "replicasets", "apps", ""),
        ("get", "deployments", "apps", "base"),
    } <= rules


def test_a_pod_of_an_analysis_runs_job_is_its_measurement() -> None:
    pod_ = {"metadata": {"ownerReferences": [{"kind": "Job", "name": "uid.verify.1", "controller": True}]}}
    job = {
        "metadata": {
            "name": "uid.verify.1",
            "ownerReferences": [
                {
                    "apiVersion": "argoproj.io/v1alpha1",
                    "kind": "AnalysisRun",
                    "name": "web-abc-2-1",
                    "controller": True,
                }
            ],
        }
    }
    assert analysis_run.run_of(pod=pod_, job=job) == "web-abc-2-1"
    hook = {"metadata": {"name": "uid.verify.1"}}  # an Argo CD hook's Job: no owner
    assert analysis_run.run_of(pod=pod_, job=hook) == ""
    assert "Argo's own remedy" in analysis_run.held("web-abc-2-1")
