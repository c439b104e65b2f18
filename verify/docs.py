"""`python -m verify.docs`: regenerate README's settings table from the settings model.

One table (setting, env var, flag, pipeline input, description) keeps the CLI, the Action, the
Argo template and the GitLab component documented from the same source; `--check` fails CI
when README.md is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from verify.config import Settings, pipeline_input, settings_fields

START, END = "<!-- inputs:start -->", "<!-- inputs:end -->"


def _code(text: str) -> str:
    return f"`{text}`" if text else "—"


def _default(value: Any) -> str:
    if value is None or value == []:
        return "—"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    return f"`{value}`"


def inputs_table() -> str:
    """The Markdown table, one row per setting, in the settings model's order."""
    rows = [
        "| setting | env var | CLI flag | pipeline input | default | description |",
        "|---|---|---|---|---|---|",
    ]
    for name, env, flag, desc in settings_fields():
        info = Settings.model_fields[name]
        default = "required" if info.is_required() else _default(info.default)
        cells = [_code(name), _code(env), _code(flag), _code(pipeline_input(name)), default]
        cells.append(desc.replace("|", "\\|"))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def render(*, readme: str) -> str:
    """`readme` with the text between the markers replaced by the current table."""
    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"README.md lacks the {START} / {END} markers")
    return f"{head}{START}\n{inputs_table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    path = Path(__file__).resolve().parent.parent / "README.md"
    current = path.read_text(encoding="utf-8")
    fresh = render(readme=current)
    if "--check" in argv:
        if fresh != current:
            print("README.md settings table is stale; run: python -m verify.docs", file=sys.stderr)
            return 1
        return 0
    path.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
