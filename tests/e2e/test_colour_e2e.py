"""The verdict and the end table in colour on a terminal only: a pipe (every CI log) gets plain
text, a pseudo-terminal gets the result words painted unless NO_COLOR is set, `--color always`
paints into a pipe too."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import REPO, deployment, run_verify, seen

GREEN = "\x1b[1;32mpassed\x1b[0m"
VERDICT = "rollout-verify: \x1b[1;32mPASSED\x1b[0m deployment web: 1 pod verified"


def _on_a_terminal(kubeconfig: str, tmp_path: Path, **env: str) -> tuple[int, str, str]:
    """rollout-verify with its stdout on a pseudo-terminal (stderr a pipe); what each showed."""
    master, slave = pty.openpty()
    full = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_", "NO_COLOR"))}
    full |= {"KUBECONFIG": kubeconfig, "HOME": str(tmp_path), "TERM": "xterm", **env}
    proc = subprocess.Popen(
        [sys.executable, "-m", "verify", "web", "--expect-env", "A"],
        stdout=slave,
        stderr=subprocess.PIPE,
        env=full,
        cwd=REPO,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    _, err = proc.communicate(timeout=120)
    out = b"".join(chunks).decode().replace("\r\n", "\n")
    seen(out, err.decode())
    return proc.returncode, out, err.decode()


def test_result_words_are_painted_on_a_terminal_and_nowhere_else_unless_asked(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")

    piped = run_verify("web", "--expect-env", "A", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert piped.code == 0, piped.everything
    assert "\x1b" not in piped.stdout + piped.stderr  # a pipe: plain text
    assert piped.stdout.splitlines()[-1] == "rollout-verify: PASSED deployment web: 1 pod verified"

    code, out, err = _on_a_terminal(kubeconfig, tmp_path)
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[-1] == VERDICT and lines[-2].endswith(GREEN), out
    assert "\x1b" not in err  # stderr is not the terminal here: plain

    code, out, _ = _on_a_terminal(kubeconfig, tmp_path, NO_COLOR="1")
    assert code == 0 and "\x1b" not in out, out

    asked = run_verify("web", "--expect-env", "A", "--color", "always", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert asked.code == 0 and asked.stdout.splitlines()[-1] == VERDICT, asked.stdout
    code, out, _ = _on_a_terminal(kubeconfig, tmp_path, VERIFY_COLOR="never")
    assert code == 0 and "\x1b" not in out, out
