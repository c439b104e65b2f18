"""The end table: one row per workload (kind/name, pods, checks by kind, restarts, result), so
the reader of a long log sees every workload's verdict at a glance. Pure: cells as plain text;
the writer escapes, aligns and colours them."""

from __future__ import annotations

from verify.findings import AttemptVerdict, CheckStatus
from verify.report.result import RunResult, WorkloadResult

HEADER = ("WORKLOAD", "PODS", "CHECKS", "RESTARTS", "RESULT")
KINDS = ("env", "file", "http")  # the order checks are counted in


def _many(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _checks(attempt: AttemptVerdict) -> str:
    """`env 6/6, file 1/2, http 2/2`: passing of all checks made, per kind, over every pod and
    container of the attempt; an uninspectable pod or container counts none, and is counted
    apart (`2 containers not inspected`), so no cell reads as if only readiness were checked."""
    ok = dict.fromkeys(KINDS, 0)
    total = dict.fromkeys(KINDS, 0)
    pods_out, containers_out, unstable = 0, 0, 0
    for pod in attempt.pods:
        checks = [*pod.checks, *(c for container in pod.containers for c in container.checks)]
        for check in checks:
            total[check.type] += 1
            ok[check.type] += check.status is CheckStatus.OK
        if pod.error is not None:
            pods_out += 1
            continue
        for container in pod.containers:
            if container.error is not None and container.error.code == "unstable":
                unstable += 1
            elif container.error is not None:
                containers_out += 1
    shown = [f"{kind} {ok[kind]}/{total[kind]}" for kind in KINDS if total[kind]]
    if pods_out:
        shown.append(f"{_many(pods_out, 'pod')} not inspected")
    if containers_out:
        shown.append(f"{_many(containers_out, 'container')} not inspected")
    if unstable:
        shown.append(f"{_many(unstable, 'container')} not stable")
    return ", ".join(shown) or "running and ready only"


def _restarts(workload: WorkloadResult) -> str:
    if workload.restarted:
        return "1"
    if workload.would_restart:
        return "0 (dry run: 1)"
    if workload.prior_restart:
        return "0 (1 by an earlier run)"
    return "0"


def _row(workload: WorkloadResult, *, namespaced: bool) -> tuple[str, ...]:
    where = f"{workload.namespace}/" if namespaced else ""
    name = f"{where}{workload.kind}/{workload.name}"
    last = workload.verdict_attempt
    if last is None:
        pods, checks = "-", "-"
    else:
        good = sum(1 for p in last.pods if p.status is CheckStatus.OK)
        pods, checks = f"{good}/{len(last.pods)}", _checks(last)
    return (name, pods, checks, _restarts(workload), workload.result)


def rows(*, run: RunResult) -> list[tuple[str, ...]]:
    """The header and one row per workload; a run over several namespaces names each workload's
    (`data/statefulset/db`), one namespace is said once by the progress lines."""
    namespaced = len({w.namespace for w in run.workloads}) > 1
    return [HEADER, *(_row(w, namespaced=namespaced) for w in run.workloads)]
