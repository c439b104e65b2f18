"""kubectl-equivalent rollout status, current-revision pod selection and waiting reasons."""

from __future__ import annotations

from typing import Any

import pytest

from verify.diagnose.rollout import waiting_reasons
from verify.flow.rollout_status import RolloutState, rollout_state
from verify.flow.selection import select_current_pods

DEP_UID = "dep-uid"


def deployment(
    *,
    generation: int = 2,
    observed: int = 2,
    replicas: int | None = 3,
    updated: int = 3,
    total: int = 3,
    available: int = 3,
    conditions: list[dict[str, Any]] | None = None,
    revision: str = "2",
    containers: tuple[str, ...] = ("app", "proxy"),
) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"containers": [{"name": c} for c in containers]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "metadata": {
            "name": "web",
            "uid": DEP_UID,
            "generation": generation,
            "annotations": {"deployment.kubernetes.io/revision": revision},
        },
        "spec": spec,
        "status": {
            "observedGeneration": observed,
            "replicas": total,
            "updatedReplicas": updated,
            "availableReplicas": available,
            "conditions": conditions or [],
        },
    }


@pytest.mark.parametrize(
    ("dep", "expected"),
    [
        (
            deployment(generation=3, observed=2),
            RolloutState(False, False, "Waiting for deployment spec update to be observed..."),
        ),
        (
            deployment(
                updated=1,
                conditions=[
                    {"type": "Available", "reason": "MinimumReplicasAvailable"},
                    {"type": "Progressing", "reason": "ProgressDeadlineExceeded"},
                ],
            ),
            RolloutState(False, True, 'deployment "web" exceeded its progress deadline'),
        ),
        (
            deployment(updated=1, total=4),
            RolloutState(
                False,
                False,
                'Waiting for deployment "web" rollout to finish: '
                "1 out of 3 new replicas have been updated...",
            ),
        ),
        (
            deployment(total=5),
            RolloutState(
                False,
                False,
                'Waiting for deployment "web" rollout to finish: 2 old replicas are pending termination...',
            ),
        ),
        (
            deployment(available=1),
            RolloutState(
                False,
                False,
                'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...',
            ),
        ),
        (deployment(), RolloutState(True, False, 'deployment "web" successfully rolled out')),
        (
            deployment(replicas=None, updated=0, total=0, available=0),
            RolloutState(
                False,
                False,
                'Waiting for deployment "web" rollout to finish: '
                "0 out of 1 new replicas have been updated...",
            ),
        ),
        (
            deployment(
                generation=3,
                observed=2,
                conditions=[{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}],
            ),
            RolloutState(False, False, "Waiting for deployment spec update to be observed..."),
        ),
        (
            deployment(conditions=[{"type": "Progressing", "reason": "NewReplicaSetAvailable"}]),
            RolloutState(True, False, 'deployment "web" successfully rolled out'),
        ),
    ],
    ids=[
        "generation-not-observed",
        "progress-deadline-exceeded",
        "updated-less-than-replicas",
        "old-replicas-pending-termination",
        "available-less-than-updated",
        "complete",
        "replicas-default-to-one",
        "deadline-ignored-until-generation-observed",
        "progressing-complete",
    ],
)
def test_rollout_state_matches_kubectl(dep: dict[str, Any], expected: RolloutState) -> None:
    assert rollout_state(deployment=dep) == expected


def replicaset(name: str, uid: str, revision: str, template_hash: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": uid,
            "labels": {"pod-template-hash": template_hash},
            "annotations": {"deployment.kubernetes.io/revision": revision},
            "ownerReferences": [{"kind": "Deployment", "uid": DEP_UID, "controller": True}],
        },
        "spec": {
            "template": {"spec": {"containers": [{"name": "app"}, {"name": "proxy"}]}},
        },
    }


def pod(
    name: str,
    *,
    owner: str,
    template_hash: str,
    node: str = "node-1",
    deleting: bool = False,
    phase: str = "Running",
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{name}",
        "labels": {"pod-template-hash": template_hash},
        "ownerReferences": [{"kind": "ReplicaSet", "uid": owner}],
    }
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "app"}, {"name": "proxy"}],
        },
        "status": {"phase": phase},
    }


OLD_RS = replicaset("web-old", "rs-old", "1", "old")
NEW_RS = replicaset("web-new", "rs-new", "2", "new")
FOREIGN_RS = {
    **replicaset("other-new", "rs-foreign", "2", "new"),
}
FOREIGN_RS["metadata"] = {**FOREIGN_RS["metadata"], "ownerReferences": [{"uid": "someone-else"}]}


def test_select_current_pods_picks_only_pods_of_the_new_replicaset() -> None:
    pods = [
        pod("web-new-b", owner="rs-new", template_hash="new", node="node-2"),
        pod("web-new-a", owner="rs-new", template_hash="new"),
        pod("web-new-c", owner="rs-new", template_hash="new"),
        pod("web-old-a", owner="rs-old", template_hash="old"),
        pod("web-old-b", owner="rs-old", template_hash="old", deleting=True),
    ]
    sel = select_current_pods(deployment=deployment(), replicasets=[FOREIGN_RS, OLD_RS, NEW_RS], pods=pods)
    assert (sel.revision, sel.replicaset, sel.template_hash) == ("2", "web-new", "new")
    assert [p.name for p in sel.pods] == ["web-new-a", "web-new-b", "web-new-c"]
    assert sel.pods[1].node == "node-2"
    assert sel.pods[0].containers == ("app", "proxy")  # init containers are not inspected
    assert sel.pods[0].uid == "uid-web-new-a"
    assert sel.problems == () and sel.permanent_problems == ()


def test_select_current_pods_skips_terminating_and_terminal_new_pods() -> None:
    pods = [
        pod("web-new-a", owner="rs-new", template_hash="new"),
        pod("web-new-b", owner="rs-new", template_hash="new", deleting=True),
        pod("web-new-c", owner="rs-new", template_hash="new", phase="Failed"),
        pod("web-new-d", owner="rs-new", template_hash="new"),
    ]
    sel = select_current_pods(deployment=deployment(), replicasets=[OLD_RS, NEW_RS], pods=pods)
    assert [p.name for p in sel.pods] == ["web-new-a", "web-new-d"]
    assert sel.problems == ("deployment web: expected 3 pods of revision 2, found 2",)


def test_pods_with_a_stale_template_hash_are_not_selected() -> None:
    pods = [pod(f"web-new-{i}", owner="rs-new", template_hash="new") for i in range(3)]
    pods.append(pod("web-adopted", owner="rs-new", template_hash="old"))
    sel = select_current_pods(deployment=deployment(), replicasets=[NEW_RS], pods=pods)
    assert "web-adopted" not in [p.name for p in sel.pods]
    assert sel.problems == ()


def test_missing_replicaset_for_revision_is_a_problem() -> None:
    sel = select_current_pods(deployment=deployment(revision="3"), replicasets=[OLD_RS, NEW_RS], pods=[])
    assert sel.pods == ()
    assert sel.problems == ("deployment web: no ReplicaSet for revision 3",)


def test_replicaset_owned_by_another_deployment_is_ignored() -> None:
    sel = select_current_pods(deployment=deployment(), replicasets=[FOREIGN_RS], pods=[])
    assert sel.problems == ("deployment web: no ReplicaSet for revision 2",)


def test_requested_containers_filter_targets_and_unknown_ones_are_permanent() -> None:
    pods = [pod(f"web-new-{i}", owner="rs-new", template_hash="new") for i in range(3)]
    sel = select_current_pods(
        deployment=deployment(),
        replicasets=[NEW_RS],
        pods=pods,
        containers=["proxy", "sidecar"],
    )
    assert all(p.containers == ("proxy",) for p in sel.pods)
    assert sel.problems == ()
    assert len(sel.permanent_problems) == 1
    assert '"sidecar"' in sel.permanent_problems[0]
    assert "revision 2" in sel.permanent_problems[0]


def test_deployment_without_revision_annotation_is_a_problem() -> None:
    dep = deployment()
    dep["metadata"]["annotations"] = {}
    sel = select_current_pods(deployment=dep, replicasets=[NEW_RS], pods=[])
    assert sel.problems == ("deployment web: has no revision annotation yet",)


def _status_pod(name: str, node: str, status: dict[str, Any]) -> dict[str, Any]:
    spec = {"nodeName": node} if node else {}
    return {"metadata": {"name": name}, "spec": spec, "status": status}


@pytest.mark.parametrize(
    ("p", "lines"),
    [
        (
            _status_pod(
                "web-7c9",
                "node-2",
                {
                    "phase": "Pending",
                    "containerStatuses": [
                        {
                            "name": "app",
                            "ready": False,
                            "state": {
                                "waiting": {
                                    "reason": "ImagePullBackOff",
                                    "message": 'Back-off pulling image "app:v2"',
                                }
                            },
                        }
                    ],
                },
            ),
            ['pod web-7c9 (node-2) container app: ImagePullBackOff: Back-off pulling image "app:v2"'],
        ),
        (
            _status_pod(
                "web-1",
                "node-1",
                {
                    "phase": "Running",
                    "containerStatuses": [
                        {
                            "name": "app",
                            "ready": False,
                            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                            "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
                        }
                    ],
                },
            ),
            ["pod web-1 (node-1) container app: CrashLoopBackOff; last run: exit code 1 (Error)"],
        ),
        (
            _status_pod(
                "web-2",
                "",
                {
                    "phase": "Pending",
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "message": "0/3 nodes are available:\n insufficient cpu.",
                        }
                    ],
                },
            ),
            ["pod web-2: Pending (unscheduled): 0/3 nodes are available: insufficient cpu."],
        ),
        (_status_pod("web-3", "", {"phase": "Pending"}), ["pod web-3: Pending (unscheduled)"]),
        (
            _status_pod(
                "web-4",
                "node-1",
                {
                    "phase": "Running",
                    "containerStatuses": [
                        {"name": "app", "ready": False, "state": {"running": {}}},
                        {"name": "proxy", "ready": True, "state": {"running": {}}},
                    ],
                },
            ),
            ["pod web-4 (node-1) container app: running but not ready"],
        ),
        (
            _status_pod(
                "web-5",
                "node-3",
                {"phase": "Failed", "reason": "Evicted", "message": "low on memory"},
            ),
            ["pod web-5 (node-3): Failed: Evicted: low on memory"],
        ),
        (
            _status_pod(
                "web-6",
                "node-1",
                {
                    "phase": "Running",
                    "containerStatuses": [
                        {"name": "app", "ready": True, "state": {"running": {}}},
                    ],
                },
            ),
            [],
        ),
    ],
    ids=["image-pull", "crashloop", "unschedulable", "pending", "not-ready", "evicted", "ready"],
)
def test_waiting_reasons_explain_unready_pods(p: dict[str, Any], lines: list[str]) -> None:
    assert waiting_reasons(pods=[p]) == lines


def test_a_pod_creating_without_a_word_is_explained_by_its_failedmount_event() -> None:
    pod = {
        "metadata": {"name": "web-1"},
        "spec": {"nodeName": "node-1"},
        "status": {
            "phase": "Pending",
            "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "ContainerCreating"}}}],
        },
    }
    why = 'MountVolume.SetUp failed for volume "kv" : rpc error: code = Unknown desc = failed to get secretproviderclass default/web-kv'
    assert waiting_reasons(pods=[pod]) == ["pod web-1 (node-1) container app: ContainerCreating"]
    assert waiting_reasons(pods=[pod], mount_failures={"web-1": why}) == [
        f"pod web-1 (node-1): ContainerCreating: {why}"
    ]
    assert waiting_reasons(pods=[pod], mount_failures={"web-2": why}) == [
        "pod web-1 (node-1) container app: ContainerCreating"
    ]


def test_a_container_running_but_not_ready_is_said_with_its_readiness_probes_failure() -> None:
    pod = {
        "metadata": {"name": "web-4"},
        "spec": {"nodeName": "node-1"},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "app", "ready": False, "state": {"running": {}}},
                {"name": "proxy", "ready": False, "state": {"running": {}}},
            ],
        },
    }
    why = "Readiness probe failed: HTTP probe failed with statuscode: 503"
    assert waiting_reasons(pods=[pod], probe_failures={"web-4": {"app": why}}) == [
        f"pod web-4 (node-1) container app: running but not ready: {why}",
        "pod web-4 (node-1) container proxy: running but not ready",  # no event: said as before
    ]
