"""Streams against kubesim, judged by the real kubectl and the official Python client:
`kubectl logs -f` and its filters, and exec stdin sent as WebSocket text frames."""

from __future__ import annotations

import datetime as dt
import subprocess
import time
from pathlib import Path

from kubernetes import client, config
from kubernetes.stream import stream

from tests.kubesim import Cluster
from tests.support.kubectl import KUBECTL, Kubectl

TICKER = "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done; printf last"


def _run_pod(kubectl: Kubectl, name: str, script: str) -> None:
    kubectl("run", name, "--image=busybox", "--restart=Never", "--", "sh", "-c", script)
    kubectl("wait", "--for=condition=ready", f"pod/{name}", "--timeout=60s")


def test_logs_follow_streams_lines_as_written_until_the_container_exits(kubectl: Kubectl) -> None:
    _run_pod(kubectl, "ticker", "echo first; sleep 3; echo second; sleep 1")
    env = {"KUBECONFIG": kubectl.kubeconfig, "HOME": str(kubectl.cache), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [KUBECTL, "--cache-dir", str(kubectl.cache / "cache"), "logs", "-f", "ticker"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    start = time.monotonic()
    assert proc.stdout.readline() == "first\n"
    first_at = time.monotonic() - start
    # the first line arrives while the container still runs, long before it exits
    assert proc.poll() is None
    assert proc.stdout.readline() == "second\n"
    assert time.monotonic() - start > first_at + 1.5
    assert proc.wait(timeout=60) == 0  # kubectl returns once the container has exited
    assert proc.stdout.read() == ""
    assert kubectl("get", "pod", "ticker", "-o", "jsonpath={.status.phase}") == "Succeeded"


def test_logs_timestamps_tail_limit_bytes_and_since(kubectl: Kubectl) -> None:
    _run_pod(kubectl, "ticker", TICKER)
    assert kubectl("logs", "-f", "ticker") == "line 1\nline 2\nline 3\nline 4\nline 5\nlast"
    stamped = kubectl("logs", "ticker", "--timestamps").splitlines()
    assert [line.split(" ", 1)[1] for line in stamped] == [f"line {i}" for i in range(1, 6)] + ["last"]
    times = [dt.datetime.fromisoformat(line.split(" ", 1)[0].replace("Z", "+00:00")) for line in stamped]
    assert all(t.tzinfo is not None for t in times)
    # each line stamped when it was written: in order, the 2 s of sleeps between the first and last
    assert times == sorted(times)
    assert 1.9 < (times[-1] - times[0]).total_seconds() < 30
    assert kubectl("logs", "ticker", "--tail=2") == "line 5\nlast"
    assert kubectl("logs", "ticker", "--limit-bytes=10") == "line 1\nlin"
    assert kubectl("logs", "ticker", "--tail=1", "--timestamps").split(" ", 1)[1] == "last"
    # --since: only lines written in the last moments (none after a pause)
    time.sleep(2.5)
    assert kubectl("logs", "ticker", "--since=1s") == ""
    assert kubectl("logs", "ticker", "--since=1h").count("\n") == 5


def test_the_official_client_execs_with_stdin_in_text_and_binary_frames(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("run", "box", "--image=busybox", "--", "sleep", "3600")
    kubectl("wait", "--for=condition=ready", "pod/box", "--timeout=60s")
    v1 = client.CoreV1Api(config.new_client_from_config(config_file=kubectl.kubeconfig))
    ws = stream(
        v1.connect_get_namespaced_pod_exec,
        "box",
        "default",
        command=["cat"],
        stdin=True,
        stdout=True,
        stderr=True,
        tty=False,
        _preload_content=False,
    )
    try:
        ws.write_stdin("typed as text\n")  # a str: the client sends a TEXT frame
        ws.write_stdin(b"sent as bytes\n")  # bytes: a BINARY frame
        got = ""
        deadline = time.monotonic() + 30
        while got.count("\n") < 2 and time.monotonic() < deadline:
            ws.update(timeout=1)
            got += ws.read_stdout()
        assert got == "typed as text\nsent as bytes\n"
        ws.close_channel(0)  # v5: stdin closed, so cat ends and the exec finishes with its status
        while ws.is_open() and time.monotonic() < deadline:
            ws.update(timeout=1)
        assert not ws.is_open()
        assert ws.returncode == 0
    finally:
        ws.close()
