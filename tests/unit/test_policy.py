"""Restart-once policy: heal stale pods with one restart, never loop, never restart in vain, and
never for anything the run did not see (default deny: only missing/mismatch checks judged
fixable)."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.flow.decide import MAX_RECHECKS, decide
from verify.report.jsondoc import to_json
from verify.report.result import WorkloadResult, combine


def attempt(
    status: CheckStatus = CheckStatus.OK,
    *,
    problems: tuple[str, ...] = (),
    permanent_problems: tuple[str, ...] = (),
    pod_error: Uninspectable | None = None,
    container_error: Uninspectable | None = None,
) -> AttemptVerdict:
    checks = (stale("A", status),)
    container = ContainerVerdict("app", checks if container_error is None else (), container_error)
    pod = PodVerdict("web-1", "node-1", (container,), pod_error)
    return AttemptVerdict("2", (pod,), problems, permanent_problems)


def stale(key: str, status: CheckStatus = CheckStatus.MISSING, *, fixable: bool = True) -> CheckResult:
    """An env check as the judgment leaves it (diagnose.remedy.assess): failing ones judged."""
    if status is CheckStatus.OK:
        return CheckResult("env", key, status)
    return CheckResult("env", key, status, restart_can_fix=fixable, why="env is read when a container starts")


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
        # what the run did not see is never a reason to restart
        (attempt(container_error=TRANSIENT), 0, "once", "fail"),
        (attempt(pod_error=TRANSIENT), 0, "once", "fail"),
        (attempt(problems=("expected 3 pods, found 2",)), 0, "once", "fail"),
        (attempt(CheckStatus.MISMATCH, problems=("expected 3 pods, found 2",)), 0, "once", "fail"),
        (attempt(CheckStatus.UNINSPECTABLE), 0, "once", "fail"),
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


def test_a_second_deletion_fails_without_a_restart() -> None:
    # a pod deleted again while its replacement was inspected: still not seen, so never restarted
    verdict = attempt(container_error=GONE)
    decision = decide(verdict=verdict, restarts_done=0, restart_mode="once", rechecks_done=1)
    assert decision.action == "fail"
    assert decision.reason == (
        "not restarted: a restart is sent only for configuration seen to be stale, and the run could "
        "not see it: pod web-1 container app: pod web-1 was deleted during inspection"
    )


def test_a_stale_pod_beside_a_deleted_one_is_seen_again_before_any_restart() -> None:
    # the deleted pod's replacement is not seen yet: inspect the revision again, then judge
    missing = PodVerdict("web-1", "node-2", (ContainerVerdict("app", (stale("A"),)),))
    gone = PodVerdict("web-2", "node-2", (ContainerVerdict("app", (), GONE),))
    verdict = AttemptVerdict("2", (missing, gone))
    assert decide(verdict=verdict, restarts_done=0, restart_mode="once").action == "recheck"
    assert decide(verdict=verdict, restarts_done=0, restart_mode="once", rechecks_done=1).action == "fail"
    mixed = PodVerdict(
        "web-1",
        "node-1",
        (ContainerVerdict("app", (stale("A", CheckStatus.MISMATCH),)), ContainerVerdict("side", (), GONE)),
    )
    assert decide(verdict=_two_pods(mixed), restarts_done=0, restart_mode="once").action == "recheck"
    # a pod short is no deletion; nor is a pod the run could not see for another reason
    short = attempt(container_error=GONE, problems=("expected 3 pods, found 2",))
    assert decide(verdict=short, restarts_done=0, restart_mode="once").action == "fail"
    refused = PodVerdict("web-3", "node-1", (ContainerVerdict("app", (), TRANSIENT),))
    assert decide(verdict=AttemptVerdict("2", (gone, refused)), restarts_done=0, restart_mode="once").action == (
        "fail"
    )


def test_a_pod_whose_http_check_found_it_deleted_is_inspected_again() -> None:
    gone_check = CheckResult("http", "8080/health", CheckStatus.UNINSPECTABLE, GONE.reason, code="pod_gone")
    refused = CheckResult(
        "http", "8080/health", CheckStatus.UNINSPECTABLE, "connection refused", code="unreachable"
    )
    app = (ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.OK),)),)
    gone = PodVerdict("web-1", "node-1", app, checks=(gone_check,))
    assert decide(verdict=_two_pods(gone), restarts_done=0, restart_mode="once").action == "recheck"
    alive = PodVerdict("web-1", "node-1", app, checks=(refused,))
    decision = decide(verdict=_two_pods(alive), restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    assert "pod web-1 http 8080/health: connection refused" in decision.reason


def _pods(*errors: Uninspectable | None) -> AttemptVerdict:
    """One pod per entry: its one container timed out (the error) or answered with a mismatch."""
    pods = tuple(
        PodVerdict(
            f"web-{i}",
            "node-1",
            (ContainerVerdict("app", () if e else (stale("A", CheckStatus.MISMATCH),), e),),
        )
        for i, e in enumerate(errors)
    )
    return AttemptVerdict("2", pods)


def test_when_no_exec_finished_in_time_nothing_is_restarted_and_the_timeout_is_named() -> None:
    decision = decide(verdict=_pods(TIMED_OUT, TIMED_OUT, TIMED_OUT), restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    assert "a restart cannot fix this" in decision.reason and "--exec-timeout" in decision.reason


def test_a_timeout_beside_a_stale_pod_is_not_restarted() -> None:
    # the stale pod alone would be restarted; the one the run could not see stops it
    decision = decide(verdict=_pods(TIMED_OUT, None), restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    assert decision.reason.startswith("not restarted: ")
    assert "pod web-0 container app: exec did not finish within 30s (timed out)" in decision.reason
    assert decide(verdict=_pods(None, None), restarts_done=0, restart_mode="once").action == "restart"


def test_once_the_runs_own_timeout_ran_out_its_timeouts_are_not_blamed_on_the_exec_timeout() -> None:
    decision = decide(verdict=_pods(TIMED_OUT, TIMED_OUT), restarts_done=0, restart_mode="once", out_of_time=True)
    assert decision.action == "fail" and "--exec-timeout" not in decision.reason


@pytest.mark.parametrize(
    "check",
    [
        # a file that exists but the container's user cannot read (judge._unreadable)
        CheckResult(
            "file", "/etc/tls/tls.key", CheckStatus.UNINSPECTABLE, "exists but the exec's user cannot read it",
            permanent=True, code="exec_failed", restart_can_fix=False,
        ),
        # even if something marked it fixable, what was not seen is not stale
        CheckResult("file", "/etc/x", CheckStatus.UNINSPECTABLE, "unreadable", restart_can_fix=True),
        # a failing check nobody judged
        CheckResult("env", "A", CheckStatus.MISSING),
        # a kind of check this version does not know
        CheckResult("stability", "app", CheckStatus.MISMATCH, "restarted during inspection"),
    ],
)
def test_a_check_the_run_did_not_see_stale_or_nobody_judged_fixable_is_never_restarted(
    check: CheckResult,
) -> None:
    pod = PodVerdict("web-1", "node-1", (ContainerVerdict("app", (stale("B"), check)),))
    decision = decide(verdict=AttemptVerdict("2", (pod,)), restarts_done=0, restart_mode="once")
    assert decision.action == "fail"


# -- the decision and the report cannot disagree -----------------------------------------------

_ANY_CHECK = st.builds(
    CheckResult,
    type=st.sampled_from(["env", "file", "http", "stability"]),
    subject=st.sampled_from(["A", "B", "/etc/app.conf", "8080/health"]),
    status=st.sampled_from(list(CheckStatus)),
    detail=st.sampled_from(["", "not set in the container", "exec refused (HTTP 503)"]),
    permanent=st.booleans(),
    code=st.sampled_from(["", "pod_gone", "timeout", "exec_failed"]),
    restart_can_fix=st.sampled_from([None, True, False]),
    why=st.sampled_from(["", "env is read when a container starts", "a restart cannot add it"]),
)
# most verdicts are one step from a restart, so that the one thing that must stop it is found
_CHECKS = st.one_of(
    st.just(CheckResult("env", "A", CheckStatus.OK)),
    st.just(stale("B")),
    st.just(stale("C", CheckStatus.MISMATCH)),
    _ANY_CHECK,
)
_ERRORS = st.builds(
    Uninspectable,
    code=st.sampled_from(["not_running", "timeout", "exec_failed", "pod_gone", "no_shell", "forbidden"]),
    reason=st.sampled_from(["exec refused by the API server (HTTP 503)", "container app is not running"]),
    permanent=st.booleans(),
)
_MAYBE_ERROR = st.one_of(st.none(), st.none(), _ERRORS)
_CONTAINERS = st.builds(
    ContainerVerdict,
    name=st.sampled_from(["app", "side"]),
    checks=st.lists(_CHECKS, max_size=3).map(tuple),
    error=_MAYBE_ERROR,
)
_PODS = st.builds(
    PodVerdict,
    name=st.sampled_from(["web-0", "web-1", "web-2"]),
    node=st.just("node-1"),
    containers=st.lists(_CONTAINERS, min_size=1, max_size=2).map(tuple),
    error=_MAYBE_ERROR,
    checks=st.lists(_CHECKS, max_size=1).map(tuple),
)
_VERDICTS = st.builds(
    AttemptVerdict,
    revision=st.just("2"),
    pods=st.lists(_PODS, min_size=1, max_size=3).map(tuple),
    problems=st.sampled_from([(), (), ("expected 3 pods of revision 2, found 2",)]),
    permanent_problems=st.sampled_from([(), (), ('container "x" is not in the pod template',)]),
)


def _report(verdict: AttemptVerdict) -> dict[str, Any]:
    workload = WorkloadResult(
        kind="deployment", namespace="default", name="web", attempts=(verdict,), restarted=False
    )
    return to_json(run=combine(workloads=(workload,)))["workloads"][0]["attempts"][0]


@settings(max_examples=400, deadline=None)
@given(verdict=_VERDICTS, rechecks=st.sampled_from([0, MAX_RECHECKS]))
def test_a_restart_is_decided_exactly_when_the_report_says_a_restart_fixes_every_failure(
    verdict: AttemptVerdict, rechecks: int
) -> None:
    doc = _report(verdict)
    failing = [
        c
        for pod in doc["pods"]
        for c in (*pod["checks"], *(c for ct in pod["containers"] for c in ct["checks"]))
        if c["status"] != "ok"
    ]
    unseen = [p for p in doc["pods"] if p["reason"]] + [
        ct for p in doc["pods"] for ct in p["containers"] if ct["reason"]
    ]
    report_says_restart = (
        not verdict.ok
        and not doc["problems"]
        and not unseen
        and bool(failing)
        and all(c["restart_can_fix"] is True for c in failing)
    )
    decision = decide(verdict=verdict, restarts_done=0, restart_mode="once", rechecks_done=rechecks)
    assert (decision.action == "restart") == report_says_restart, (decision, doc)
    if any(c["restart_can_fix"] is False for c in failing) or unseen or doc["problems"]:
        assert decision.action != "restart"
