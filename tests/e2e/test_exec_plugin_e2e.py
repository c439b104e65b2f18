"""Exec credential plugins as EKS, GKE and AKS kubeconfigs use them: run before any request, never
interactive, within --timeout; a missing, hanging or failing plugin is one line naming it (and
its installHint), exit 2, and nothing reaches the cluster."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import yaml

from tests.kubesim import Cluster
from tests.support.helpers import deployment, plant, run_verify

SECRET_IN_STDERR = "plugin-stderr-token-1f0a9c3e7b5d4e2f8a6b"


def plugin(bin_dir: Path, name: str, body: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!{sys.executable}\nimport json, os, sys, time\n{body}\n")
    path.chmod(0o755)


def exec_kubeconfig(cluster: Cluster, path: Path, command: str, *, hint: str = "") -> str:
    doc = yaml.safe_load(cluster.kubeconfig())
    doc["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": command,
            "args": ["token", "--cluster", "kubesim"],
            "env": [{"name": "PLUGIN_MODE", "value": "ci"}],
            "interactiveMode": "Never",
            "provideClusterInfo": True,
            **({"installHint": hint} if hint else {}),
        }
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def env_with(bin_dir: Path) -> dict[str, str]:
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_a_plugin_credential_is_used_and_the_plugin_is_never_interactive(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    seen_info = tmp_path / "exec-info.json"
    token = cluster.admin_token
    plugin(
        tmp_path / "bin",
        "fake-plugin",
        f"open({str(seen_info)!r}, 'w').write(os.environ['KUBERNETES_EXEC_INFO'] + '\\n' + os.environ['PLUGIN_MODE'])\n"
        f"print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',"
        f" 'status': {{'token': {token!r}, 'expirationTimestamp': '2099-01-01T00:00:00Z'}}}}))",
    )
    kc = exec_kubeconfig(cluster, tmp_path / "kc", "fake-plugin")
    out = run_verify(
        "--deployment",
        "web",
        "--expect-env",
        "A",
        kubeconfig=kc,
        tmp_path=tmp_path,
        env=env_with(tmp_path / "bin"),
    )
    assert out.code == 0, out.everything
    info_text, mode = seen_info.read_text().rsplit("\n", 1)
    info = json.loads(info_text)
    assert info["spec"]["interactive"] is False and mode == "ci"
    assert info["spec"]["cluster"]["server"] == cluster.url  # provideClusterInfo


def test_a_missing_plugin_is_one_line_with_its_install_hint_and_nothing_reaches_the_cluster(
    cluster: Cluster, tmp_path: Path
) -> None:
    kc = exec_kubeconfig(
        cluster, tmp_path / "kc", "aws", hint="Install the AWS CLI: https://aws.amazon.com/cli/"
    )
    cluster.reset_counts()
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert out.code == 2, out.everything
    (line,) = [ln for ln in out.stderr.splitlines() if "exec plugin" in ln]
    assert "'aws' is not installed (not found on PATH) (Install the AWS CLI" in line
    assert "Credentials per platform" in line
    assert sum(cluster.requests.counts.values()) == 0
    assert "ERROR:root" not in out.everything and "Traceback" not in out.everything


def test_a_hanging_plugin_ends_the_run_within_its_timeout(cluster: Cluster, tmp_path: Path) -> None:
    started_file = tmp_path / "plugin-started"
    plugin(
        tmp_path / "bin",
        "slow-login",
        f"open({str(started_file)!r}, 'w').write(repr(time.monotonic())); time.sleep(600)",
    )
    kc = exec_kubeconfig(cluster, tmp_path / "kc", "slow-login")
    out = run_verify(
        "--deployment",
        "web",
        "--timeout",
        "3s",
        kubeconfig=kc,
        tmp_path=tmp_path,
        env=env_with(tmp_path / "bin"),
    )
    # timed from the plugin's start (CLOCK_MONOTONIC is system-wide), not the interpreter's, which a
    # loaded machine stretches: the run's 3 s began before the plugin did
    assert time.monotonic() - float(started_file.read_text()) < 3 + 2
    assert out.code == 2, out.everything
    assert "'slow-login' did not answer within 3s" in out.stderr


def test_a_failing_plugins_stderr_is_one_masked_line(cluster: Cluster, tmp_path: Path) -> None:
    plant(SECRET_IN_STDERR)
    plugin(
        tmp_path / "bin",
        "bad-plugin",
        f"sys.stderr.write('error: refresh failed\\nAuthorization: Bearer {SECRET_IN_STDERR}\\n' * 8); sys.exit(3)",
    )
    kc = exec_kubeconfig(cluster, tmp_path / "kc", "bad-plugin")
    cluster.reset_counts()
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path, env=env_with(tmp_path / "bin"))
    assert out.code == 2, out.everything
    (line,) = [ln for ln in out.stderr.splitlines() if "exec plugin" in ln]
    assert "'bad-plugin' failed (exit 3): error: refresh failed" in line and len(line) < 400
    assert SECRET_IN_STDERR not in out.everything
    assert sum(cluster.requests.counts.values()) == 0


def rotating_plugin(
    bin_dir: Path, calls: Path, tokens: list[str], *, expiries: list[str] | None = None
) -> None:
    """A plugin that gives tokens[n] on its n-th call (the last one ever after), unexpired unless
    `expiries` says otherwise, counting its calls in `calls`."""
    plugin(
        bin_dir,
        "rotating-plugin",
        f"calls = {str(calls)!r}\n"
        "n = len(open(calls).read()) if os.path.exists(calls) else 0\n"
        "open(calls, 'a').write('x')\n"
        f"tokens = {tokens!r}\n"
        f"expiries = {expiries or ['2099-01-01T00:00:00Z']!r}\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',"
        " 'status': {'token': tokens[min(n, len(tokens) - 1)],"
        " 'expirationTimestamp': expiries[min(n, len(expiries) - 1)]}}))",
    )


def test_an_expired_plugin_credential_is_asked_for_again_before_the_next_request(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    calls = tmp_path / "calls"
    # both tokens are good: only the first one's expiry can make the run ask again
    rotating_plugin(
        tmp_path / "bin",
        calls,
        [cluster.admin_token],
        expiries=["2001-01-01T00:00:00Z", "2099-01-01T00:00:00Z"],
    )
    kc = exec_kubeconfig(cluster, tmp_path / "kc", "rotating-plugin")
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env_with(tmp_path / "bin")
    )
    assert out.code == 0, out.everything
    assert calls.read_text() == "xx"


def test_a_refused_plugin_credential_is_asked_for_again_once_and_the_fresh_one_is_used(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    calls = tmp_path / "calls"
    rotating_plugin(tmp_path / "bin", calls, ["revoked-before-expiry-0001", cluster.admin_token])
    kc = exec_kubeconfig(cluster, tmp_path / "kc", "rotating-plugin")
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env_with(tmp_path / "bin")
    )
    assert out.code == 0, out.everything
    assert calls.read_text() == "xx"  # the first credential, then one fresh one for the whole run


def test_a_plugin_that_gives_the_refused_credential_again_ends_the_run_on_the_401_without_asking_more(
    cluster: Cluster, tmp_path: Path
) -> None:
    calls = tmp_path / "calls"
    rotating_plugin(tmp_path / "bin", calls, ["revoked-for-good-0002"])
    kc = exec_kubeconfig(cluster, tmp_path / "kc", "rotating-plugin")
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path, env=env_with(tmp_path / "bin"))
    assert out.code == 3, out.everything
    assert "HTTP 401" in out.stderr and "rotating-plugin" in out.stderr, out.stderr
    assert calls.read_text() == "xx"  # asked once more after the 401, never in a loop
    assert "revoked-for-good-0002" not in out.everything


def test_a_hanging_plugins_children_do_not_outlive_the_run(cluster: Cluster, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    plugin(
        tmp_path / "bin",
        "login-wrapper",
        "import subprocess\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "child.wait()",
    )
    kc = exec_kubeconfig(cluster, tmp_path / "kc", "login-wrapper")
    out = run_verify(
        "--deployment", "web", "--timeout", "2s", kubeconfig=kc, tmp_path=tmp_path, env=env_with(tmp_path / "bin")
    )
    assert out.code == 2, out.everything
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{child}").exists() and "Z" not in _state(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{child}").exists() or "Z" in _state(child), "the plugin's child outlived the run"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"
