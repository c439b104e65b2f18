"""`python -m verify.docs`: regenerate README's settings and exit-code tables and action.yml's
exit-code text from their one source (the settings model, `ExitCode`).

One table (setting, env var, flag, pipeline input, description) keeps the CLI, the Action, the
Argo template and the GitLab component documented from the same source; `--check` fails when
README.md or action.yml is stale (a test runs it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from verify.config.flags import shown_default
from verify.config.job import settings_fields
from verify.config.naming import pipeline_input
from verify.config.settings import FIELDS
from verify.exitcodes import action_text, readme_table

START, END = "<!-- inputs:start -->", "<!-- inputs:end -->"
EXIT_START, EXIT_END = "<!-- exitcodes:start -->", "<!-- exitcodes:end -->"
# action.yml: `description: The step's exit code (0 passed, 1 failed, ...).`
_ACTION_EXIT = re.compile(r"(description: The step's exit code )\([^)\n]*\)")


def _code(text: str) -> str:
    return f"`{text}`" if text else "—"


def _default(field: str) -> str:
    shown = shown_default(field)
    return f"`{shown}`" if shown else ("`false`" if FIELDS[field].default is False else "—")


def inputs_table() -> str:
    """The Markdown table, one row per setting, in the settings model's order."""
    rows = [
        "| setting | env var | CLI flag | pipeline input | default | description |",
        "|---|---|---|---|---|---|",
    ]
    for name, env, flag, desc in settings_fields():
        default = _default(name)
        cells = [_code(name), _code(env), _code(flag), _code(pipeline_input(name)), default]
        cells.append(desc.replace("|", "\\|"))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _between(text: str, start: str, end: str, body: str) -> str:
    head, found_start, rest = text.partition(start)
    _, found_end, tail = rest.partition(end)
    if not found_start or not found_end:
        raise ValueError(f"README.md lacks the {start} / {end} markers")
    return f"{head}{start}\n{body}\n{end}{tail}"


def render(*, readme: str) -> str:
    """`readme` with the text between each pair of markers replaced by the current table."""
    return _between(_between(readme, START, END, inputs_table()), EXIT_START, EXIT_END, readme_table())


def render_action(*, action: str) -> str:
    """action.yml with its `exit-code` output's list of codes made from ExitCode."""
    fresh, count = _ACTION_EXIT.subn(lambda m: m.group(1) + action_text(), action)
    if count != 1:
        raise ValueError("action.yml lacks the exit-code output's description")
    return fresh


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    stale: list[str] = []
    makers: dict[str, Callable[[str], str]] = {
        "README.md": lambda text: render(readme=text),
        "action.yml": lambda text: render_action(action=text),
    }
    for name, make in makers.items():
        path = root / name
        current = path.read_text(encoding="utf-8")
        fresh = make(current)
        if fresh == current:
            continue
        if "--check" in argv:
            stale.append(name)
        else:
            path.write_text(fresh, encoding="utf-8")
    if stale:
        print(f"{' and '.join(stale)} stale; run: python -m verify.docs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
