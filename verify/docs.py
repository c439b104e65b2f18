"""`python -m verify.docs`: regenerate the docs' reference page (docs/reference.md), README's
exit-code table and action.yml's exit-code text from their one source: the settings contract (the
settings model, its flags and pipeline inputs), `ExitCode`, and the pipeline files' own inputs and
outputs.

One table (flag, env var, pipeline input, default, description) keeps the CLI, the Action, the
Argo template and the GitLab component documented from the same source; `--check` fails when a
generated file is stale (a test runs it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from verify.config.flags import build_parser, shown_default
from verify.config.job import settings_fields
from verify.config.naming import ENV_PREFIX, PROG, pipeline_input
from verify.config.settings import FIELDS
from verify.exitcodes import action_text, readme_table

EXIT_START, EXIT_END = "<!-- exitcodes:start -->", "<!-- exitcodes:end -->"
# action.yml: `description: The step's exit code (0 passed, 1 failed, ...).`
_ACTION_EXIT = re.compile(r"(description: The step's exit code )\([^)\n]*\)")


def _default(field: str) -> str:
    shown = shown_default(field)
    return f"`{shown}`" if shown else ("`false`" if FIELDS[field].default is False else "—")


def _between(text: str, start: str, end: str, body: str) -> str:
    head, found_start, rest = text.partition(start)
    _, found_end, tail = rest.partition(end)
    if not found_start or not found_end:
        raise ValueError(f"README.md lacks the {start} / {end} markers")
    return f"{head}{start}\n{body}\n{end}{tail}"


def render(*, readme: str) -> str:
    """`readme` with its exit-code table (between the markers) made from ExitCode; every setting is
    in the reference page."""
    return _between(readme, EXIT_START, EXIT_END, readme_table())


def render_action(*, action: str) -> str:
    """action.yml with its `exit-code` output's list of codes made from ExitCode."""
    fresh, count = _ACTION_EXIT.subn(lambda m: m.group(1) + action_text(), action)
    if count != 1:
        raise ValueError("action.yml lacks the exit-code output's description")
    return fresh


REFERENCE = "docs/reference.md"
# the pipeline files whose inputs and outputs the reference lists
ACTION, GITLAB, ARGO = "action.yml", "templates/verify.yml", "examples/argo/workflowtemplate.yaml"
_OUTPUT_FILES = (
    ("result", "`passed`, `failed` or `error`"),
    ("restarted", "`true` when a workload was restarted (each at most once), else `false`"),
    ("failed-pods", "comma-separated names of the pods of the last attempt that were not verified"),
    ("exit-code", "the exit code, as below"),
    ("report.json", "the JSON report (`--report-json`)"),
    ("junit.xml", "the JUnit report (`--junit`)"),
    ("summary.md", "the Markdown summary (`--summary`)"),
)


def _cell(text: str) -> str:
    """One table cell: one line, `|` escaped, `<` written as an entity so `<hex>` stays text."""
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def flags_by_setting() -> dict[str, list[str]]:
    """Each argparse destination's option strings as --help shows them (`--namespace`, `-n`;
    `--from-spec`, `--no-from-spec`); the positional targets under `targets_given`."""
    out: dict[str, list[str]] = {}
    for action in build_parser()._actions:
        out.setdefault(action.dest, []).extend(action.option_strings or [action.dest])
    return out


def pipeline_inputs(
    *, action: Mapping[str, Any], gitlab: Mapping[str, Any], argo: Mapping[str, Any]
) -> dict[str, dict[str, tuple[str, str]]]:
    """{pipeline: {input: (default, description)}} as each file declares them."""
    (template,) = [t for t in argo["spec"]["templates"] if t.get("name") == "verify"]
    return {
        "GitHub Action": {
            name: (str(spec.get("default", "")), str(spec.get("description", "")))
            for name, spec in (action.get("inputs") or {}).items()
        },
        "GitLab component": {
            name: (str(spec.get("default", "")), str(spec.get("description", "")))
            for name, spec in (gitlab["spec"].get("inputs") or {}).items()
        },
        "Argo template": {
            str(p["name"]): (str(p.get("value", "")), str(p.get("description", "")))
            for p in template["inputs"]["parameters"]
        },
    }


def reference(*, action: Mapping[str, Any], gitlab: Mapping[str, Any], argo: Mapping[str, Any]) -> str:
    """docs/reference.md: every flag, env var and pipeline input with its default and meaning,
    the platforms' own inputs and defaults, the outputs and the exit codes."""
    from verify.cli import MERGE_USAGE  # the subcommand's usage, as `report merge --help` prints it
    from verify.report.merge import HELP as MERGE_HELP

    flags = flags_by_setting()
    parser = {a.dest: a for a in build_parser()._actions}
    inputs = pipeline_inputs(action=action, gitlab=gitlab, argo=argo)
    setting_inputs = {pipeline_input(name) for name in FIELDS}
    out = [
        "<!-- Generated by `python -m verify.docs` from the settings contract (verify/config/), ExitCode",
        "     and the pipeline files; do not edit: tests/unit/test_reference.py fails when it is stale. -->",
        "# Reference",
        "",
        f"Every setting is one contract: a `{ENV_PREFIX}*` environment variable, overridden by its flag",
        "(a repeatable flag replaces the variable's list), and a pipeline input of the same name in the",
        "GitHub Action, the Argo Workflows template and the GitLab component. An empty value is unset.",
        "Durations accept `90`, `90s`, `10m`, `1m30s`. `VERIFY_KUBECONFIG_DATA` has no flag on purpose: a",
        "kubeconfig's content must not show up in a process list.",
        "",
        "## Command line",
        "",
        "```text",
        f"{PROG} [FLAGS] [KIND/NAME|NAME ...]",
        MERGE_USAGE,
        "```",
        "",
        "| argument | meaning |",
        "|---|---|",
        f"| `KIND/NAME`, `NAME` | {_cell(parser['targets_given'].help or '')} |",
        f"| {', '.join(f'`{f}`' for f in flags['help'])} | {_cell(parser['help'].help or '')} |",
        f"| {', '.join(f'`{f}`' for f in flags['version'])} | {_cell(parser['version'].help or '')} |",
        f"| `report merge` | {_cell(MERGE_HELP)} |",
        "",
        "## Settings",
        "",
        "| flag | env var | pipeline input | default | description |",
        "|---|---|---|---|---|",
    ]
    for name, env, _flag, desc in settings_fields():
        shown = ", ".join(f"`{f}`" for f in flags.get(name, [])) or "—"
        out.append(f"| {shown} | `{env}` | `{pipeline_input(name)}` | {_default(name)} | {_cell(desc)} |")
    out += [
        "",
        "## Pipeline inputs",
        "",
        "Each pipeline maps every input above to its variable (`action.yml`'s `runs.env`, the GitLab",
        "job's `variables`, the Argo container's `env`); an input left empty is the tool's default.",
        "",
        "### Defaults a pipeline sets",
        "",
        "| pipeline | input | its default | the tool's |",
        "|---|---|---|---|",
    ]
    for pipeline, declared in inputs.items():
        for name, (default, _) in declared.items():
            if name in setting_inputs and default:
                field = next(f for f in FIELDS if pipeline_input(f) == name)
                out.append(f"| {pipeline} | `{name}` | `{_cell(default)}` | {_default(field)} |")
    out += [
        "",
        "### Inputs of one pipeline only",
        "",
        "Where and how the step runs, not what it verifies.",
        "",
        "| pipeline | input | default | meaning |",
        "|---|---|---|---|",
    ]
    for pipeline, declared in inputs.items():
        for name, (default, desc) in declared.items():
            if name not in setting_inputs:
                shown = f"`{_cell(default)}`" if default else "—"
                out.append(f"| {pipeline} | `{name}` | {shown} | {_cell(desc)} |")
    out += [
        "",
        "## Outputs",
        "",
        "The GitHub Action's outputs, the Argo template's output parameters and the files",
        "`--output-dir` writes (one per output, no trailing newline) carry the same values.",
        "",
        "| output | meaning | GitHub Action | Argo template |",
        "|---|---|---|---|",
    ]
    (template,) = [t for t in argo["spec"]["templates"] if t.get("name") == "verify"]
    argo_outputs = {str(p["name"]) for p in template.get("outputs", {}).get("parameters", [])}
    for name, spec in (action.get("outputs") or {}).items():
        shown = "yes" if name in argo_outputs else "—"
        out.append(f"| `{name}` | {_cell(spec.get('description', ''))} | yes | {shown} |")
    out += [
        "",
        "| `--output-dir` file | holds |",
        "|---|---|",
        *(f"| `{name}` | {what} |" for name, what in _OUTPUT_FILES),
        "",
        "## Exit codes",
        "",
        "With several workloads, the run's code is the most fundamental one among theirs (5, 3, 4, 2,",
        "then 1); the report's `workloads[].result` and `exit_code` give each one's. What to do about",
        "each: [Troubleshooting](troubleshooting.md).",
        "",
        readme_table(),
        "",
    ]
    return "\n".join(out)


def _pipeline_docs(root: Path) -> dict[str, Any]:
    def first(path: str) -> Any:
        return next(d for d in yaml.safe_load_all((root / path).read_text(encoding="utf-8")) if d)

    return {"action": first(ACTION), "gitlab": first(GITLAB), "argo": first(ARGO)}


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    stale: list[str] = []
    makers: dict[str, Callable[[str], str]] = {
        "README.md": lambda text: render(readme=text),
        "action.yml": lambda text: render_action(action=text),
        REFERENCE: lambda text: reference(**_pipeline_docs(root)),
    }
    for name, make in makers.items():
        path = root / name
        current = path.read_text(encoding="utf-8") if path.exists() else ""
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
