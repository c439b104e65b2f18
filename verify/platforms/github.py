"""GitHub Actions: workflow commands on stdout, step outputs and the job summary via files.

Commands follow the runner's escaping rules, so a message with `%`, a newline or a `::` can
never end a command early or start another one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from verify.platforms.markup import Markup
from verify.redact import MAX_OUTPUT_VALUE, printable_line
from verify.report.result import RunResult, WorkloadResult


def active(*, environ: Mapping[str, str]) -> bool:
    """True inside a GitHub Actions step (the runner sets GITHUB_ACTIONS=true)."""
    return environ.get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    """A command's message: `%`, CR and LF are the characters the runner decodes."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command property value: also `:` and `,`, which separate properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", **properties: str) -> Markup:
    """`::name key=value,...::message`: the message and values as `printable_line` shows any
    text, then escaped by the runner's rules."""
    props = ",".join(f"{k}={escape_property(printable_line(v))}" for k, v in properties.items())
    return _command(name, printable_line(message), props)


def _command(name: str, message: str, props: str = "") -> Markup:
    return Markup(f"::{name}{' ' + props if props else ''}::{escape_data(message)}")


def mask_lines(*, values: Sequence[str]) -> list[Markup]:
    """`::add-mask::` per value (and per line of a multi-line value, which the runner needs). The
    one command whose text is not made printable: the runner must see the secret as it is."""
    out: list[Markup] = []
    for value in values:
        for part in [value, *value.splitlines()] if "\n" in value else [value]:
            if part.strip() and _command("add-mask", part) not in out:
                out.append(_command("add-mask", part))
    return out


def group_start(*, workload: str) -> Markup:
    return command("group", workload)


def group_end() -> Markup:
    return Markup("::endgroup::")


def _title(workload: WorkloadResult) -> str:
    return f"rollout-verify: {workload.kind} {workload.namespace}/{workload.name}"


MAX_ERRORS = 10  # GitHub shows at most 10 error annotations of a step; more are dropped


def error_lines(*, run: RunResult) -> list[Markup]:
    """One `::error` annotation per problem (every pod it shows in named once), titled with its
    workload; its message is the problem and its remedy. The workloads' diagnosis lines that say
    more follow while GitHub still shows annotations."""
    from verify.report import advice  # at the run's end: the verdicts' module is not start-up

    lines: list[Markup] = []
    if not run.workloads and run.result != "passed":
        lines.append(command("error", run.message, title="rollout-verify"))
    notes: list[Markup] = []
    for wl in run.workloads:
        title = _title(wl)
        found = advice.findings(workload=wl)
        lines += [command("error", f.line, title=title) for f in found]
        notes += [command("error", note, title=title) for note in advice.advice(workload=wl, shown=found)]
    return lines + notes[: max(0, MAX_ERRORS - len(lines))]


def _delimiter(values: Sequence[str]) -> str:
    while True:
        import uuid  # here: with the platform module it loads, it is not start-up

        delim = f"ghadelimiter_{uuid.uuid4()}"
        if not any(delim in v for v in values):
            return delim


def write_outputs(*, path: str, outputs: Mapping[str, str]) -> None:
    """Append `name<<DELIM` heredocs to $GITHUB_OUTPUT: safe for any value, even multi-line; a
    value is whole up to MAX_OUTPUT_VALUE (a later step splits it; it is no log line)."""
    delim = _delimiter(list(outputs.values()))
    with open(path, "a", encoding="utf-8") as fh:
        for name, value in outputs.items():
            fh.write(f"{name}<<{delim}\n{printable_line(value, limit=MAX_OUTPUT_VALUE)}\n{delim}\n")


def append_summary(*, path: str, markdown: str) -> None:
    """Append to $GITHUB_STEP_SUMMARY (other steps' summaries stay)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(markdown if markdown.endswith("\n") else markdown + "\n")
