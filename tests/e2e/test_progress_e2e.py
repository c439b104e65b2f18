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


def test_a_bad_image_is_reported_while_waiting_long_before_the_timeout(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, image="registry.local/doesnotexist:1"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_"))}
    env.update(KUBECONFIG=cluster.write_kubeconfig(str(tmp_path / "kc")), HOME=str(tmp_path))
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "verify", "--deployment", "web", "--timeout", "45s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    seen: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append((time.monotonic() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = started + 30
    while time.monotonic() < deadline and not any("still waiting" in line for _, line in seen):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    reader.join(timeout=5)
    stalled = [(at, line) for at, line in seen if "still waiting" in line]
    assert stalled, "\n".join(line for _, line in seen)
    at, line = stalled[0]
    assert at < 15, (at, line)
    assert "deployment web: still waiting: Waiting for deployment" in line
    assert "ImagePullBackOff" in line or "ErrImagePull" in line, line
    assert len(stalled) == 1  # the next one is 30 s later


def test_a_rollout_that_completes_quickly_prints_no_progress_line(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=cluster.write_kubeconfig(str(tmp_path / "kc")),
        tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 0, out.everything
    assert "still waiting" not in out.everything
