"""Restart-once policy: heal stale pods with one restart, never loop, never restart in vain."""

from __future__ import annotations

from typing import Literal

import pytest

from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.flow.decide import decide


def attempt(
    status: CheckStatus = CheckStatus.OK,
    *,
    problems: tuple[str, ...] = (),
    permanent_problems: tuple[str, ...] = (),
    pod_error: Uninspectable | None = None,
    container_error: Uninspectable | None = None,
) -> AttemptVerdict:
    checks = (CheckResult("env", "A", status),)
    container = ContainerVerdict("app", checks if container_error is None else (), container_error)
    pod = PodVerdict("web-1", "node-1", (container,), pod_error)
    return AttemptVerdict("2", (pod,), problems, permanent_problems)


TRANSIENT = Uninspectable("unreachable", "exec refused (HTTP 503)", permanent=False)
TIMED_OUT = Uninspectable("timeout", "exec did not finish within 30s (timed out)", permanent=False)
PERMANENT = Uninspectable("no_shell", "no /bin/sh in the image", permanent=True)
Mode = Literal["once", "never"]


@pytest.mark.parametrize(
    ("verdict", "restarts_done", "mode", "action"),
    [
        (attempt(), 0, "once", "pass"),
        (attempt(), 1, "once", "pass"),
        (attempt(), 0, "never", "pass"),
        (attempt(CheckStatus.MISMATCH), 0, "once", "restart"),
        (attempt(CheckStatus.MISSING), 0, "once", "restart"),
        (attempt(container_error=TRANSIENT), 0, "once", "restart"),
        (attempt(pod_error=TRANSIENT), 0, "once", "restart"),
        (attempt(problems=("expected 3 pods, found 2",)), 0, "once", "restart"),
        (attempt(CheckStatus.MISMATCH), 1, "once", "fail"),
        (attempt(container_error=TRANSIENT), 1, "once", "fail"),
        (attempt(CheckStatus.MISMATCH), 0, "never", "fail"),
        (attempt(container_error=PERMANENT), 0, "once", "fail"),
        (attempt(pod_error=PERMANENT), 0, "once", "fail"),
        (attempt(permanent_problems=("no container sidecar",)), 0, "once", "fail"),
    ],
)
def test_decision_table(verdict: AttemptVerdict, restarts_done: int, mode: Mode, action: str) -> None:
    decision = decide(verdict=verdict, restarts_done=restarts_done, restart_mode=mode)
    assert decision.action == action
    assert decision.reason


def test_second_mismatch_fails_after_one_restart() -> None:
    verdict = attempt(CheckStatus.MISMATCH)
    first = decide(verdict=verdict, restarts_done=0, restart_mode="once")
    second = decide(verdict=verdict, restarts_done=1, restart_mode="once")
    assert (first.action, second.action) == ("restart", "fail")
    assert "after 1 restart" in second.reason


@pytest.mark.parametrize("restarts_done", [1, 2, 5])
def test_never_more_than_one_restart(restarts_done: int) -> None:
    decision = decide(verdict=attempt(CheckStatus.MISMATCH), restarts_done=restarts_done, restart_mode="once")
    assert decision.action == "fail"


def test_permanent_uninspectable_fails_without_restart_and_says_why() -> None:
    verdict = attempt(CheckStatus.MISMATCH, container_error=PERMANENT)
    decision = decide(verdict=verdict, restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    assert "a restart cannot fix this" in decision.reason
    assert "no /bin/sh in the image" in decision.reason
    assert "web-1" in decision.reason


def test_never_mode_fails_on_first_mismatch() -> None:
    decision = decide(verdict=attempt(CheckStatus.MISMATCH), restarts_done=0, restart_mode="never")
    assert decision.action == "fail"
    assert "restarts disabled" in decision.reason


def test_pass_reason_counts_verified_pods() -> None:
    assert decide(verdict=attempt(), restarts_done=0, restart_mode="once").reason == "1 pod verified"


GONE = Uninspectable("pod_gone", "pod web-1 was deleted during inspection", permanent=False)


def _two_pods(second: PodVerdict) -> AttemptVerdict:
    ok = PodVerdict("web-0", "node-1", (ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.OK),)),))
    return AttemptVerdict("2", (ok, second))


@pytest.mark.parametrize("mode", ["once", "never"])
def test_pods_deleted_during_inspection_are_inspected_again_without_a_restart(mode: Mode) -> None:
    decision = decide(verdict=attempt(container_error=GONE), restarts_done=0, restart_mode=mode)
    assert decision.action == "recheck"
    assert decision.reason.startswith("web-1 was deleted during inspection")


def test_a_second_deletion_falls_back_to_the_restart_policy() -> None:
    verdict = attempt(container_error=GONE)
    assert decide(verdict=verdict, restarts_done=0, restart_mode="once", rechecks_done=1).action == "restart"
    assert decide(verdict=verdict, restarts_done=1, restart_mode="once", rechecks_done=1).action == "fail"


def test_a_mismatch_beside_a_deleted_pod_is_not_rechecked_away() -> None:
    stale = PodVerdict(
        "web-1", "node-2", (ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.MISSING),)),)
    )
    gone = PodVerdict("web-2", "node-2", (ContainerVerdict("app", (), GONE),))
    verdict = AttemptVerdict("2", (stale, gone))
    assert decide(verdict=verdict, restarts_done=0, restart_mode="once").action == "restart"
    # a pod short, or a pod whose other container mismatched before it went, is no deletion either
    short = attempt(container_error=GONE, problems=("expected 3 pods, found 2",))
    assert decide(verdict=short, restarts_done=0, restart_mode="once").action == "restart"
    mixed = PodVerdict(
        "web-1",
        "node-1",
        (
            ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.MISMATCH),)),
            ContainerVerdict("side", (), GONE),
        ),
    )
    assert decide(verdict=_two_pods(mixed), restarts_done=0, restart_mode="once").action == "restart"
    only_gone = PodVerdict("web-1", "node-1", (ContainerVerdict("app", (), GONE),))
    assert decide(verdict=_two_pods(only_gone), restarts_done=0, restart_mode="once").action == "recheck"


def test_a_pod_whose_http_check_found_it_deleted_is_inspected_again() -> None:
    gone_check = CheckResult("http", "8080/health", CheckStatus.UNINSPECTABLE, GONE.reason, code="pod_gone")
    refused = CheckResult(
        "http", "8080/health", CheckStatus.UNINSPECTABLE, "connection refused", code="unreachable"
    )
    app = (ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.OK),)),)
    gone = PodVerdict("web-1", "node-1", app, checks=(gone_check,))
    assert decide(verdict=_two_pods(gone), restarts_done=0, restart_mode="once").action == "recheck"
    alive = PodVerdict("web-1", "node-1", app, checks=(refused,))
    assert decide(verdict=_two_pods(alive), restarts_done=0, restart_mode="once").action == "restart"


def _pods(*errors: Uninspectable | None) -> AttemptVerdict:
    """One pod per entry: its one container timed out (the error) or answered with a mismatch."""
    pods = tuple(
        PodVerdict(
            f"web-{i}",
            "node-1",
            (ContainerVerdict("app", () if e else (CheckResult("env", "A", CheckStatus.MISMATCH),), e),),
        )
        for i, e in enumerate(errors)
    )
    return AttemptVerdict("2", pods)


def test_when_no_exec_finished_in_time_nothing_is_restarted_and_the_timeout_is_named() -> None:
    decision = decide(verdict=_pods(TIMED_OUT, TIMED_OUT, TIMED_OUT), restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    assert "a restart cannot fix this" in decision.reason and "--exec-timeout" in decision.reason


def test_a_timeout_beside_pods_that_answered_may_be_a_wedged_container_and_is_restarted_once() -> None:
    decision = decide(verdict=_pods(TIMED_OUT, None), restarts_done=0, restart_mode="once")
    assert decision.action == "restart"


def test_once_the_runs_own_timeout_ran_out_its_timeouts_are_not_the_pods() -> None:
    # the caller ends the run with the --timeout error; the decision does not blame the exec timeout
    decision = decide(verdict=_pods(TIMED_OUT, TIMED_OUT), restarts_done=0, restart_mode="once", out_of_time=True)
    assert decision.action == "restart" and "--exec-timeout" not in decision.reason
