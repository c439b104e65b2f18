"""The two pieces of state a run keeps: the run's context, shared by every workload, and each
workload's own progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from verify.config.job import TargetPlan
from verify.config.settings import Settings
from verify.findings import AttemptVerdict
from verify.flow.lookup import Lookup
from verify.flow.probe.exec_probe import Inspector
from verify.flow.probe.http_probe import Prober
from verify.flow.progress import Progress
from verify.flow.restart import Restarter
from verify.flow.selection import PodSelection
from verify.kube.api import Api

Log = Callable[[str], None]


@dataclass
class RunContext:
    """What every workload of one run shares: one deadline (the Api's), one client, one budget of
    execs and HTTP checks."""

    settings: Settings
    api: Api
    inspector: Inspector
    prober: Prober
    progress: Progress = field(default_factory=Progress)
    analysis_run: str = ""  # the Argo AnalysisRun this run measures for (nothing is restarted)


@dataclass
class WorkloadState:
    """One workload's verification so far."""

    context: RunContext
    plan: TargetPlan
    namespace: str
    label: str
    log: Log
    lookup: Lookup
    restarter: Restarter
    rechecks: int = 0  # inspections repeated because pods were deleted while being inspected
    said: int = 0  # how many attempts' problems were said as progress lines (before a restart)
    attempts: list[AttemptVerdict] = field(default_factory=list)
    selection: PodSelection | None = None  # the pods the last attempt inspected
