"""The run in words: one verdict-like line per problem naming workload, pod, node and container,
and the one headline. Pure; every string here is built from verdicts that already omit secrets."""

from __future__ import annotations

from verify.findings import AttemptVerdict, CheckStatus, ContainerVerdict, PodVerdict
from verify.report.advice import check_phrase, error_phrase, findings
from verify.report.result import RunResult, WorkloadResult

# the revision an earlier run restarted, or the one its restart made (flow.restart says which):
# that restart covers it either way
PRIOR_RESTART = "an earlier run's restart covers this revision"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _pod_label(pod: PodVerdict) -> str:
    return f"pod {pod.name} ({pod.node})" if pod.node else f"pod {pod.name}"


def _workload_label(workload: WorkloadResult) -> str:
    return f"{workload.kind} {workload.name}"


def problem_lines(*, workload: WorkloadResult) -> list[str]:
    """One verdict-like line per problem of the LAST attempt, naming pod, node and container."""
    label = _workload_label(workload)
    lines: list[str] = []
    if workload.error:
        lines.append(f"{label}: {workload.error}")
    last = workload.verdict_attempt
    if last is None or workload.problems_said:
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


def _workload_summary(workload: WorkloadResult) -> str:
    """A passing workload's count; a failed one's leads with what failed (a count of pods that
    failed verification says nothing of why, and `3 pods verified; …` read as a pass)."""
    label = _workload_label(workload)
    after = " after 1 restart" if workload.restarted else ""
    if workload.prior_restart and not workload.restarted:
        after = f" ({PRIOR_RESTART}; not restarted again)"
    if workload.would_restart:
        after = " (would restart once; --dry-run sent nothing)"
    last = workload.verdict_attempt
    if last is None:
        return f"{label}: {workload.error or 'not verified'}"
    total = len(last.pods)
    if last.ok and not workload.error:
        return f"{label}: {_plural(total, 'pod')} verified{after}"
    found = findings(workload=workload)
    others = len({f.what for f in found}) - 1
    more = f" (and {_plural(others, 'more problem')})" if others > 0 else ""
    bad = sum(1 for p in last.pods if p.status is not CheckStatus.OK)
    lead = next((f for f in found if f.pods), None)
    if bad and lead is not None:
        return f"{label}: {bad} of {_plural(total, 'pod')} failed{after}: {lead.what}{more}"
    return f"{label}: {found[0].what if found else 'not verified'}{more}{after}"


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
    # what failed first: a passing workload said first read as if the run had passed
    ordered = sorted(run.workloads, key=lambda w: w.result == "passed")
    return f"{head} " + "; ".join(_workload_summary(w) for w in ordered)


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
