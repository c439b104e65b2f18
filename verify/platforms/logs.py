"""Progress lines on stderr, and the two writers every printed line goes through (`_safe`).
On GitHub and GitLab each workload's lines are one collapsible group; with several workloads
verified in parallel, a workload's lines are held until it ends so that groups never interleave."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from verify.kube.cancel import Cancel
from verify.platforms import github, gitlab
from verify.platforms.markup import Markup
from verify.redact import printable_line


def _safe(line: str) -> str:
    """Every printed line passes here: platform markup as built, any other text escaped."""
    return str.__str__(line) if isinstance(line, Markup) else printable_line(line)


def stderr(line: str) -> None:
    print(_safe(line), file=sys.stderr, flush=True)


def stdout(line: str) -> None:
    print(_safe(line), flush=True)


def _plain(text: str, _style: str) -> str:
    return text


Paint = Callable[[str, str], str]  # (escaped text, style) -> the text as the terminal shows it


def stdout_table(rows: Sequence[Sequence[str]], *, paint: Paint = _plain) -> None:
    """The end table: every cell escaped, the columns aligned, the last one (a result word, its
    own style) painted. Built here, from escaped parts, because padding must survive the writer."""
    shown = [[printable_line(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in shown) for i in range(len(shown[0]))]
    for n, row in enumerate(shown):
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
        last = row[-1] if n == 0 else paint(row[-1], row[-1])
        print(Markup("  ".join([*cells, last])), flush=True)


def stdout_verdict(line: str, *, result: str, paint: Paint = _plain) -> None:
    """The headline, its result word (`PASSED`) painted."""
    head = f"rollout-verify: {result.upper()}"
    if not line.startswith(head):
        stdout(line)
        return
    rest = printable_line(line[len(head) :])
    print(Markup(f"rollout-verify: {paint(result.upper(), result)}{' ' + rest if rest else ''}"), flush=True)


@dataclass(frozen=True)
class Platform:
    """Which CI system runs the step (both false: a terminal or another CI)."""

    github: bool
    gitlab: bool

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Platform:
        return cls(github=github.active(environ=environ), gitlab=gitlab.active(environ=environ))


class Logs:
    """The run's progress lines, grouped per workload where the platform folds groups."""

    def __init__(self, platform: Platform, *, cancel: Cancel | None = None) -> None:
        self.platform = platform
        # after a signal the workloads' last words (a retry, a "restarting" that will not happen)
        # are dropped: the run's own line says what was cancelled
        self.cancel = cancel
        self.grouped = platform.github or platform.gitlab
        self._lock = threading.Lock()
        self._held: dict[str, list[str]] | None = None

    def _open(self, label: str) -> None:
        if self.platform.github:
            stderr(github.group_start(workload=label))
        if self.platform.gitlab:
            stderr(gitlab.section_start(title=f"rollout-verify {label}"))

    def _close(self, label: str) -> None:
        if self.platform.github:
            stderr(github.group_end())
        if self.platform.gitlab:
            stderr(gitlab.section_end(title=f"rollout-verify {label}"))

    def line(self, text: str) -> None:
        """A line about the whole run, outside any workload's group."""
        stderr(f"rollout-verify: {text}")

    def begin(self, labels: Sequence[str]) -> None:
        if self.grouped and len(labels) > 1:
            self._held = {label: [] for label in labels}
        elif self.grouped and labels:
            self._open(labels[0])

    def workload(self, label: str) -> Callable[[str], None]:
        def log(line: str) -> None:
            if self.cancel is not None and self.cancel.cancelled:
                return
            text = f"rollout-verify: {line}"
            with self._lock:
                if self._held is not None:
                    self._held[label].append(text)
                else:
                    stderr(text)

        return log

    def end(self, label: str) -> None:
        if not self.grouped:
            return
        with self._lock:
            if self._held is None:
                self._close(label)
                return
            self._open(label)
            for line in self._held.pop(label, []):
                stderr(line)
            self._close(label)
