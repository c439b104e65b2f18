"""Verified means stable (flow/stability.py): a container counts only when it was running and
ready at selection, for the settle window before its inspection, and is the same container
(ID, restartCount), still running and ready, after it. Pod JSON in, states and reasons out."""

from __future__ import annotations

from typing import Any

import pytest

from verify.flow.stability import changed, pod_state, settle_seconds, settle_window, unsteady_now

T0 = 1_750_000_000.0  # 2025-06-15T15:06:40Z


def stamp(seconds: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def running(
    name: str = "app",
    *,
    since: float = T0,
    restarts: int = 0,
    ready: bool = True,
    cid: str = "c1",
    last_ended: float | None = None,
) -> dict[str, Any]:
    last = {"exitCode": 3, "reason": "Error"}
    if last_ended is not None:
        last["finishedAt"] = stamp(last_ended)
    return {
        "name": name,
        "containerID": f"containerd://{cid}",
        "ready": ready,
        "restartCount": restarts,
        "state": {"running": {"startedAt": stamp(since)}},
        "lastState": {"terminated": last} if restarts else {},
    }


def crashed(name: str = "app", *, restarts: int = 2) -> dict[str, Any]:
    return {
        "name": name,
        "containerID": "containerd://c1",
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s"}},
        "lastState": {"terminated": {"exitCode": 3, "reason": "Error"}},
    }


def pod(
    *statuses: dict[str, Any], ready_since: float | None = T0, sidecars: tuple[dict[str, Any], ...] = ()
) -> dict[str, Any]:
    conditions = []
    if ready_since is not None:
        conditions.append(
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": stamp(ready_since)}
        )
    return {
        "metadata": {"name": "web-1", "uid": "u1"},
        "status": {
            "conditions": conditions,
            "containerStatuses": list(statuses),
            "initContainerStatuses": list(sidecars),
        },
    }


def test_a_container_ready_for_longer_than_the_window_is_inspected_at_once() -> None:
    state = pod_state(pod(running(since=T0)), containers=["app"])
    assert unsteady_now(state, now=T0 + 60) == {}
    assert settle_seconds(pods=[state], window=5, now=T0 + 60) == 0


def test_a_container_ready_a_moment_ago_waits_out_the_rest_of_the_window() -> None:
    state = pod_state(pod(running(since=T0), ready_since=T0 + 1), containers=["app"])
    assert settle_seconds(pods=[state], window=5, now=T0 + 2) == pytest.approx(4)


def test_a_clock_behind_the_cluster_waits_the_window_never_longer() -> None:
    state = pod_state(pod(running(since=T0)), containers=["app"])
    assert settle_seconds(pods=[state], window=5, now=T0 - 3600) == 5


def test_the_window_is_the_workloads_min_ready_seconds_when_that_is_longer() -> None:
    assert settle_window(setting=5, workload={"spec": {"minReadySeconds": 30}}) == 30
    assert settle_window(setting=5, workload={"spec": {}}) == 5
    assert settle_window(setting=0, workload={"spec": {"minReadySeconds": 2}}) == 2


def test_a_crash_looping_container_is_unsteady_at_selection_naming_restarts_and_last_exit() -> None:
    state = pod_state(pod(crashed(restarts=2), ready_since=None), containers=["app"])
    assert unsteady_now(state, now=T0 + 60) == {
        "app": "waiting in CrashLoopBackOff after 2 restarts (last run: exit code 3 (Error))"
    }


def test_a_container_running_again_after_a_crash_minutes_ago_is_still_crash_looping() -> None:
    # its runs outlast the settle window: inspected between two crashes, it would pass every time
    state = pod_state(pod(running(since=T0, restarts=4, last_ended=T0 - 1)), containers=["app"])
    assert unsteady_now(state, now=T0 + 40) == {
        "app": "running after 4 restarts (last run: exit code 3 (Error)), which ended 41 s ago: the kubelet "
        "counts a container crash-looping until it has run 10 min without exiting"
    }


def test_a_container_whose_last_crash_is_older_than_the_kubelets_back_off_memory_is_steady() -> None:
    # client-go's Backoff forgets a container that ran 2 x MaxContainerBackOff (600 s) unharmed
    state = pod_state(pod(running(since=T0, restarts=1, last_ended=T0 - 1)), containers=["app"])
    assert unsteady_now(state, now=T0 + 598) != {}
    assert unsteady_now(state, now=T0 + 600) == {}
    assert unsteady_now(pod_state(pod(running(restarts=1)), containers=["app"]), now=T0 + 5) == {}  # no time


def test_running_but_not_ready_and_never_started_are_unsteady() -> None:
    state = pod_state(pod(running(ready=False), ready_since=None), containers=["app", "proxy"])
    assert unsteady_now(state, now=T0 + 60) == {"app": "running but not ready", "proxy": "not started"}


def test_a_native_sidecar_is_read_from_the_init_container_statuses() -> None:
    state = pod_state(pod(running(), sidecars=(crashed("proxy", restarts=1),)), containers=["app", "proxy"])
    assert list(unsteady_now(state, now=T0 + 60)) == ["proxy"]


def test_a_container_that_restarted_during_its_inspection_is_named_with_the_count() -> None:
    before = pod_state(pod(running(restarts=1)), containers=["app"])
    after = pod_state(pod(running(restarts=3, cid="c3")), containers=["app"])
    assert changed(before=before, after=after) == {
        "app": "restarted 2 times while it was verified, now running after 3 restarts (last run: exit code 3 (Error))"
    }


def test_a_container_replaced_under_the_same_count_is_a_restart_too() -> None:
    before = pod_state(pod(running(cid="c1")), containers=["app"])
    after = pod_state(pod(running(cid="c2")), containers=["app"])
    assert changed(before=before, after=after)["app"].startswith("restarted while it was verified")


def test_stopping_or_turning_unready_during_the_inspection_fails_it() -> None:
    before = pod_state(pod(running(restarts=2)), containers=["app"])
    assert changed(before=before, after=pod_state(pod(crashed(restarts=2)), containers=["app"])) == {
        "app": "stopped while it was verified, now waiting in CrashLoopBackOff after 2 restarts "
        "(last run: exit code 3 (Error))"
    }
    unready = pod_state(pod(running(restarts=2, ready=False), ready_since=None), containers=["app"])
    assert changed(before=before, after=unready)["app"].startswith("no longer ready while it was verified")


def test_a_container_that_held_still_is_not_named_and_one_unsteady_at_selection_is_not_named_twice() -> None:
    before = pod_state(pod(running(), crashed("proxy")), containers=["app", "proxy"])
    assert changed(before=before, after=before) == {}
