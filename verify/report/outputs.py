"""What a pipeline branches on: result, restarted, failed pods and where the report is.

Pure, from a RunResult; the same values go to GitHub step outputs, Argo output files and the
summaries, so the three systems can never disagree about one run.
"""

from __future__ import annotations

from verify.findings import CheckStatus
from verify.report.result import RunResult, WorkloadResult


def last_attempt_failed_pods(*, workload: WorkloadResult) -> list[str]:
    last = workload.verdict_attempt
    if last is None:
        return []
    return [p.name for p in last.pods if p.status is not CheckStatus.OK]


def failed_pods(*, run: RunResult) -> list[str]:
    """Pods of the last attempt that were not ok, over every workload, in report order."""
    return [name for wl in run.workloads for name in last_attempt_failed_pods(workload=wl)]


def step_outputs(*, run: RunResult, report_path: str) -> dict[str, str]:
    """The outputs every platform publishes (names are the Action's, kebab-case). Pod names and
    the report path are the cluster's and the user's: each sink writes them through the one
    escape ($GITHUB_OUTPUT's heredocs, Argo's output files)."""
    return {
        "result": run.result,
        "restarted": "true" if run.restarted else "false",
        "failed-pods": ",".join(failed_pods(run=run)),
        "report-path": report_path,
        "exit-code": str(run.exit_code),
    }
