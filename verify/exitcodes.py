"""The one list of exit codes: `--help`, the README's and the docs' reference tables and
action.yml's text are made from it.

With several workloads, the run ends with the most fundamental code among theirs: a bug (5)
before an unreadable cluster (3) before a stuck rollout (4) before bad input (2) before a failed
verification (1). A signal (130, 143) ends the whole run."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    CONFIG = 2
    UNREADABLE = 3
    ROLLOUT = 4
    INTERNAL = 5
    INTERRUPTED = 130  # 128 + SIGINT
    TERMINATED = 143  # 128 + SIGTERM

    @property
    def word(self) -> str:
        """One or two words, as action.yml's `exit-code` output lists them."""
        return _TEXT[self][0]

    @property
    def summary(self) -> str:
        """The phrase `--help` gives."""
        return _TEXT[self][1]

    @property
    def meaning(self) -> str:
        """The tables' row (README, docs/reference.md): what happened and what the run did."""
        return _TEXT[self][2]

    @property
    def priority(self) -> int:
        """Lower is more fundamental."""
        return _PRIORITY.index(self)


_PRIORITY = (
    ExitCode.TERMINATED,
    ExitCode.INTERRUPTED,
    ExitCode.INTERNAL,
    ExitCode.UNREADABLE,
    ExitCode.ROLLOUT,
    ExitCode.CONFIG,
    ExitCode.FAILED,
    ExitCode.OK,
)

_TEXT: dict[ExitCode, tuple[str, str, str]] = {
    ExitCode.OK: (
        "passed",
        "every pod verified",
        "every pod of the new revision of every workload verified (possibly after the one restart each)",
    ),
    ExitCode.FAILED: (
        "failed",
        "verification failed (a check failed that a restart cannot fix, or still failed after the one "
        "restart)",
        "verification failed: a check failed that a restart cannot fix (nothing was restarted), or still "
        "failed after the one restart; an uninspectable pod is a failure too, and so is a container that "
        "restarted or was not ready from the settle window (`--min-ready`) to the end of its inspection, "
        "or whose last run ended less than 10 minutes before it was selected (a crash loop)",
    ),
    ExitCode.CONFIG: (
        "configuration",
        "bad configuration (nothing sent to the cluster)",
        "bad configuration: one line naming the flag, its env var and the fix; nothing was sent to the "
        "cluster",
    ),
    ExitCode.UNREADABLE: (
        "unreadable",
        "a workload or source cannot be read, watched or patched",
        "the workload (or an expected ConfigMap/Secret) cannot be read, watched or patched: unreachable, "
        "forbidden, not found",
    ),
    ExitCode.ROLLOUT: (
        "rollout or timeout",
        "the rollout did not complete (progress deadline, --timeout, or a pod that cannot heal)",
        "the rollout did not complete: progress deadline exceeded or `--timeout` (also when the API server "
        "stayed too slow to answer within it), or with `--fail-fast` (the default) a pod of the new revision "
        "that cannot become ready without a change to the spec (a missing image or command, a crash loop, a "
        "pod no node can take: the docs' Troubleshooting lists them); the pods' waiting reasons are printed",
    ),
    ExitCode.INTERNAL: (
        "internal error",
        "internal error",
        "internal error: a bug in rollout-verify (one line naming the exception type and place, never its "
        "message)",
    ),
    ExitCode.INTERRUPTED: (
        "interrupted",
        "interrupted (SIGINT)",
        "interrupted (SIGINT, Ctrl-C): stopped within 2 s, no restart sent after the signal; every "
        "requested report and output is written with result `error`",
    ),
    ExitCode.TERMINATED: (
        "cancelled",
        "cancelled (SIGTERM, a cancelled CI job)",
        "cancelled (SIGTERM, a cancelled CI job): as for 130",
    ),
}


def most_fundamental(codes: Iterable[int]) -> ExitCode:
    """The run's code from its workloads' codes (OK when there are none)."""
    found = {ExitCode(c) for c in codes}
    return min(found, key=lambda c: c.priority, default=ExitCode.OK)


def help_text() -> str:
    """`--help`'s sentence: `Exit codes: 0 every pod verified; 1 ...`."""
    return "Exit codes: " + "; ".join(f"{c.value} {c.summary}" for c in ExitCode) + "."


def action_text() -> str:
    """action.yml's `exit-code` output: `(0 passed, 1 failed, ...)`."""
    return "(" + ", ".join(f"{c.value} {c.word}" for c in ExitCode) + ")"


def readme_table() -> str:
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| {c.value} | {c.meaning} |" for c in ExitCode]
    return "\n".join(rows)
