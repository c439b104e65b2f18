"""Restart-once policy: heal stale pods with one restart, never loop, never restart in vain."""

from __future__ import annotations

from typing import Literal

import pytest

from verify.model import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.policy import decide


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


TRANSIENT = Uninspectable("timeout", "exec timed out", permanent=False)
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
