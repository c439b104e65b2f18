"""The decision after each verdict: pass, fail, inspect again, or restart once. Pure: a restart may
heal stale pods, but never twice and never in vain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from verify.diagnose.remedy import unfixable
from verify.findings import AttemptVerdict, CheckStatus, Uninspectable

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


def _gone_pods(verdict: AttemptVerdict) -> list[str]:
    """The failing pods, when every one of them was deleted while it was inspected (a drain,
    a scale-down, a manual delete); empty when anything else failed. A gone pod's other checks
    (its HTTP answers) are moot: its replacement is what will serve."""
    if verdict.problems or verdict.permanent_problems:
        return []
    gone: list[str] = []
    for pod in verdict.pods:
        if pod.status is CheckStatus.OK:
            continue
        codes = [e.code for e in (pod.error, *(c.error for c in pod.containers)) if e is not None]
        if "pod_gone" not in (*codes, *(c.code for c in pod.checks)):
            return []
        if any(c.error is None and c.status is not CheckStatus.OK for c in pod.containers):
            return []  # a mismatch seen before the pod went is still a mismatch
        gone.append(pod.name)
    return gone


def _permanent_errors(verdict: AttemptVerdict) -> list[str]:
    """Problems a restart cannot fix: they only waste a production restart."""
    found = list(verdict.permanent_problems)
    for pod in verdict.pods:
        errors: list[tuple[str, Uninspectable]] = []
        if pod.error is not None:
            errors.append((f"pod {pod.name}", pod.error))
        errors.extend(
            (f"pod {pod.name} container {c.name}", c.error) for c in pod.containers if c.error is not None
        )
        found.extend(f"{where}: {err.reason}" for where, err in errors if err.permanent)
        found.extend(
            f"pod {pod.name} http {c.subject}: {c.detail}"
            for c in pod.checks
            if c.status is CheckStatus.UNINSPECTABLE and c.permanent
        )
    return found


def _all_timed_out(verdict: AttemptVerdict) -> bool:
    """No container answered: every inspection of every pod ran into the exec timeout. That says
    the exec timeout is too short for this cluster, or the API server or the nodes are slow,
    not that the pods are stale: a restart cannot be known to help."""
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


def decide(
    *,
    verdict: AttemptVerdict,
    restarts_done: int,
    restart_mode: Literal["once", "never"],
    rechecks_done: int = 0,
    out_of_time: bool = False,
) -> Decision:
    """pass when verified; fail on permanent errors, and when no exec finished in time;
    inspect the replacements (once, without a restart) when the only failures are pods deleted
    during inspection; otherwise restart at most once. `out_of_time`: the run's --timeout has
    run out, so its timeouts are the run's, not the pods' (the caller ends the run)."""
    if verdict.ok:
        n = len(verdict.pods)
        return Decision("pass", f"{n} pod{'s' if n != 1 else ''} verified")
    permanent = _permanent_errors(verdict) + unfixable(verdict)
    if permanent:
        return Decision("fail", f"a restart cannot fix this: {'; '.join(permanent)}")
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
    summary = _summary(verdict)
    if restart_mode == "never":
        return Decision("fail", f"{summary} (restarts disabled)")
    if restarts_done < MAX_RESTARTS:
        return Decision("restart", summary)
    plural = "s" if restarts_done != 1 else ""
    return Decision("fail", f"{summary} after {restarts_done} restart{plural}")
