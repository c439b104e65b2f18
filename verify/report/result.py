"""What a run ends with: each workload's result and the run's, whose exit code is the most
fundamental among the workloads'. Plain data; every renderer reads these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from verify.exitcodes import ExitCode, most_fundamental

if TYPE_CHECKING:  # annotations only: the verdicts' and debugger's modules are not start-up
    from verify.findings import AttemptVerdict
    from verify.flow.probe.debugger import DebugContainer

Outcome = Literal["passed", "failed", "error"]


@dataclass(frozen=True)
class WorkloadResult:
    kind: str  # "deployment", "statefulset", "daemonset" or "rollout"
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
    prior_restart: str = ""  # this revision is an earlier run's restart (when): this run does not restart it
    would_restart: bool = False  # --dry-run: the judgment called for the restart, none was sent
    # the verdict attempt's problems were said before a restart that did not happen (refused,
    # paused): the run's end does not say them again
    problems_said: bool = False

    @property
    def verdict_attempt(self) -> AttemptVerdict | None:
        return None if self.superseded or not self.attempts else self.attempts[-1]


@dataclass(frozen=True)
class RunInfo:
    """What ran, when and against what, for the report (never a credential or a host)."""

    version: str
    started: str  # ISO 8601, UTC
    ended: str
    duration: float  # seconds
    context: str | None = None  # the kubeconfig context (None: never connected or in-cluster)
    server_version: str | None = None  # the API server's gitVersion, when it answered /version


@dataclass(frozen=True)
class RunResult:
    result: Outcome
    exit_code: int
    restarted: bool
    workloads: tuple[WorkloadResult, ...]
    message: str
    # --debug-image: the ephemeral debug containers this run added to (or reused in) pods
    debug_containers: tuple[DebugContainer, ...] = ()


def combine(*, workloads: tuple[WorkloadResult, ...]) -> RunResult:
    """One run's verdict: it passes only if every workload passed."""
    code = most_fundamental(w.exit_code for w in workloads)
    result: Outcome = "passed" if code is ExitCode.OK else "failed" if code is ExitCode.FAILED else "error"
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
        exit_code=int(code),
        restarted=any(w.restarted for w in workloads),
        workloads=workloads,
        message=message,
    )
