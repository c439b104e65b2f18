"""ExitCode is the one source of the exit codes: --help, README's and the reference's tables and
action.yml's text are made from it, and a run's code is the most fundamental of its workloads'."""

from __future__ import annotations

from pathlib import Path

import pytest

from verify import docs
from verify.config.flags import build_parser
from verify.exitcodes import ExitCode, action_text, help_text, most_fundamental, readme_table

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_every_exit_code_from_the_enum() -> None:
    shown = " ".join(build_parser().format_help().split())
    assert " ".join(help_text().split()) in shown
    for code in ExitCode:
        assert f"{code.value} {code.summary}" in shown


def test_readme_exit_code_table_is_the_enums() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_table() in readme
    assert docs.render(readme=readme) == readme, "run: python -m verify.docs"


def test_action_yml_exit_code_text_is_the_enums() -> None:
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert action_text() in action
    assert docs.render_action(action=action) == action, "run: python -m verify.docs"


def test_a_stale_action_yml_is_rewritten_from_the_enum() -> None:
    stale = "    description: The step's exit code (0 passed, 1 failed).\n"
    assert docs.render_action(action=stale) == f"    description: The step's exit code {action_text()}.\n"
    with pytest.raises(ValueError, match="exit-code output"):
        docs.render_action(action="outputs: {}\n")


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ([], ExitCode.OK),
        ([0, 1], ExitCode.FAILED),
        ([1, 4, 3], ExitCode.UNREADABLE),
        ([1, 4], ExitCode.ROLLOUT),
        ([2, 1], ExitCode.CONFIG),
        ([3, 5, 0], ExitCode.INTERNAL),
    ],
)
def test_the_run_takes_the_most_fundamental_code(codes: list[int], expected: ExitCode) -> None:
    assert most_fundamental(codes) is expected
