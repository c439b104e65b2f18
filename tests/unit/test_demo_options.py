"""The demo's command line: the one way a caller (tools/docs_images.py) changes how the demo runs
rollout-verify, since the demo keeps its own environment away from it; and the tool's cut of
the first story's run for the docs' terminal picture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import demo
from tools.docs_images import run_lines


def test_the_flags_after_the_dash_go_to_every_run_and_the_colour_to_both() -> None:
    opts = demo.options(
        ["--story", "1", "--color", "always", "--", "--restart", "never", "--summary", "/s.md"]
    )
    assert opts.story == 1
    assert opts.flags == ["--color", "always", "--restart", "never", "--summary", "/s.md"]
    assert not opts.told_as_is  # their endings are the flags'
    plain = demo.options([])
    assert (plain.story, plain.color, plain.flags, plain.told_as_is) == (None, "auto", [], True)
    assert demo.options(["--color", "never"]).told_as_is  # colour changes no ending
    with pytest.raises(SystemExit):
        demo.options(["--story", "3"])


def test_rollout_verify_gets_the_callers_flags_and_never_the_demos_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A VERIFY_* variable left in the shell does not reach the demo's rollout-verify; a flag does
    (each wrong on purpose, so rollout-verify names it at once, before any cluster is asked)."""
    monkeypatch.setattr(demo, "KEPT", tmp_path)
    monkeypatch.setenv("VERIFY_CONCURRENCY", "many")
    kubeconfig = str(tmp_path / "no-such-kubeconfig")
    code, lines = demo.verify(kubeconfig=kubeconfig, config=demo.SHOP_CONFIG, name="a.yaml", flags=[])
    text = "\n".join(lines)
    assert code != 0 and "no-such-kubeconfig" in text  # it ran, and stopped at the missing file
    assert "concurrency" not in text and "many" not in text

    code, lines = demo.verify(
        kubeconfig=kubeconfig, config=demo.SHOP_CONFIG, name="b.yaml", flags=["--timeout", "soon"]
    )
    assert code == 2 and any("--timeout" in line and '"soon"' in line for line in lines), lines
    assert (tmp_path / "b.yaml").read_text() == demo.SHOP_CONFIG


_BOLD, _GREEN, _RESET = "\x1b[1m", "\x1b[1;32m", "\x1b[0m"
_DEMO = f"""
{_BOLD}== Story 1: a Secret that arrives after the pods start{_RESET}
kubectl's part
{_BOLD}== Now: rollout-verify --config verify.yaml   (kept at /tmp/rollout-verify-demo/verify.yaml){_RESET}
targets:
  - target: deployment/web

rollout-verify: deployment web: inspecting 2 pods of revision 2
rollout-verify: {_GREEN}PASSED{_RESET} deployment web: 2 pods verified after 1 restart

{_BOLD}== What to read in that output{_RESET}
  the verdict: ...
{_BOLD}== Story 1 ends: exit code 0; restarts sent by rollout-verify: 1{_RESET}
"""


def test_the_picture_shows_the_config_the_command_the_run_and_the_storys_end() -> None:
    assert run_lines(_DEMO).split("\n") == [
        "$ cat verify.yaml",
        "targets:",
        "  - target: deployment/web",
        "$ rollout-verify --config verify.yaml",
        "rollout-verify: deployment web: inspecting 2 pods of revision 2",
        f"rollout-verify: {_GREEN}PASSED{_RESET} deployment web: 2 pods verified after 1 restart",
        "",
        "== Story 1 ends: exit code 0; restarts sent by rollout-verify: 1",
    ]
    with pytest.raises(SystemExit, match="did not run as expected"):
        run_lines(_DEMO.replace("exit code 0; restarts sent by rollout-verify: 1", "exit code 1; restarts"))
