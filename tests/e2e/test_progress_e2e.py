"""A rollout that does not move is reported while the run waits: one line after 10 s without
change, naming what holds the pods back, then at most every 30 s; nothing while it moves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import REPO, deployment, run_verify


def stderr_until(args: list[str], *, kubeconfig: str, tmp_path: Path, text: str, within: float) -> list[tuple[float, str]]:
    """Run rollout-verify, reading its stderr as it comes, until a line holds `text` (or `within`
    seconds pass), then SIGTERM it: each line with the seconds from the start."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_"))}
    env.update(KUBECONFIG=kubeconfig, HOME=str(tmp_path))
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "verify", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    seen: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append((time.monotonic() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while time.monotonic() < started + within and not any(text in line for _, line in seen):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    reader.join(timeout=5)
    return seen


def test_a_bad_image_is_reported_while_waiting_long_before_the_timeout(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, image="registry.local/doesnotexist:1"))
    seen = stderr_until(
        # a missing image ends the wait with --fail-fast (exit 4, tests/e2e/test_doom_e2e.py): waited for here
        ["--deployment", "web", "--timeout", "45s", "--no-fail-fast"],
        kubeconfig=cluster.write_kubeconfig(str(tmp_path / "kc")), tmp_path=tmp_path, text="still waiting", within=30,
    )  # fmt: skip
    stalled = [(at, line) for at, line in seen if "still waiting" in line]
    assert stalled, "\n".join(line for _, line in seen)
    at, line = stalled[0]
    # timed from the run's first line (its wait begins there), not the spawn a loaded machine stretches:
    # the 10 s without change, then a rollout check at most a few seconds later; --timeout is 45 s
    assert at - seen[0][0] < 20, (seen[0], at, line)
    assert "deployment web: still waiting: Waiting for deployment" in line
    assert "ImagePullBackOff" in line or "ErrImagePull" in line, line
    assert len(stalled) == 1  # the next one is 30 s later


def test_an_unreachable_api_server_is_reported_while_retrying(tmp_path: Path) -> None:
    kc = tmp_path / "kc"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"
    )
    seen = stderr_until(
        ["--deployment", "web", "--timeout", "45s"], kubeconfig=str(kc), tmp_path=tmp_path, text="retrying until", within=30
    )
    retrying = [(at, line) for at, line in seen if "retrying until" in line]
    assert retrying, "\n".join(line for _, line in seen)
    at, line = retrying[0]
    # the first retry past 10 s, after a wait of at most 5 s; timed from the spawn (the notice is the
    # first line), so a loaded machine's slow interpreter start gets room, still far below --timeout
    assert 9 < at < 30, (at, line)
    assert "cannot reach the API server at https://127.0.0.1:1" in line and "(--timeout)" in line, line


def test_a_rollout_that_completes_quickly_prints_no_progress_line(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=cluster.write_kubeconfig(str(tmp_path / "kc")),
        tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 0, out.everything
    assert "still waiting" not in out.everything


def test_a_rollout_error_is_said_once(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, image="registry.local/doesnotexist:1"))
    out = run_verify("--deployment", "web", "--timeout", "4s", kubeconfig=cluster.write_kubeconfig(str(tmp_path / "kc")), tmp_path=tmp_path)
    assert out.code == 4, out.everything
    said = [line for line in (out.stdout + out.stderr).splitlines() if "rollout did not complete" in line]
    assert len(said) == 1 and said[0].startswith("rollout-verify: ERROR deployment web: "), said
