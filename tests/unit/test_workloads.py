"""StatefulSet/DaemonSet rollout state (kubectl's exact conditions) and pod selection, pure."""

from __future__ import annotations

from typing import Any

import pytest

from verify.config.values import parse_target
from verify.flow.rollout_status import daemonset_state, statefulset_state, workload_state
from verify.flow.selection import select_daemonset_pods, select_statefulset_pods
from verify.kube.kinds import api_path
from verify.model import WorkloadRef


def sts(
    *,
    replicas: int = 3,
    partition: int | None = 0,
    strategy: str = "RollingUpdate",
    generation: int = 2,
    **status: Any,
) -> dict[str, Any]:
    update: dict[str, Any] = {"type": strategy}
    if strategy == "RollingUpdate" and partition is not None:
        update["rollingUpdate"] = {"partition": partition}
    return {
        "metadata": {"name": "db", "uid": "sts-uid", "generation": generation},
        "spec": {
            "replicas": replicas,
            "updateStrategy": update,
            "template": {"spec": {"containers": [{"name": "db"}]}},
        },
        "status": {"observedGeneration": 2, **status},
    }


def ds(*, strategy: str = "RollingUpdate", generation: int = 1, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "agent", "uid": "ds-uid", "generation": generation},
        "spec": {"updateStrategy": {"type": strategy}, "template": {"spec": {"containers": [{"name": "a"}]}}},
        "status": {"observedGeneration": 1, **status},
    }


def pod(name: str, owner: str, labels: dict[str, str], *, node: str = "n1", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"u-{name}",
            "labels": labels,
            "ownerReferences": [{"uid": owner}],
            **meta,
        },
        "spec": {"nodeName": node, "containers": [{"name": "db"}, {"name": "a"}]},
        "status": {"phase": "Running"},
    }


@pytest.mark.parametrize(
    ("obj", "done", "failed", "message"),
    [
        (sts(generation=3), False, False, "Waiting for statefulset spec update to be observed..."),
        (sts(readyReplicas=1), False, False, "Waiting for 2 pods to be ready..."),
        (
            sts(partition=1, readyReplicas=3, updatedReplicas=1),
            False,
            False,
            "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...",
        ),
        (
            sts(partition=1, readyReplicas=3, updatedReplicas=2),
            True,
            False,
            "partitioned roll out complete: 2 new pods have been updated...",
        ),
        (
            sts(
                partition=None,
                readyReplicas=3,
                updatedReplicas=1,
                currentRevision="db-a",
                updateRevision="db-b",
            ),
            False,
            False,
            "waiting for statefulset rolling update to complete 1 pods at revision db-b...",
        ),
        (
            sts(
                partition=None,
                readyReplicas=3,
                currentReplicas=3,
                currentRevision="db-b",
                updateRevision="db-b",
            ),
            True,
            False,
            "statefulset rolling update complete 3 pods at revision db-b...",
        ),
        (
            sts(strategy="OnDelete"),
            False,
            True,
            "rollout status is only available for RollingUpdate strategy type",
        ),
    ],
)
def test_statefulset_state_reads_exactly_like_kubectl(
    obj: dict[str, Any], done: bool, failed: bool, message: str
) -> None:
    state = statefulset_state(statefulset=obj)
    assert (state.done, state.failed, state.message) == (done, failed, message)
    assert workload_state(kind="statefulset", obj=obj) == state


def test_statefulset_with_unobserved_status_waits() -> None:
    obj = sts(readyReplicas=3, updatedReplicas=3)
    obj["status"]["observedGeneration"] = 0
    assert statefulset_state(statefulset=obj).done is False


@pytest.mark.parametrize(
    ("obj", "done", "message"),
    [
        (ds(generation=2), False, "Waiting for daemon set spec update to be observed..."),
        (
            ds(desiredNumberScheduled=3, updatedNumberScheduled=2, numberAvailable=3),
            False,
            'Waiting for daemon set "agent" rollout to finish: 2 out of 3 new pods have been updated...',
        ),
        (
            ds(desiredNumberScheduled=3, updatedNumberScheduled=3, numberAvailable=1),
            False,
            'Waiting for daemon set "agent" rollout to finish: 1 of 3 updated pods are available...',
        ),
        (
            ds(desiredNumberScheduled=3, updatedNumberScheduled=3, numberAvailable=3),
            True,
            'daemon set "agent" successfully rolled out',
        ),
    ],
)
def test_daemonset_state_reads_exactly_like_kubectl(obj: dict[str, Any], done: bool, message: str) -> None:
    state = daemonset_state(daemonset=obj)
    assert (state.done, state.failed, state.message) == (done, False, message)


def test_daemonset_on_delete_cannot_be_waited_for() -> None:
    state = daemonset_state(daemonset=ds(strategy="OnDelete"))
    assert state.failed and "only available for RollingUpdate" in state.message


def test_statefulset_selection_takes_only_the_update_revision_above_the_partition() -> None:
    obj = sts(
        partition=1, readyReplicas=3, updatedReplicas=2, updateRevision="db-new", currentRevision="db-old"
    )
    pods = [
        pod("db-0", "sts-uid", {"controller-revision-hash": "db-old"}),
        pod("db-1", "sts-uid", {"controller-revision-hash": "db-new"}),
        pod(
            "db-2",
            "sts-uid",
            {"controller-revision-hash": "db-new"},
            deletionTimestamp="2026-01-01T00:00:00Z",
        ),
        pod("db-2x", "other-uid", {"controller-revision-hash": "db-new"}),
    ]
    sel = select_statefulset_pods(statefulset=obj, pods=pods, containers=["db"])
    assert [p.name for p in sel.pods] == ["db-1"]
    assert sel.pods[0].containers == ("db",)
    assert sel.revision == "db-new"
    assert sel.problems == ("statefulset db: expected 2 pods of revision db-new, found 1",)


def test_a_fresh_partitioned_statefulset_checks_only_the_ordinals_above_the_partition() -> None:
    # created with partition 2: every pod starts at the update revision, only db-2 is "new"
    obj = sts(partition=2, readyReplicas=3, updatedReplicas=3, updateRevision="db-a", currentRevision="db-a")
    pods = [pod(f"db-{i}", "sts-uid", {"controller-revision-hash": "db-a"}) for i in range(3)]
    sel = select_statefulset_pods(statefulset=obj, pods=pods)
    assert [p.name for p in sel.pods] == ["db-2"] and sel.problems == ()


def test_a_partition_counts_replica_indexes_when_ordinals_start_above_zero() -> None:
    # spec.ordinals.start 1: pods db-1..db-3 are indexes 0..2, and partition 2 leaves only db-3
    obj = sts(partition=2, readyReplicas=3, updatedReplicas=3, updateRevision="db-a", currentRevision="db-a")
    obj["spec"]["ordinals"] = {"start": 1}
    pods = [pod(f"db-{i}", "sts-uid", {"controller-revision-hash": "db-a"}) for i in (1, 2, 3)]
    sel = select_statefulset_pods(statefulset=obj, pods=pods)
    assert [p.name for p in sel.pods] == ["db-3"] and sel.problems == ()


def test_statefulset_partition_covering_every_replica_leaves_nothing_to_verify() -> None:
    obj = sts(partition=3, readyReplicas=3, updateRevision="db-new")
    sel = select_statefulset_pods(statefulset=obj, pods=[])
    assert sel.permanent_problems == (
        "statefulset db: partition 3 leaves no pod at revision db-new; nothing to verify",
    )


def test_daemonset_selection_uses_the_newest_controller_revision_hash() -> None:
    revisions = [
        {
            "metadata": {
                "name": "agent-aaa",
                "labels": {"controller-revision-hash": "aaa"},
                "ownerReferences": [{"uid": "ds-uid"}],
            },
            "revision": 1,
        },
        {
            "metadata": {
                "name": "agent-bbb",
                "labels": {"controller-revision-hash": "bbb"},
                "ownerReferences": [{"uid": "ds-uid"}],
            },
            "revision": 2,
        },
        {
            "metadata": {
                "name": "other-ccc",
                "labels": {"controller-revision-hash": "ccc"},
                "ownerReferences": [{"uid": "x"}],
            },
            "revision": 9,
        },
    ]
    pods = [
        pod("agent-1", "ds-uid", {"controller-revision-hash": "aaa"}, node="n1"),
        pod("agent-2", "ds-uid", {"controller-revision-hash": "bbb"}, node="n2"),
        pod("agent-3", "ds-uid", {"controller-revision-hash": "bbb"}, node="n3"),
    ]
    obj = ds(desiredNumberScheduled=3, updatedNumberScheduled=2, numberAvailable=3)
    sel = select_daemonset_pods(daemonset=obj, revisions=revisions, pods=pods, containers=["a"])
    assert [(p.name, p.node) for p in sel.pods] == [("agent-2", "n2"), ("agent-3", "n3")]
    assert (sel.revision, sel.template_hash) == ("2", "bbb")
    assert sel.problems == ("daemonset agent: expected 3 pods of revision 2, found 2",)


def test_daemonset_without_revisions_is_a_problem_not_a_crash() -> None:
    sel = select_daemonset_pods(daemonset=ds(), revisions=[], pods=[])
    assert sel.problems == ("daemonset agent: has no ControllerRevision yet",)


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("deployment/web", WorkloadRef("deployment", "web")),
        ("deploy/web", WorkloadRef("deployment", "web")),
        ("sts/db", WorkloadRef("statefulset", "db")),
        ("StatefulSet/db", WorkloadRef("statefulset", "db")),
        ("daemonsets.apps/agent", WorkloadRef("daemonset", "agent")),
        ("ds/node-exporter.v2", WorkloadRef("daemonset", "node-exporter.v2")),
    ],
)
def test_targets_accept_kubectl_spellings(text: str, ref: WorkloadRef) -> None:
    assert parse_target(text) == ref


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("web", "is not KIND/NAME"),
        ("cronjob/x", '"cronjob" is not a workload kind'),
        ("deployment/Web", 'invalid deployment name "Web"'),
        ("deployment/", "is not KIND/NAME"),
    ],
)
def test_bad_targets_say_how_to_fix_them(text: str, needle: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_target(text)
    assert needle in str(info.value)


def test_api_paths_per_kind() -> None:
    assert (
        api_path(kind="statefulset", namespace="ns", name="db")
        == "/apis/apps/v1/namespaces/ns/statefulsets/db"
    )
    assert api_path(kind="daemonset", namespace="ns") == "/apis/apps/v1/namespaces/ns/daemonsets"
