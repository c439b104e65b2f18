"""Config input built to be expensive or ambiguous is refused at once, by its shape: exit 2 in
under a second, small memory, one line naming the field, never the value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verify.config.yamlsafe import YamlRefused, compose_and_load

REPO = Path(__file__).resolve().parents[2]
ALIAS_BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
targets:
  - target: deployment/web
    restart: [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""
DIGITS = "7" * 5000


def _child(args: list[str]) -> tuple[int, str, float, int]:
    """Run the CLI as the only child of a fresh interpreter and read that interpreter's
    RUSAGE_CHILDREN: the peak RSS and the CPU seconds of rollout-verify alone. CPU time, not wall
    time: a loaded machine stretches the wall clock of an honest run, never its CPU time."""
    probe = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-m', 'verify', *sys.argv[1:]], capture_output=True, text=True)\n"
        "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(p.returncode, use.ru_utime + use.ru_stime, use.ru_maxrss, sep='\\n')\n"
        "sys.stdout.write(p.stderr + p.stdout)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_", "KUBECONFIG"))}
    out = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    ).stdout
    code, took, rss, text = out.split("\n", 3)
    return int(code), text, float(took), int(rss)


@pytest.mark.parametrize(
    ("content", "field"),
    [
        (ALIAS_BOMB, "b[0]: uses a YAML alias"),
        (f"targets:\n  - target: deployment/web\n    restart: {DIGITS}\n", "targets[0].restart: holds a number"),
        (
            "targets:\n  - target: deployment/web\n    expect-http:\n      - {port: 8080, path: /c, "
            f"json: {{field: v, equals: {DIGITS}}}}}\n",
            "targets[0].expect-http[0].json.equals: holds a number",
        ),
    ],
    ids=["alias-bomb", "5000-digit-restart", "5000-digit-json-equals"],
)
def test_a_config_bomb_is_exit_2_within_a_second_in_little_memory(
    tmp_path: Path, content: str, field: str
) -> None:
    path = tmp_path / "verify.yaml"
    path.write_text(content)
    code, text, took, rss_kib = _child(["--config", str(path)])
    assert code == 2, text
    assert took < 1.0, took  # CPU seconds of the whole run, interpreter start included (the bomb: 67 s)
    assert rss_kib < 200 * 1024, rss_kib
    lines = text.strip().splitlines()
    assert len(lines) == 1 and field in lines[0], text
    assert "lol" not in text and "7777" not in text


def test_a_duplicate_key_is_an_error_naming_it_and_its_line() -> None:
    with pytest.raises(YamlRefused) as e:
        compose_and_load("targets:\n  - target: deployment/a\n    namespace: x\n    target: deployment/b\n")
    assert e.value.line == 4 and 'targets[0]: repeats the key "target"' in str(e.value)
    assert "deployment/" not in str(e.value)


def test_ordinary_yaml_loads_as_before() -> None:
    _, data = compose_and_load("targets:\n  - {target: deployment/a, restart: never}\n  - target: x\nn: 1_000\n")
    assert data == {"targets": [{"target": "deployment/a", "restart": "never"}, {"target": "x"}], "n": 1000}


def test_a_mere_anchor_without_an_alias_is_harmless_and_accepted() -> None:
    assert compose_and_load("a: &x 1\n")[1] == {"a": 1}


@pytest.mark.parametrize("flag", ["--timeout", "--exec-timeout", "--concurrency"])
def test_a_5000_digit_flag_is_exit_2_and_not_echoed(flag: str) -> None:
    code, text, took, _ = _child(["--deployment", "web", flag, DIGITS])
    assert code == 2 and flag in text and len(text) < 400, text
    assert took < 1.5


def test_a_short_token_passed_as_kubeconfig_is_never_echoed(tmp_path: Path) -> None:
    token = "abcdef.0123456789abcdef"  # a bootstrap token's shape
    code, text, _, _ = _child(["--deployment", "web", "--kubeconfig", token])
    assert code == 2 and "--kubeconfig" in text and token not in text and "abcdef" not in text, text
    code, text, _, _ = _child(["--deployment", "web", "--kubeconfig", str(tmp_path / "absent.yaml")])
    assert str(tmp_path / "absent.yaml") in text  # a path is still named
