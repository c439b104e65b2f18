"""The docs' reference page is generated from the one settings contract, and `--help`, the
reference and action.yml agree: every flag `--help` shows is in the reference, every Action input
sits in the row of the setting its `runs.env` sets, a default an input's description states is
the contract's, and a default the Action sets itself is listed. The troubleshooting page names
every exit code. Each check is shown able to fail on a planted mistake."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from verify import docs
from verify.config.flags import info_request
from verify.config.values import parse_duration
from verify.exitcodes import ExitCode

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / docs.REFERENCE
PIPELINES = docs._pipeline_docs(REPO)
_INPUT = re.compile(r"\$\{\{ inputs\.([a-z0-9-]+) \}\}")
# a default an input's description states: `(default 600s)`, `once (default)`, `auto (default: …`
_STATED = (
    re.compile(r"\(default (\d+[smh]?|auto|once|never|always|true|false)\)"),
    re.compile(r"`?(\w+)`? \(default(?:\)|:)"),
)


def help_flags(help_text: str) -> set[str]:
    """Every flag `--help` names, in its usage, its options and its descriptions (argparse wraps
    lines at hyphens: `--no-fail-` then `fast` on the next line is one flag)."""
    unwrapped = re.sub(r"(?<=[a-z])-\n\s+(?=[a-z])", "-", help_text)
    return set(re.findall(r"(?<![\w/-])(--?[a-z](?:[a-z0-9-]*[a-z0-9])?)", unwrapped))


def _rows(reference: str, heading: str) -> list[list[str]]:
    """The cells of the first table under `## heading` / `### heading`."""
    section = re.split(rf"^#+ {re.escape(heading)}\n", reference, flags=re.M)[1]
    lines = [line for line in section.split("\n\n#")[0].splitlines() if line.startswith("| ")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[1:]]  # no header


def _same_default(stated: str, contract: str, description: str) -> bool:
    contract = contract.strip("`")
    if contract == "—":  # unset: a description may call that `auto` only if the contract does
        return stated == "auto" and "auto" in description
    try:
        return parse_duration(stated) == parse_duration(contract)
    except ValueError:
        return stated == contract


def disagreements(*, help_text: str, reference: str, action: dict[str, Any]) -> list[str]:
    """Where `--help`, the reference page and action.yml say different things; empty when none."""
    out = [f"{flag} is in --help but not in the reference" for flag in sorted(help_flags(help_text))
           if f"`{flag}`" not in reference]  # fmt: skip
    settings = {row[1].strip("`"): row for row in _rows(reference, "Settings")}
    own_defaults = {
        (r[0], r[1].strip("`"), r[2].strip("`")) for r in _rows(reference, "Defaults a pipeline sets")
    }
    only_here = {(r[0], r[1].strip("`")) for r in _rows(reference, "Inputs of one pipeline only")}
    mapped = {}
    for var, value in (action["runs"].get("env") or {}).items():
        m = _INPUT.fullmatch(str(value))
        if m:
            mapped[m.group(1)] = var
    for name, spec in (action.get("inputs") or {}).items():
        var = mapped.get(name)
        if var is None:
            if ("GitHub Action", name) not in only_here:
                out.append(f"action input {name} sets no setting and is not listed as the Action's own")
            continue
        row = settings.get(var)
        if row is None:
            out.append(f"action input {name} sets {var}, which the reference does not list")
            continue
        if row[2] != f"`{name}`":
            out.append(f"action input {name} sets {var}, whose pipeline input the reference says is {row[2]}")
        description = str(spec.get("description", ""))
        for pattern in _STATED:
            for stated in pattern.findall(description):
                if not _same_default(stated, row[3], row[4]):
                    out.append(
                        f"action input {name} says its default is {stated}; the reference says {row[3]}"
                    )
        default = str(spec.get("default", ""))
        if default and ("GitHub Action", name, default) not in own_defaults:
            out.append(f"action input {name} defaults to {default!r}, which the reference does not list")
    return out


def _help() -> str:
    text = info_request(["--help"])
    assert text is not None
    return text


def test_the_reference_is_generated_from_the_contract() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == docs.reference(**PIPELINES), "run: python -m verify.docs"


def test_help_the_reference_and_action_yml_agree() -> None:
    flags = help_flags(_help())
    assert {"--help", "--version", "--namespace", "-n", "--no-dry-run", "--debug-image"} <= flags
    assert disagreements(help_text=_help(), reference=REFERENCE.read_text(), action=PIPELINES["action"]) == []


def _planted(mistake: str) -> tuple[str, str, dict[str, Any]]:
    help_text, reference, action = _help(), REFERENCE.read_text(), copy.deepcopy(PIPELINES["action"])
    if mistake == "a flag --help has and the reference lacks":
        help_text += "\n  --frobnicate  Frobnicate.\n"
    elif mistake == "a flag the reference lost":
        reference = reference.replace("`--exec-timeout`", "`--exec-time`")
    elif mistake == "an input wired to another setting":
        action["runs"]["env"]["VERIFY_TIMEOUT"] = "${{ inputs.exec-timeout }}"
        action["runs"]["env"]["VERIFY_EXEC_TIMEOUT"] = "${{ inputs.timeout }}"
    elif mistake == "a default the description states wrongly":
        action["inputs"]["timeout"]["description"] = "Deadline for the whole run (default 300s)."
    elif mistake == "a default the Action sets and the reference does not list":
        action["inputs"]["junit"]["default"] = "junit.xml"
    elif mistake == "an input that sets nothing":
        action["inputs"]["frobnicate"] = {"description": "?", "required": False, "default": ""}
    return help_text, reference, action


@pytest.mark.parametrize(
    ("mistake", "said"),
    [
        ("a flag --help has and the reference lacks", "--frobnicate is in --help but not in the reference"),
        ("a flag the reference lost", "--exec-timeout is in --help but not in the reference"),
        ("an input wired to another setting", "action input timeout sets VERIFY_EXEC_TIMEOUT"),
        ("a default the description states wrongly", "says its default is 300s; the reference says `10m`"),
        ("a default the Action sets and the reference does not list", "junit defaults to 'junit.xml'"),
        ("an input that sets nothing", "action input frobnicate sets no setting"),
    ],
)
def test_each_disagreement_is_found(mistake: str, said: str) -> None:
    help_text, reference, action = _planted(mistake)
    found = disagreements(help_text=help_text, reference=reference, action=action)
    assert any(said in line for line in found), found


def test_the_troubleshooting_page_says_what_to_do_for_every_exit_code() -> None:
    page = (REPO / "docs" / "troubleshooting.md").read_text()
    headings = re.findall(r"^## Exit codes? ([0-9, and]+):", page, flags=re.M)
    named = {int(n) for h in headings for n in re.findall(r"\d+", h)}
    assert named == {int(c) for c in ExitCode}
    for code in ExitCode:
        assert re.search(rf"^\| \[[0-9, ]*\b{code.value}\b", page, flags=re.M), (
            f"exit code {code.value} not in the table"
        )
    assert "## Doom reasons: failing fast" in page  # the place the fail-fast reasons go
