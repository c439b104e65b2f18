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
    assert took < 1.0, took  # CPU seconds


def test_a_short_token_passed_as_kubeconfig_is_never_echoed(tmp_path: Path) -> None:
    token = "abcdef.0123456789abcdef"  # a bootstrap token's shape
    code, text, _, _ = _child(["--deployment", "web", "--kubeconfig", token])
    assert code == 2 and "--kubeconfig" in text and token not in text and "abcdef" not in text, text
    code, text, _, _ = _child(["--deployment", "web", "--kubeconfig", str(tmp_path / "absent.yaml")])
    assert str(tmp_path / "absent.yaml") in text  # a path is still named


KUBECONFIG_OK = """\
apiVersion: v1
kind: Config
clusters:
  - name: c
    cluster: &cluster {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}
  - name: c2
    cluster: *cluster
users:
  - name: u
    user: {token: tok-tok-tok}
contexts:
  - {name: x, context: {cluster: c2, user: u}}
current-context: x
current-context: x
"""


def test_a_kubeconfig_with_a_few_aliases_and_a_repeated_key_loads_as_kubectl_loads_it(tmp_path: Path) -> None:
    from verify.kube import loading

    path = tmp_path / "config"
    path.write_text(KUBECONFIG_OK)
    merged = loading.merge([str(path)])
    assert merged["clusters"][1]["cluster"]["server"] == "https://127.0.0.1:6443"
    assert merged["current-context"] == "x"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (ALIAS_BOMB.replace("targets:", "users:").replace("restart:", "user:"), "through YAML aliases"),
        ("clusters:\n  - &c {name: a, cluster: [*c]}\n", "inside its own anchor"),
        (f"clusters: []\nx: {DIGITS}\n", "holds a number of 5000 digits"),
    ],
    ids=["alias-bomb", "recursive-alias", "5000-digits"],
)
def test_a_kubeconfig_bomb_is_exit_2_naming_the_file_in_little_memory(
    tmp_path: Path, content: str, said: str
) -> None:
    path = tmp_path / "bomb.kubeconfig"
    path.write_text(content)
    code, text, took, rss_kib = _child(["--deployment", "web", "--kubeconfig", str(path)])
    assert code == 2, text
    assert took < 1.0, took  # CPU seconds; expanded, the bomb took a minute and gigabytes
    assert rss_kib < 200 * 1024, rss_kib
    lines = text.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], text
    assert f'--kubeconfig (VERIFY_KUBECONFIG): "{path}":' in lines[0], text
    assert "lol" not in text and "7777" not in text


def test_an_oversized_kubeconfig_file_is_exit_2_naming_it(tmp_path: Path) -> None:
    from verify.kube import loading

    path = tmp_path / "huge.yaml"
    with path.open("w") as fh:
        fh.write("clusters: []\n# " + "x" * loading.MAX_BYTES + "\n")
    code, text, _, _ = _child(["--deployment", "web", "--kubeconfig", str(path)])
    assert code == 2 and f'"{path}": is larger than 16 MiB' in text, text


def test_kubeconfig_content_in_the_env_var_is_read_within_the_same_budget() -> None:
    from verify.kube import kubeconfig

    with pytest.raises(kubeconfig.KubeconfigDataError) as e:
        kubeconfig.decode(data=ALIAS_BOMB.replace("targets:", "users:"))
    assert "through YAML aliases" in str(e.value) and "lol" not in str(e.value)
