"""The run as Markdown: a headline, one table row per pod x container, the earlier attempt.

Written for people skimming a CI page (the GitHub job summary, a GitLab artifact), so passing
rows collapse when there are many and every cell is escaped for tables and inline HTML.
"""

from __future__ import annotations

from verify.findings import AttemptVerdict, CheckStatus
from verify.redact import printable_line
from verify.report.advice import advice, check_phrase, diagnosis_of, findings
from verify.report.result import RunResult, WorkloadResult
from verify.report.text import container_problems, verdict_line

MAX_OK_ROWS = 50  # beyond this, passing containers are counted instead of listed

_ICON = {
    CheckStatus.OK: "✅ ok",
    CheckStatus.MISSING: "❌ missing",
    CheckStatus.MISMATCH: "❌ mismatch",
    CheckStatus.UNINSPECTABLE: "❌ uninspectable",
}
_HEAD = {"passed": "✅ PASSED", "failed": "❌ FAILED", "error": "⚠️ ERROR"}


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: `printable_line`, then no pipes or HTML."""
    out = printable_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(out.replace("|", "\\|").split())


def _row(*cells: str) -> str:
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def _attempt_line(attempt: AttemptVerdict, index: int) -> str:
    bad = sum(1 for p in attempt.pods if p.status is not CheckStatus.OK)
    state = "ok" if attempt.ok else f"{bad} of {len(attempt.pods)} pods failed"
    return f"- attempt {index} (revision {cell(attempt.revision)}): {state}"


def workload_section(wl: WorkloadResult, *, heading: str = "") -> list[str]:
    """One workload's part of a summary: what failed and what to do, then a row per pod x
    container. `heading` replaces the default `kind ns/name` (a fleet's names its cluster)."""
    title = heading or f"{cell(wl.kind)} `{cell(wl.namespace)}/{cell(wl.name)}`"
    lines = [f"#### {title}", ""]
    if wl.error:
        lines += [f"**{cell(wl.error)}**", ""]
    if not wl.attempts:
        return lines
    last = wl.verdict_attempt
    if len(wl.attempts) > 1 or wl.restarted:
        for i, a in enumerate(wl.attempts):
            lines.append(_attempt_line(a, i + 1))
            if a is not last:  # why the run restarted: a pass after a restart still says it
                lines += [f"  - 🩺 {cell(note)}" for note in diagnosis_of(attempt=a, workload=wl)]
        lines += ["- restarted once" if wl.restarted else "- not restarted", ""]
    if last is None:
        return lines
    found = [f for f in findings(workload=wl) if f.problem != wl.error]
    for f in found:
        lines.append(f"- ❌ {cell(f.problem)}")
        if f.remedy:
            lines.append(f"  - ↳ {cell(f.remedy)}")
    notes = advice(workload=wl, shown=found)
    if notes:
        lines += ["", "**Diagnosis**", ""]
        lines += [f"- 🩺 {cell(note)}" for note in notes]
    if found or notes:
        lines.append("")
    rows: list[tuple[bool, str]] = []
    for pod in last.pods:
        if pod.error is not None:
            status = _ICON[CheckStatus.UNINSPECTABLE]
            rows.append((False, _row(pod.name, pod.node, "", status, pod.error.reason)))
            continue
        for check in pod.checks:
            detail = "" if check.status is CheckStatus.OK else check_phrase(check)
            rows.append(
                (
                    check.status is CheckStatus.OK,
                    _row(pod.name, pod.node, f"http {check.subject}", _ICON[check.status], detail),
                )
            )
        for c in pod.containers:
            detail = "; ".join(container_problems(container=c))
            rows.append(
                (c.status is CheckStatus.OK, _row(pod.name, pod.node, c.name, _ICON[c.status], detail))
            )
    if not rows:
        return lines
    hide_ok = len(rows) > MAX_OK_ROWS
    shown = [r for ok, r in rows if not (ok and hide_ok)]
    lines += ["| pod | node | container | status | detail |", "|---|---|---|---|---|", *shown]
    if hide_ok:
        lines += ["", f"…and {sum(1 for ok, _ in rows if ok)} passing containers not listed."]
    return [*lines, ""]


def render(*, run: RunResult) -> str:
    """The Markdown summary of `run`."""
    headline = verdict_line(run=run).removeprefix("rollout-verify: ")
    for word, label in _HEAD.items():
        if headline.startswith(word.upper()):
            headline = label + headline[len(word) :]
            break
    lines = ["### rollout-verify", "", cell(headline), ""]
    for wl in run.workloads:
        lines += workload_section(wl)
    added = [d for d in run.debug_containers if d.added]
    if added:
        # the run's one write besides the restart, which outlives it: say where it went
        lines += [
            cell(f"Ephemeral debug containers added (they stay until the pod is replaced): {len(added)}"),
            "",
            *(f"- {cell(f'{d.namespace}/{d.pod}: {d.name} (target {d.container})')}" for d in added),
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"
