"""The decision after each verdict: pass, fail, inspect again, or restart once. Pure: a restart may
heal stale pods, but never twice, never in vain, and never for anything the run did not see.

Default deny: a restart is sent only when every failure of the attempt is a check that saw stale
configuration and that the judgment says one restart fixes (`findings.restart_fixes`, the rule the
report's `restart_can_fix` shows). A pod or container that could not be inspected, a workload-level
problem, and any failure a later change adds that this module does not know are never a reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from verify.findings import (
    STALE,
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    PodVerdict,
    Uninspectable,
    restart_fixes,
)

MAX_RESTARTS = 1
# inspections repeated without a restart because pods were deleted while being inspected
MAX_RECHECKS = 1


@dataclass(frozen=True)
class Decision:
    action: Literal["pass", "restart", "recheck", "fail"]
    reason: str
    # the reason is a line of its own: the pods' own problems do not say it (a permanent cause's
    # reason only repeats them)
    said: bool = False


def _all_checks(pod: PodVerdict) -> list[CheckResult]:
    return [*pod.checks, *(c for container in pod.containers for c in container.checks)]


def _gone_pods(verdict: AttemptVerdict) -> list[str]:
    """The pods deleted while they were inspected (a drain, a scale-down, a manual delete), when
    that is all the run could not see: inspecting the revision's pods again sees their
    replacements, and any stale pod beside them again. Empty when anything else could not be seen
    or is a workload problem. A gone pod's other checks (its HTTP answers) are moot."""
    if verdict.problems or verdict.permanent_problems:
        return []
    gone: list[str] = []
    for pod in verdict.pods:
        errors = [e for e in (pod.error, *(c.error for c in pod.containers)) if e is not None]
        unseen = [c for c in _all_checks(pod) if c.status is CheckStatus.UNINSPECTABLE]
        if "pod_gone" in {e.code for e in errors} | {c.code for c in unseen}:
            gone.append(pod.name)
        elif errors or unseen:
            return []
    return gone


@dataclass
class _Blockers:
    """Why no restart may be sent, by kind: what a restart cannot fix, and what the run did not see."""

    cannot: dict[str, None]
    unseen: dict[str, None]

    def __bool__(self) -> bool:
        return bool(self.cannot or self.unseen)


def _error(blockers: _Blockers, where: str, err: Uninspectable) -> None:
    (blockers.cannot if err.permanent else blockers.unseen)[f"{where}: {err.reason}"] = None


def _check(blockers: _Blockers, where: str, check: CheckResult) -> None:
    if check.status is CheckStatus.OK or restart_fixes(check):
        return
    if check.status in STALE:
        # judged: a restart cannot fix it (or was never judged, which is no better)
        blockers.cannot[check.why or f"{where} {check.subject}: not judged"] = None
        return
    subject = f"{where} {check.type} {check.subject}"
    (blockers.cannot if check.permanent else blockers.unseen)[f"{subject}: {check.detail}"] = None


def _blockers(verdict: AttemptVerdict) -> _Blockers:
    """Every failure of the attempt that is not stale configuration a restart fixes, each once."""
    found = _Blockers(dict.fromkeys(verdict.permanent_problems), dict.fromkeys(verdict.problems))
    for pod in verdict.pods:
        if pod.status is CheckStatus.OK:
            continue
        where = f"pod {pod.name}"
        if pod.status not in STALE and pod.status is not CheckStatus.UNINSPECTABLE:
            found.unseen[f"{where}: {pod.status.value}"] = None  # a status this module does not know
        if pod.error is not None:
            _error(found, where, pod.error)
        for check in pod.checks:
            _check(found, where, check)
        for container in pod.containers:
            at = f"{where} container {container.name}"
            if container.error is not None:
                _error(found, at, container.error)
            for check in container.checks:
                _check(found, at, check)
    if not found and not any(restart_fixes(c) for pod in verdict.pods for c in _all_checks(pod)):
        found.unseen["verification failed, and no check shows stale configuration"] = None
    return found


def _all_timed_out(verdict: AttemptVerdict) -> bool:
    """No container answered: every inspection of every pod ran into the exec timeout. That says
    the exec timeout is too short for this cluster, or the API server or the nodes are slow,
    not that the pods are stale."""
    errors = [c.error for pod in verdict.pods for c in pod.containers] + [p.error for p in verdict.pods]
    answered = any(c.error is None for pod in verdict.pods for c in pod.containers)
    found = [e for e in errors if e is not None]
    return bool(found) and not answered and all(e.code == "timeout" for e in found)


def _summary(verdict: AttemptVerdict) -> str:
    counts = {s: 0 for s in (CheckStatus.MISMATCH, CheckStatus.MISSING, CheckStatus.UNINSPECTABLE)}
    for pod in verdict.pods:
        if pod.status in counts:
            counts[pod.status] += 1
    parts = [f"{n} pod{'s' if n != 1 else ''} {s.value}" for s, n in counts.items() if n]
    parts.extend(verdict.problems)
    return "; ".join(parts) or "verification failed"


def _refusal(blockers: _Blockers) -> str:
    if blockers.cannot:
        return f"a restart cannot fix this: {'; '.join([*blockers.cannot, *blockers.unseen])}"
    return (
        "not restarted: a restart is sent only for configuration seen to be stale, and the run could "
        f"not see it: {'; '.join(blockers.unseen)}"
    )


def decide(
    *,
    verdict: AttemptVerdict,
    restarts_done: int,
    restart_mode: Literal["once", "never"],
    rechecks_done: int = 0,
    out_of_time: bool = False,
    held: str = "",
) -> Decision:
    """pass when verified; fail when any failure is not stale configuration a restart fixes (and
    when no exec finished in time); inspect the replacements (once, without a restart) when the
    only failures are pods deleted during inspection; otherwise restart at most once.
    `out_of_time`: the run's --timeout has run out, so its timeouts are the run's, not the pods'.
    `held`: why no restart may be sent however it would help (a Rollout mid-way, a run inside an
    AnalysisRun)."""
    if verdict.ok:
        n = len(verdict.pods)
        return Decision("pass", f"{n} pod{'s' if n != 1 else ''} verified")
    if not out_of_time and _all_timed_out(verdict):
        why = (
            "a restart cannot fix this: no exec finished within --exec-timeout (VERIFY_EXEC_TIMEOUT); "
            "raise it, or check the API server and the nodes (a restart would not tell them apart)"
        )
        return Decision("fail", why, said=True)
    gone = _gone_pods(verdict)
    if gone and rechecks_done < MAX_RECHECKS:
        return Decision(
            "recheck",
            f"{', '.join(gone)} {'was' if len(gone) == 1 else 'were'} deleted during inspection; "
            "inspecting the rollout's pods again without a restart",
        )
    blockers = _blockers(verdict)
    if blockers:
        # a cause a restart cannot fix is said by the pods' own lines; why nothing was restarted
        # for what the run could not see is not, so it is a line of its own
        return Decision("fail", _refusal(blockers), said=not blockers.cannot)
    summary = _summary(verdict)
    if held:
        return Decision("fail", f"{summary}; {held}", said=True)
    if restart_mode == "never":
        return Decision("fail", f"{summary} (restarts disabled)")
    if restarts_done < MAX_RESTARTS:
        return Decision("restart", summary)
    plural = "s" if restarts_done != 1 else ""
    return Decision("fail", f"{summary} after {restarts_done} restart{plural}")
