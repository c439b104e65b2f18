"""The run in words: one verdict-like line per problem naming workload, pod, node and container,
and the one headline. Pure; every string here is built from verdicts that already omit secrets."""

from __future__ import annotations

from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.report.result import RunResult, WorkloadResult


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _pod_label(pod: PodVerdict) -> str:
    return f"pod {pod.name} ({pod.node})" if pod.node else f"pod {pod.name}"


def error_phrase(error: Uninspectable) -> str:
    """Why a container (or pod) has no verdict of its checks: `cannot be inspected: ...`, or for
    one that did not hold still, `is not stable: ...`."""
    if error.code == "unstable":
        return f"is {error.reason}"
    return f"cannot be inspected: {error.reason}"


def check_phrase(check: CheckResult) -> str:
    if check.type == "http":
        if check.status is CheckStatus.UNINSPECTABLE:
            return f"cannot be checked on http {check.subject}: {check.detail}"
        return f"http {check.subject} {check.detail}"
    if check.type == "env":
        if check.status is CheckStatus.MISMATCH:
            return f"env {check.subject} {check.detail or 'value differs'}"
        return f"lacks env {check.subject}"
    if check.status is CheckStatus.MISSING:
        detail = f" ({check.detail})" if check.detail else ""
        return f"lacks file {check.subject}{detail}"
    detail = check.detail.removeprefix("content ")
    return f"file {check.subject} {detail}" if detail else f"file {check.subject} differs"


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
            lines.append(f"{where} {error_phrase(pod.error)}")
            continue
        lines.extend(f"{where} {check_phrase(c)}" for c in pod.checks if c.status is not CheckStatus.OK)
        for container in pod.containers:
            head = f"{where} container {container.name}"
            if container.error is not None:
                lines.append(f"{head} {error_phrase(container.error)}")
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
    if workload.would_restart:
        after = " (would restart once; --dry-run sent nothing)"
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


def checked_line(*, attempt: AttemptVerdict) -> str:
    """What a passing attempt checked: `checked 2 pods: 3 env keys, 2 files, 1 HTTP check` (a
    zero-config run otherwise says only "verified"; keys are counted per container)."""
    subjects: dict[str, set[str]] = {"env": set(), "file": set(), "http": set()}
    for pod in attempt.pods:
        for check in pod.checks:
            subjects[check.type].add(check.subject)
        for container in pod.containers:
            for check in container.checks:
                subjects[check.type].add(f"{container.name}\0{check.subject}")
    parts = [
        _plural(len(subjects["env"]), "env key"),
        _plural(len(subjects["file"]), "file"),
        _plural(len(subjects["http"]), "HTTP check"),
    ]
    kept = [part for part, key in zip(parts, ("env", "file", "http"), strict=True) if subjects[key]]
    return f"checked {_plural(len(attempt.pods), 'pod')}: {', '.join(kept) or 'running and ready only'}"


def verdict_line(*, run: RunResult) -> str:
    """The single headline, e.g. `rollout-verify: PASSED deployment web: 2 pods verified`."""
    head = f"rollout-verify: {run.result.upper()}"
    if not run.workloads:
        return f"{head} {run.message}".rstrip()
    return f"{head} " + "; ".join(_workload_summary(w, run.result) for w in run.workloads)


def container_problems(*, container: ContainerVerdict) -> list[str]:
    """Each failed check of one container as a short phrase, e.g. `lacks env DB_URL`."""
    if container.error is not None:
        return [error_phrase(container.error)]
    return [check_phrase(c) for c in container.checks if c.status is not CheckStatus.OK]


def pod_problems(*, pod: PodVerdict) -> list[str]:
    """Every problem of one pod, each prefixed with its container."""
    if pod.error is not None:
        return [error_phrase(pod.error)]
    own = [check_phrase(c) for c in pod.checks if c.status is not CheckStatus.OK]
    return own + [f"container {c.name} {p}" for c in pod.containers for p in container_problems(container=c)]
