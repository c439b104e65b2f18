"""What a pipeline branches on: result, restarted, failed pods and where the report is.

Pure, from a RunResult; the same values go to GitHub step outputs, Argo output files and the
summaries, so the three systems can never disagree about one run.
"""

from __future__ import annotations

from verify.model import CheckStatus, ContainerVerdict, PodVerdict
from verify.report import RunResult, WorkloadResult, check_phrase


def container_problems(*, container: ContainerVerdict) -> list[str]:
    """Each failed check of one container as a short phrase, e.g. `lacks env DB_URL`."""
    if container.error is not None:
        return [f"cannot be inspected: {container.error.reason}"]
    return [check_phrase(c) for c in container.checks if c.status is not CheckStatus.OK]


def pod_problems(*, pod: PodVerdict) -> list[str]:
    """Every problem of one pod, each prefixed with its container."""
    if pod.error is not None:
        return [f"cannot be inspected: {pod.error.reason}"]
    own = [check_phrase(c) for c in pod.checks if c.status is not CheckStatus.OK]
    return own + [f"container {c.name} {p}" for c in pod.containers for p in container_problems(container=c)]


def last_attempt_failed_pods(*, workload: WorkloadResult) -> list[str]:
    last = workload.verdict_attempt
    if last is None:
        return []
    return [p.name for p in last.pods if p.status is not CheckStatus.OK]


def failed_pods(*, run: RunResult) -> list[str]:
    """Pods of the last attempt that were not ok, over every workload, in report order."""
    return [name for wl in run.workloads for name in last_attempt_failed_pods(workload=wl)]


def step_outputs(*, run: RunResult, report_path: str) -> dict[str, str]:
    """The outputs every platform publishes (names are the Action's, kebab-case)."""
    return {
        "result": run.result,
        "restarted": "true" if run.restarted else "false",
        "failed-pods": ",".join(failed_pods(run=run)),
        "report-path": report_path,
        "exit-code": str(run.exit_code),
    }
