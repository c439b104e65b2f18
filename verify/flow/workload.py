"""One workload's whole verdict: wait for the rollout, inspect, decide, restart at most once,
inspect again; one call per step, every ending turned into a WorkloadResult."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Literal

from verify import errors
from verify.config.job import TargetPlan
from verify.diagnose.rollout import creation_failure, waiting_reasons
from verify.exitcodes import ExitCode
from verify.findings import AttemptVerdict, CheckStatus
from verify.flow.attempt import attempt
from verify.flow.decide import decide
from verify.flow.lookup import Lookup
from verify.flow.prognosis import CHECK_EVERY, Prognosis
from verify.flow.restart import Restarter, Revision
from verify.flow.rollout_status import workload_state
from verify.flow.state import Log, RunContext, WorkloadState
from verify.flow.wait import wait_for_rollout
from verify.kube import objects
from verify.kube.kinds import api_path
from verify.report.result import WorkloadResult
from verify.report.text import checked_line, problem_lines


def _rollout_failure(state: WorkloadState, exc: errors.RolloutNotComplete) -> str:
    """The rollout's own message, with the waiting reasons of the pods holding it back."""
    reasons: list[str] = []
    with contextlib.suppress(errors.VerifyError):
        pods = state.lookup.pods(selector=objects.selector(exc.workload))
        reasons = waiting_reasons(pods=pods, mount_failures=state.lookup.mount_failures(pods))
    msg = exc.message
    refused = creation_failure(workload=exc.workload)  # no pod to wait for: the API refuses them
    reasons = ([refused] if refused else []) + reasons
    if reasons:
        msg += "; " + "; ".join(reasons[:10])
    return msg


def _landed_meanwhile(state: WorkloadState, inspected: dict[str, Any]) -> bool:
    """A new revision landed while the old one was inspected: the verdict is about pods that are
    going away (and was judged against the old template), so the new one is inspected instead."""
    ref = state.plan.ref
    current = state.context.api.get(api_path(kind=ref.kind, namespace=state.namespace, name=ref.name))
    if objects.template(current) == objects.template(inspected):
        return False  # a scale or a label moves the generation, not the revision
    state.log(f"{state.label}: changed to a new revision while it was inspected; inspecting that one")
    return True


def _revision(state: WorkloadState, workload: dict[str, Any]) -> Revision:
    """The revision the last attempt inspected, as the restart record names it."""
    assert state.selection is not None  # set by every attempt
    return state.lookup.revision(kind=state.plan.ref.kind, workload=workload, selection=state.selection)


def _unseen(verdict: AttemptVerdict) -> bool:
    """Some pod or container of the attempt could not be inspected."""
    return any(
        pod.status is CheckStatus.UNINSPECTABLE or any(c.error is not None for c in pod.containers)
        for pod in verdict.pods
    )


def _result(
    state: WorkloadState,
    outcome: Literal["passed", "failed", "error"],
    code: ExitCode,
    message: str,
    error: str | None = None,
) -> WorkloadResult:
    ref, restarter = state.plan.ref, state.restarter
    return WorkloadResult(
        kind=ref.kind,
        namespace=state.namespace,
        name=ref.name,
        attempts=tuple(state.attempts),
        restarted=restarter.count > 0,
        error=error,
        # an error after the restart and before any attempt of the new pods: the last attempt
        # judged pods the restart replaced
        superseded=error is not None and restarter.count > 0 and len(state.attempts) == restarter.at_attempt,
        result=outcome,
        exit_code=int(code),
        message=message,
        prior_restart=restarter.prior,
        would_restart=bool(restarter.would),
    )


def _stalled(state: WorkloadState, obj: dict[str, Any]) -> str:
    """One line for a rollout that has not moved: kubectl's words and what holds the pods back."""
    message = workload_state(kind=state.plan.ref.kind, obj=obj).message
    try:
        pods = state.lookup.pods(selector=objects.selector(obj))
        reasons = waiting_reasons(pods=pods, mount_failures=state.lookup.mount_failures(pods))
    except errors.VerifyError:
        reasons = []  # the progress line is a courtesy: never the reason a run fails
    refused = creation_failure(workload=obj)
    reasons = ([refused] if refused else []) + reasons
    shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
    return f"{state.label}: still waiting: {message}" + (f"; {shown}" if shown else "")


def _verify(state: WorkloadState) -> WorkloadResult:
    plan, log, label = state.plan, state.log, state.label
    ref, api, restarter = plan.ref, state.context.api, state.restarter
    progress = state.context.progress
    while True:
        if not state.attempts:  # later waits are announced by the restart or re-check line
            log(f"{label}: waiting for the rollout in namespace {state.namespace}")
        progress.phase(label, "waiting for the rollout")
        workload = wait_for_rollout(
            api=api,
            namespace=state.namespace,
            name=ref.name,
            kind=ref.kind,
            on_stall=lambda obj: log(_stalled(state, obj)),
            on_look=Prognosis(state) if state.context.settings.fail_fast else None,
            look_every=CHECK_EVERY,
        )
        progress.phase(label, "inspecting its pods")
        verdict = attempt(state, workload)
        if not verdict.ok:
            # before any restart decision, each revision inspected (the first, or one that landed
            # meanwhile) is checked for a restart an earlier or concurrent run already made of it
            restarter.note_earlier(
                workload,
                revision=functools.partial(_revision, state, workload),
                sources=state.lookup.read_sources(),
            )
        state.attempts.append(verdict)
        decision = decide(
            verdict=verdict,
            restarts_done=1 if restarter.used else 0,
            restart_mode=plan.restart,
            rechecks_done=state.rechecks,
            out_of_time=api.deadline.expired,
        )
        if decision.action == "pass":
            log(f"{label}: {checked_line(attempt=verdict)}")
            return _result(state, "passed", ExitCode.OK, decision.reason)
        if decision.action == "fail":
            if api.deadline.expired and not api.deadline.cancelled and _unseen(verdict):
                # the run's --timeout ran out while pods were still being inspected: the run's end
                raise errors.RolloutNotComplete(
                    f"--timeout ran out before every pod could be inspected ({decision.reason})", workload
                )
            if _landed_meanwhile(state, workload):
                continue
            if decision.said:
                log(f"{label}: {decision.reason}")
            return _result(state, "failed", ExitCode.FAILED, decision.reason)
        if decision.action == "restart" and api.deadline.expired:
            # no time left to see a new rollout through: restarting now would change the cluster
            # for nothing (the attempt's problems are said once, with the run's end)
            raise errors.RolloutNotComplete(
                f"--timeout ran out before the restart ({decision.reason})", workload
            )
        seen = WorkloadResult(
            kind=ref.kind, namespace=state.namespace, name=ref.name, attempts=(verdict,), restarted=False
        )
        for line in problem_lines(workload=seen):
            log(line)
        if decision.action == "recheck":
            log(f"{label}: {decision.reason}")
            state.rechecks += 1
            continue
        if not restarter.dry_run:
            log(f"{label}: {decision.reason}; restarting once")
        progress.phase(label, "sending the restart")
        restarter.restart(
            workload,
            revision=_revision(state, workload),
            sources=state.lookup.read_sources(),
            attempts=len(state.attempts),
        )
        if restarter.would:
            return _result(state, "failed", ExitCode.FAILED, f"{decision.reason}; {restarter.would}")


def verify_workload(
    *, context: RunContext, plan: TargetPlan, namespace: str, label: str, log: Log
) -> WorkloadResult:
    """Wait, inspect, restart at most once, inspect again: one workload's whole verdict."""
    state = WorkloadState(
        context=context,
        plan=plan,
        namespace=namespace,
        label=label,
        log=log,
        lookup=Lookup(api=context.api, namespace=namespace),
        restarter=Restarter(
            api=context.api,
            ref=plan.ref,
            namespace=namespace,
            label=label,
            log=log,
            dry_run=context.settings.dry_run,
        ),
    )
    result = _ended(state)
    context.progress.done(label, result)
    return result


def _ended(state: WorkloadState) -> WorkloadResult:
    """The workload's verification, every way it can end turned into its result."""
    try:
        return _verify(state)
    except errors.RolloutDoomed as e:  # its evidence is said; the verdict line says why, once
        return _result(state, "error", ExitCode.ROLLOUT, e.message, error=f"rollout {e.message}")
    except errors.RolloutNotComplete as e:
        msg = _rollout_failure(state, e)
        return _result(state, "error", ExitCode.ROLLOUT, msg, error=f"rollout did not complete: {msg}")
    except errors.VerifyError as e:
        msg = e.verdict()
        return _result(state, "error", e.exit_code, msg, error=msg)
    except Exception as e:
        # a bug must still end as a one-line verdict, with the restart (if any) counted
        msg = errors.internal_error(e)
        state.log(msg)
        return _result(state, "error", ExitCode.INTERNAL, msg, error=msg)
