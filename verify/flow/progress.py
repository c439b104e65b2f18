"""Where each workload of a run stands, kept for the one reader that cannot wait for the end: the
CLI, when a signal stops the run early, still reports every workload (finished ones with their
verdict, the others with what they were doing)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from verify.report.result import WorkloadResult


@dataclass
class _Entry:
    kind: str
    namespace: str
    name: str
    label: str
    phase: str = "waiting to start"
    result: WorkloadResult | None = None


class Progress:
    """Thread-safe: workloads write their phase and result, the CLI reads a snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    def add(self, *, label: str, kind: str, namespace: str, name: str) -> None:
        with self._lock:
            self._entries[label] = _Entry(kind, namespace, name, label)

    def phase(self, label: str, text: str) -> None:
        with self._lock:
            if label in self._entries:
                self._entries[label].phase = text

    def done(self, label: str, result: WorkloadResult) -> None:
        with self._lock:
            if label in self._entries:
                self._entries[label].result = result

    def cancelled(self, *, code: int, restart_sent: bool) -> tuple[tuple[WorkloadResult, ...], list[str]]:
        """Every workload as a signal leaves it, and one phrase per unfinished one."""
        with self._lock:
            entries = list(self._entries.values())
        results: list[WorkloadResult] = []
        unfinished: list[str] = []
        for e in entries:
            if e.result is not None:
                results.append(e.result)
                continue
            sent = restart_sent and e.phase == "sending the restart"
            what = f"cancelled while {e.phase}" + ("; the restart had already been sent" if sent else "")
            unfinished.append(f"{e.label} was {e.phase}")
            results.append(
                WorkloadResult(
                    kind=e.kind,
                    namespace=e.namespace,
                    name=e.name,
                    attempts=(),
                    restarted=sent,
                    error=what,
                    result="error",
                    exit_code=code,
                    message=what,
                )
            )
        return tuple(results), unfinished
