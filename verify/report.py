"""Render results for humans and machines, pure, from verdicts that already omit secrets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from verify.model import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)

Outcome = Literal["passed", "failed", "error"]
# when workloads end differently, the run reports the most fundamental problem first
_EXIT_PRIORITY = (5, 3, 4, 2, 1, 0)


@dataclass(frozen=True)
class WorkloadResult:
    kind: str  # "deployment", "statefulset" or "daemonset"
    namespace: str
    name: str
    attempts: tuple[AttemptVerdict, ...]
    restarted: bool
    error: str | None = None  # set when the workload could not be verified at all
    # the last attempt predates the restart: its pods are gone, so it is history, not the verdict
    superseded: bool = False
    result: Outcome = "passed"
    exit_code: int = 0
    message: str = ""
    prior_restart: str = ""  # an earlier run restarted this revision (when), so this one did not

    @property
    def verdict_attempt(self) -> AttemptVerdict | None:
        return None if self.superseded or not self.attempts else self.attempts[-1]


@dataclass(frozen=True)
class RunResult:
    result: Outcome
    exit_code: int
    restarted: bool
    workloads: tuple[WorkloadResult, ...]
    message: str


def combine(*, workloads: tuple[WorkloadResult, ...]) -> RunResult:
    """One run's verdict: it passes only if every workload passed."""
    codes = [w.exit_code for w in workloads]
    code = next((c for c in _EXIT_PRIORITY if c in codes), 0)
    result: Outcome = "passed" if code == 0 else "failed" if code == 1 else "error"
    if len(workloads) == 1:
        message = workloads[0].message
    else:
        bad = [w for w in workloads if w.result != "passed"]
        message = (
            "; ".join(f"{w.kind} {w.name}: {w.message}" for w in bad)
            if bad
            else f"{len(workloads)} workloads verified"
        )
    return RunResult(
        result=result,
        exit_code=code,
        restarted=any(w.restarted for w in workloads),
        workloads=workloads,
        message=message,
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _pod_label(pod: PodVerdict) -> str:
    return f"pod {pod.name} ({pod.node})" if pod.node else f"pod {pod.name}"


def check_phrase(check: CheckResult) -> str:
    if check.type == "http":
        if check.status is CheckStatus.UNINSPECTABLE:
            return f"cannot be checked on http {check.target}: {check.detail}"
        return f"http {check.target} {check.detail}"
    if check.type == "env":
        if check.status is CheckStatus.MISMATCH:
            return f"env {check.target} {check.detail or 'value differs'}"
        return f"lacks env {check.target}"
    if check.status is CheckStatus.MISSING:
        return (
            f"lacks file {check.target} ({check.detail})" if check.detail else (f"lacks file {check.target}")
        )
    detail = check.detail.removeprefix("content ")
    return f"file {check.target} {detail}" if detail else f"file {check.target} differs"


def _workload_label(workload: WorkloadResult) -> str:
    return f"{workload.kind} {workload.name}"


def problem_lines(*, workload: WorkloadResult) -> list[str]:
    """One verdict-like line per problem of the LAST attempt, naming pod, node and container."""
    label = _workload_label(workload)
    lines: list[str] = []
    if workload.error:
        lines.append(f"{label}: {workload.error}")
    last = workload.verdict_attempt
    if last is None:
        return lines
    for problem in (*last.permanent_problems, *last.problems):
        lines.append(problem if problem.startswith(f"{label}: ") else f"{label}: {problem}")
    for pod in last.pods:
        where = f"{label}: {_pod_label(pod)}"
        if pod.error is not None:
            lines.append(f"{where} cannot be inspected: {pod.error.reason}")
            continue
        lines.extend(f"{where} {check_phrase(c)}" for c in pod.checks if c.status is not CheckStatus.OK)
        for container in pod.containers:
            head = f"{where} container {container.name}"
            if container.error is not None:
                lines.append(f"{head} cannot be inspected: {container.error.reason}")
                continue
            lines.extend(
                f"{head} {check_phrase(c)}" for c in container.checks if c.status is not CheckStatus.OK
            )
    lines.extend(f"diagnosis: {d}" for d in last.diagnosis)
    return lines


def _workload_summary(workload: WorkloadResult, result: str) -> str:
    label = _workload_label(workload)
    after = " after 1 restart" if workload.restarted else ""
    if workload.prior_restart and not workload.restarted:
        after = " (restarted once by an earlier run; not again)"
    last = workload.verdict_attempt
    if last is None:
        return f"{label}: {workload.error or 'not verified'}"
    total = len(last.pods)
    if last.ok and not workload.error:
        return f"{label}: {_plural(total, 'pod')} verified{after}"
    bad = sum(1 for p in last.pods if p.status is not CheckStatus.OK)
    parts = [f"{bad} of {_plural(total, 'pod')} failed verification"] if bad else []
    extra = len(last.problems) + len(last.permanent_problems) + (1 if workload.error else 0)
    if extra:
        parts.append(_plural(extra, "workload problem"))
    return f"{label}: {', '.join(parts) or result}{after}"


def verdict_line(*, run: RunResult) -> str:
    """The single headline, e.g. `rollout-verify: PASSED deployment web: 2 pods verified`."""
    head = f"rollout-verify: {run.result.upper()}"
    if not run.workloads:
        return f"{head} {run.message}".rstrip()
    return f"{head} " + "; ".join(_workload_summary(w, run.result) for w in run.workloads)


def _reason(error: Uninspectable | None) -> str | None:
    return None if error is None else error.reason


def _checks_json(checks: tuple[CheckResult, ...]) -> list[dict[str, Any]]:
    return [
        {"type": c.type, "target": c.target, "status": c.status.value, "detail": c.detail} for c in checks
    ]


def _container_json(container: ContainerVerdict) -> dict[str, Any]:
    return {
        "name": container.name,
        "status": container.status.value,
        "reason": _reason(container.error),
        "checks": _checks_json(container.checks),
    }


def _attempt_json(attempt: AttemptVerdict) -> dict[str, Any]:
    return {
        "revision": attempt.revision,
        "problems": [*attempt.permanent_problems, *attempt.problems],
        "diagnosis": list(attempt.diagnosis),
        "pods": [
            {
                "name": p.name,
                "node": p.node,
                "status": p.status.value,
                "reason": _reason(p.error),
                "checks": _checks_json(p.checks),
                "containers": [_container_json(c) for c in p.containers],
            }
            for p in attempt.pods
        ],
    }


def to_json(*, run: RunResult) -> dict[str, Any]:
    """The --report-json document; `reason` is null unless the pod/container is uninspectable."""
    return {
        "result": run.result,
        "exit_code": run.exit_code,
        "restarted": run.restarted,
        "message": run.message,
        "workloads": [
            {
                "kind": w.kind,
                "namespace": w.namespace,
                "name": w.name,
                "result": w.result,
                "exit_code": w.exit_code,
                "restarted": w.restarted,
                "restarted_by_earlier_run": w.prior_restart or None,
                "error": w.error,
                "attempts": [_attempt_json(a) for a in w.attempts],
            }
            for w in run.workloads
        ],
    }
