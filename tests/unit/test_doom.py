"""Which waiting pods can never become ready (diagnose/doom.py): plain pod, event and workload JSON
in, verdicts out. The texts are the kubelet's, the runtime's, the scheduler's and the API
server's own: pkg/kubelet/images/types.go and image_manager.go (`Failed to pull image %q: %v`),
pkg/kubelet/container/sync_result.go, containerd's StartError, pkg/scheduler/framework/types.go
FitError.Error(), the resource quota admission's `exceeded quota: ...` and Pod Security's
`violates PodSecurity ...`."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from verify.diagnose.doom import (
    creation_doom,
    events_of,
    never_schedulable,
    pod_dooms,
    pull_failed_for_good,
    quantity,
    quota_never_fits,
    refused_creation,
    warning_lines,
)

NOT_FOUND = (
    'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/busybox:nope": '
    'failed to resolve reference "docker.io/library/busybox:nope": docker.io/library/busybox:nope: not found'
)
NO_HOST = (
    'rpc error: code = Unknown desc = failed to pull and unpack image "reg.example/app:1": failed to '
    'resolve reference "reg.example/app:1": failed to do request: Head "https://reg.example/v2/app/'
    'manifests/1": dial tcp: lookup reg.example on 127.0.0.53:53: no such host'
)
DENIED = (
    'rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/acme/privat:1": failed '
    'to resolve reference "docker.io/acme/privat:1": pull access denied, repository does not exist or '
    "may require authorization: server message: insufficient_scope: authorization failed"
)
MISSING_BINARY = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
    "create failed: unable to start container process: error during container init: exec: "
    '"no-such-binary": executable file not found in $PATH: unknown'
)


def pod(
    *statuses: dict[str, Any],
    node: str = "node-1",
    conditions: list[dict[str, Any]] | None = None,
    phase: str = "Pending",
    init: tuple[dict[str, Any], ...] = (),
) -> dict[str, Any]:
    return {
        "metadata": {"name": "web-1", "uid": "u1"},
        "spec": {"nodeName": node} if node else {},
        "status": {
            "phase": phase,
            "conditions": conditions or [],
            "containerStatuses": list(statuses),
            "initContainerStatuses": list(init),
        },
    }


def waiting(
    reason: str, message: str = "", *, restarts: int = 0, name: str = "app", **extra: Any
) -> dict[str, Any]:
    state = {"waiting": {"reason": reason, **({"message": message} if message else {})}}
    return {"name": name, "ready": False, "restartCount": restarts, "state": state, **extra}


def pull_event(
    error: str, *, count: int = 1, at: str = "2025-01-01T00:00:10Z", container: str = "app"
) -> dict[str, Any]:
    return {
        "type": "Warning",
        "reason": "Failed",
        "message": f'Failed to pull image "busybox:nope": {error}',
        "count": count,
        "lastTimestamp": at,
        "involvedObject": {
            "kind": "Pod",
            "name": "web-1",
            "uid": "u1",
            "fieldPath": f"spec.containers{{{container}}}",
        },
    }


# -- image pulls -----------------------------------------------------------------------------------


def test_a_tag_not_found_twice_in_a_row_is_doomed_with_the_runtimes_error() -> None:
    (doom,) = pod_dooms(
        pod(waiting("ImagePullBackOff", 'Back-off pulling image "busybox:nope"')),
        events=[pull_event(NOT_FOUND, count=2)],
    )
    assert (doom.pod, doom.node, doom.container, doom.reason) == ("web-1", "node-1", "app", "ErrImagePull")
    assert doom.message == NOT_FOUND
    assert "2 consecutive pulls" in doom.why
    assert doom.line(workload="deployment web").startswith(
        "deployment web: pod web-1 (node-1) container app: ErrImagePull: rpc error: code = NotFound"
    )


def test_one_failed_pull_is_not_yet_doom() -> None:
    assert pod_dooms(pod(waiting("ErrImagePull", NOT_FOUND)), events=[pull_event(NOT_FOUND)]) == []


def test_without_events_a_failing_pull_is_never_judged_final() -> None:
    assert pod_dooms(pod(waiting("ErrImagePull", NOT_FOUND))) == []


@pytest.mark.parametrize(
    "error",
    [
        DENIED,
        "rpc error: code = Unknown desc = ...: 401 Unauthorized",
        "...: manifest unknown: manifest unknown",
    ],
)
def test_access_denied_unauthorized_and_manifest_unknown_are_final_pulls(error: str) -> None:
    assert pull_failed_for_good([pull_event(error, count=2)], field_path="spec.containers{app}") is not None


def test_a_registry_that_cannot_be_reached_may_come_back() -> None:
    assert pull_failed_for_good([pull_event(NO_HOST, count=5)], field_path="spec.containers{app}") is None


def test_two_pulls_count_only_when_they_are_the_last_ones() -> None:
    path = "spec.containers{app}"
    # not found, then the registry was unreachable: the last pull did not fail for good
    events = [
        pull_event(NOT_FOUND, at="2025-01-01T00:00:01Z"),
        pull_event(NO_HOST, at="2025-01-01T00:00:11Z"),
    ]
    assert pull_failed_for_good(events, field_path=path) is None
    # unreachable, then not found twice (two events: the first not aggregated)
    events = [
        pull_event(NO_HOST, at="2025-01-01T00:00:01Z"),
        pull_event(NOT_FOUND, at="2025-01-01T00:00:11Z"),
        pull_event(DENIED, at="2025-01-01T00:00:31Z"),
    ]
    assert pull_failed_for_good(events, field_path=path) is not None
    # another container's pulls are not this one's
    assert (
        pull_failed_for_good([pull_event(NOT_FOUND, count=3, container="sidecar")], field_path=path) is None
    )


def test_invalid_image_names_and_never_pull_are_doomed_at_once() -> None:
    (bad,) = pod_dooms(pod(waiting("InvalidImageName", 'Failed to apply default image tag "Busybox": ...')))
    assert bad.reason == "InvalidImageName" and "cannot be parsed" in bad.why
    (never,) = pod_dooms(
        pod(waiting("ErrImageNeverPull", 'Container image "app:1" is not present with pull policy of Never'))
    )
    assert never.reason == "ErrImageNeverPull" and "pull policy" in never.message


# -- programs and crashes ------------------------------------------------------------------------


def test_a_program_the_image_lacks_is_doomed_from_its_start_error() -> None:
    status = waiting(
        "CrashLoopBackOff",
        "back-off 10s restarting failed container=app",
        restarts=1,
        lastState={"terminated": {"exitCode": 128, "reason": "StartError", "message": MISSING_BINARY}},
    )
    (doom,) = pod_dooms(pod(status))
    assert doom.reason == "StartError" and 'exec: "no-such-binary": executable file not found' in doom.message
    assert not doom.ran


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("RunContainerError", MISSING_BINARY),
        (
            "CreateContainerError",
            'failed to generate container "x" spec: failed to generate spec: no command specified',
        ),
        ("RunContainerError", 'exec: "/app/run": stat /app/run: no such file or directory: unknown'),
    ],
)
def test_create_and_run_errors_for_a_missing_program_are_doomed(reason: str, message: str) -> None:
    (doom,) = pod_dooms(pod(waiting(reason, message)))
    assert doom.reason == reason


def test_a_create_error_for_another_cause_may_pass() -> None:
    assert (
        pod_dooms(
            pod(waiting("CreateContainerError", 'failed to reserve container name "app": name is reserved'))
        )
        == []
    )


def test_a_crash_loop_is_doomed_from_its_third_restart_with_the_last_exit() -> None:
    last = {"lastState": {"terminated": {"exitCode": 3, "reason": "Error"}}}
    assert pod_dooms(pod(waiting("CrashLoopBackOff", "back-off 20s", restarts=2, **last))) == []
    (doom,) = pod_dooms(pod(waiting("CrashLoopBackOff", "back-off 40s", restarts=3, **last)))
    assert doom.reason == "CrashLoopBackOff" and doom.ran
    assert doom.message == "3 restarts, last run: exit code 3 (Error)"


def test_an_init_container_in_a_crash_loop_dooms_its_pod() -> None:
    init = waiting("CrashLoopBackOff", "back-off", restarts=4, name="migrate")
    (doom,) = pod_dooms(pod(init=(init,)))
    assert doom.init and doom.container == "migrate"
    assert "init container migrate: CrashLoopBackOff" in doom.line(workload="deployment web")


def test_a_missing_secret_is_never_doom_however_long_it_lasts() -> None:
    status = waiting("CreateContainerConfigError", 'secret "web-env" not found', restarts=0)
    assert pod_dooms(pod(status)) == []


def test_run_as_non_root_with_a_root_image_is_the_one_config_error_that_is_final() -> None:
    message = (
        'container has runAsNonRoot and image will run as root (pod: "web-1_default(u1)", container: app)'
    )
    (doom,) = pod_dooms(pod(waiting("CreateContainerConfigError", message)))
    assert doom.reason == "CreateContainerConfigError" and "runAsUser" in doom.why


def test_pods_going_away_or_finished_are_not_judged() -> None:
    gone = pod(waiting("InvalidImageName", "x"))
    gone["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    assert pod_dooms(gone) == []
    assert pod_dooms(pod(waiting("InvalidImageName", "x"), phase="Failed")) == []


# -- scheduling ----------------------------------------------------------------------------------


def unschedulable(message: str) -> dict[str, Any]:
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    return pod(node="", conditions=[cond])


@pytest.mark.parametrize(
    ("message", "doomed"),
    [
        (
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: "
            "0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
            True,
        ),
        (
            "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
            "2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 "
            "Preemption is not helpful for scheduling..",
            True,
        ),
        ("0/2 nodes are available: 2 node(s) didn't match node selector.", True),  # before 1.20
        (
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No "
            "preemption victims found for incoming pod..",
            False,  # an autoscaler may add a node
        ),
        (
            "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node "
            "affinity/selector. preemption: ...",
            False,  # one node would take it once it has room
        ),
        ("0/3 nodes are available: 3 node(s) were unschedulable.", False),  # cordons end
        ("no nodes available to schedule pods", False),
        ("0/1 nodes are available: 1 pod has unbound immediate PersistentVolumeClaims.", False),
    ],
)
def test_only_reasons_no_node_can_ever_satisfy_doom_an_unscheduled_pod(message: str, doomed: bool) -> None:
    assert never_schedulable(message) is doomed
    dooms = pod_dooms(unschedulable(message))
    assert bool(dooms) is doomed
    if doomed:
        assert dooms[0].reason == "FailedScheduling" and dooms[0].container == ""
        assert (
            dooms[0]
            .line(workload="deployment web")
            .startswith("deployment web: pod web-1: FailedScheduling: 0/")
        )


# -- refused creation ------------------------------------------------------------------------------


def test_quantities_read_as_kubernetes_writes_them() -> None:
    assert quantity("500m") == Decimal("0.5")
    assert quantity("2Gi") == 2 * 2**30
    assert quantity("1e3") == 1000
    assert quantity("1.5k") == 1500
    assert quantity("lots") is None


def test_a_quota_below_one_pods_request_never_fits_but_a_full_one_may_free_up() -> None:
    never = (
        'pods "web-7c9f-x" is forbidden: exceeded quota: compute, requested: requests.cpu=2,requests.memory=1Gi, '
        "used: requests.cpu=0,requests.memory=0, limited: requests.cpu=1,requests.memory=4Gi"
    )
    assert quota_never_fits(never) == "compute"
    full = (
        'pods "web-7c9f-x" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, '
        "used: requests.cpu=1800m, limited: requests.cpu=2"
    )
    assert quota_never_fits(full) is None  # a rolling update frees it as old pods go
    assert creation_doom(full) is None
    assert "resource quota compute" in (creation_doom(never) or "")


def test_pod_security_and_admission_denials_are_final_a_missing_service_account_is_not() -> None:
    security = 'pods "web-7c9f-x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false'
    assert "Pod Security" in (creation_doom(security) or "")
    webhook = 'admission webhook "policy.example.com" denied the request: images must come from our registry'
    assert "admission policy" in (creation_doom(webhook) or "")
    account = 'pods "web-7c9f-x" is forbidden: error looking up service account default/app: serviceaccount "app" not found'
    assert creation_doom(account) is None


def test_a_deployments_replica_failure_or_a_statefulsets_failed_create_event_is_read() -> None:
    message = 'pods "web-7c9f-x" is forbidden: violates PodSecurity "baseline:latest": privileged'
    dep = {
        "metadata": {"name": "web", "uid": "d1"},
        "status": {
            "conditions": [
                {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message}
            ]
        },
    }
    doom = refused_creation(workload=dep)
    assert doom is not None and doom.reason == "FailedCreate" and doom.pod == ""
    assert doom.line(workload="deployment web").startswith("deployment web: FailedCreate: pods ")
    sts = {"metadata": {"name": "db", "uid": "s1"}, "status": {}}
    event = {
        "reason": "FailedCreate",
        "type": "Warning",
        "message": f"create Pod db-0 in StatefulSet db failed error: {message}",
        "involvedObject": {"kind": "StatefulSet", "name": "db", "uid": "s1"},
        "lastTimestamp": "2025-01-01T00:00:00Z",
    }
    assert refused_creation(workload=sts, events=[event]) is not None
    assert refused_creation(workload=sts, events=[]) is None


# -- evidence --------------------------------------------------------------------------------------


def test_a_pods_warnings_are_listed_as_krane_shows_them_newest_last() -> None:
    events = [
        pull_event(NOT_FOUND, count=3, at="2025-01-01T00:00:30Z"),
        {**pull_event("x"), "type": "Normal", "reason": "Pulling", "message": 'Pulling image "busybox:nope"'},
        {
            **pull_event("y", at="2025-01-01T00:00:01Z"),
            "reason": "BackOff",
            "message": "Back-off pulling image",
        },
        {**pull_event("z"), "involvedObject": {"kind": "Pod", "name": "web-1", "uid": "another-pod"}},
    ]
    own = events_of(events, pod=pod())
    assert len(own) == 3
    lines = warning_lines(own)
    assert lines[0] == "BackOff: Back-off pulling image"
    assert lines[-1].startswith('Failed (x3): Failed to pull image "busybox:nope": rpc error')
