"""Colour only where a person reads a terminal: --color auto|always|never (VERIFY_COLOR), NO_COLOR."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.helpers import REPO
from verify.platforms import colour


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("mode", "environ", "tty", "painted"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),  # a pipe, a file, a CI log
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # no-color.org: set and not empty
        ("auto", {"TERM": "dumb"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),  # the user's explicit word beats NO_COLOR
        ("never", {}, True, False),
    ],
)
def test_colour_is_painted_only_on_a_terminal_unless_asked(
    mode: colour.Mode, environ: dict[str, str], tty: bool, painted: bool
) -> None:
    on = colour.wanted(mode=mode, environ=environ, stream=_Stream(tty))
    assert on is painted
    shown = colour.Painter(on=on)("PASSED", "passed")
    assert (shown == "\x1b[1;32mPASSED\x1b[0m") is painted
    assert painted or shown == "PASSED"


def test_an_unknown_style_and_empty_text_stay_plain() -> None:
    paint = colour.Painter(on=True)
    assert paint("x", "no-such-style") == "x" and paint("", "failed") == ""


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_bad_color_value_is_exit_2_naming_the_flag_and_the_variable(how: str) -> None:
    args = ["--deployment", "web"] + (["--color", "blue"] if how == "flag" else [])
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"} | ({"VERIFY_COLOR": "blue"} if how == "env" else {})
    proc = subprocess.run(
        [sys.executable, "-m", "verify", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("rollout-verify: error: --color: ") and "(VERIFY_COLOR)" in line, line
    assert "auto" in line and "never" in line, line
