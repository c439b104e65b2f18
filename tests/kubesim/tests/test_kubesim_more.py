"""More kubesim fidelity: v4 exec, Recreate, paused, crash loops, config errors, watch drops, serve."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import websocket

from tests.kubesim import Cluster
from tests.support.helpers import REPO, deployment, secret
from tests.support.kubectl import KUBECTL, Kubectl


def pod_named(cluster: Cluster, prefix: str) -> dict[str, object]:
    pods = [p for p in cluster.list("Pod") if p["metadata"]["name"].startswith(prefix)]
    assert pods
    return pods[0]


def test_exec_speaks_the_v4_channel_protocol(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=1))
    cluster.wait_rollout("web")
    name = pod_named(cluster, "web")["metadata"]["name"]  # type: ignore[index]
    url = (
        f"wss://127.0.0.1:{cluster.port}/api/v1/namespaces/default/pods/{name}/exec"
        "?command=sh&command=-c&command=echo+hi%3B+exit+4&stdout=true&stderr=true"
    )
    ws = websocket.create_connection(
        url,
        header=[f"Authorization: Bearer {cluster.admin_token}"],
        subprotocols=["v4.channel.k8s.io"],
        sslopt={"cert_reqs": ssl.CERT_REQUIRED, "ca_certs": str(cluster.ca_path)},
    )
    assert ws.getsubprotocol() == "v4.channel.k8s.io"
    frames: list[bytes] = []
    while True:
        try:
            data = ws.recv()
        except websocket.WebSocketConnectionClosedException:
            break
        if not data:
            break
        frames.append(data if isinstance(data, bytes) else data.encode())
    assert frames[0] == b"\x01"  # the empty frame on the first writable channel
    assert b"\x01hi\n" in frames
    status = json.loads(next(f for f in frames if f[:1] == b"\x03")[1:])
    assert status["reason"] == "NonZeroExitCode" and status["details"]["causes"][0] == {
        "reason": "ExitCode",
        "message": "4",
    }


def test_exec_upgrade_answers_with_only_the_websocket_headers(cluster: Cluster) -> None:
    """The 101 the apiserver's streams write (golang.org/x/net/websocket on a hijacked
    connection): clients read it a byte at a time, so its size is part of every exec's cost."""
    cluster.apply(deployment("web", replicas=1))
    cluster.wait_rollout("web")
    name = pod_named(cluster, "web")["metadata"]["name"]  # type: ignore[index]
    ctx = ssl.create_default_context(cafile=str(cluster.ca_path))
    with ctx.wrap_socket(
        socket.create_connection(("127.0.0.1", cluster.port)), server_hostname="127.0.0.1"
    ) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(
            (
                f"GET /api/v1/namespaces/default/pods/{name}/exec?command=true&stdout=true HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{cluster.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n"
                f"Authorization: Bearer {cluster.admin_token}\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            assert chunk, head
            head += chunk
    lines = head.decode().split("\r\n")[:-2]
    assert lines[0] == "HTTP/1.1 101 Switching Protocols"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "Upgrade",
        "Connection",
        "Sec-WebSocket-Accept",
        "Sec-WebSocket-Protocol",
    ]
    assert "Connection: Upgrade" in lines and "Sec-WebSocket-Protocol: v5.channel.k8s.io" in lines


def _timed_exec(cluster: Cluster, pod: str, script: str) -> tuple[float, bytes]:
    url = (
        f"wss://127.0.0.1:{cluster.port}/api/v1/namespaces/default/pods/{pod}/exec"
        f"?command=sh&command=-c&command={quote(script)}&stdout=true"
    )
    t0 = time.monotonic()
    ws = websocket.create_connection(
        url,
        header=[f"Authorization: Bearer {cluster.admin_token}"],
        subprotocols=["v5.channel.k8s.io"],
        sslopt={"cert_reqs": ssl.CERT_REQUIRED, "ca_certs": str(cluster.ca_path)},
    )
    out = b""
    while True:
        try:
            data = ws.recv()
        except websocket.WebSocketConnectionClosedException:
            break
        if not data:
            break
        frame = data if isinstance(data, bytes) else data.encode()
        if frame[:1] == b"\x01":
            out += frame[1:]
    return time.monotonic() - t0, out


def test_exec_latency_holds_the_answer_and_the_command_runs_within_it_or_after_it(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=1))
    cluster.wait_rollout("web")
    name = pod_named(cluster, "web")["metadata"]["name"]  # type: ignore[index]
    cluster.knobs.exec_latency = 0.6
    # a command quicker than the latency: the answer still waits for the latency
    quick, out = _timed_exec(cluster, name, "echo hi")
    assert out == b"hi\n" and quick >= 0.6
    # a command of 0.5 s runs within the 0.6 s round trip...
    within, out = _timed_exec(cluster, name, "sleep 0.5; echo done")
    assert out == b"done\n" and 0.6 <= within < 1.05
    # ...or, with exec_command_after_latency, starts once it has passed
    cluster.knobs.exec_command_after_latency = True
    after, out = _timed_exec(cluster, name, "sleep 0.5; echo done")
    assert out == b"done\n" and after >= 1.1


def test_recreate_strategy_removes_old_pods_before_starting_new_ones(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(deployment("web", replicas=2, strategy={"type": "Recreate"}))
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    old = {p["metadata"]["name"] for p in cluster.list("Pod")}
    kubectl("set", "env", "deployment/web", "A=1")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    new = {p["metadata"]["name"] for p in cluster.list("Pod") if not p["metadata"].get("deletionTimestamp")}
    assert len(new) == 2 and not new & old
    rs = json.loads(kubectl("get", "rs", "-o", "json"))["items"]
    assert sorted(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for r in rs) == ["1", "2"]


def test_paused_deployment_does_not_roll_and_restart_is_refused(cluster: Cluster, kubectl: Kubectl) -> None:
    cluster.apply(deployment("web", replicas=1))
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    kubectl("rollout", "pause", "deployment/web")
    kubectl("set", "env", "deployment/web", "A=1")
    assert len(json.loads(kubectl("get", "rs", "-o", "json"))["items"]) == 1
    proc = kubectl.run("rollout", "restart", "deployment/web", check=False)
    assert proc.returncode != 0 and "paused" in proc.stderr
    kubectl("rollout", "resume", "deployment/web")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert len(json.loads(kubectl("get", "rs", "-o", "json"))["items"]) == 2


def test_crash_loop_and_missing_secret_key_show_kubelet_reasons(cluster: Cluster, kubectl: Kubectl) -> None:
    cluster.apply(deployment("crash", replicas=1, image="example/crashloop:1"))
    cluster.apply(secret("s", {"A": "1"}))
    cluster.apply(
        deployment(
            "cfg", replicas=1, env=[{"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "B"}}}]
        )
    )

    def reason(prefix: str) -> str:
        st = pod_named(cluster, prefix).get("status") or {}
        cs = (st.get("containerStatuses") or [{}])[0]  # type: ignore[union-attr]
        return str((cs.get("state") or {}).get("waiting", {}).get("reason", ""))

    cluster.wait_for(lambda: reason("crash") == "CrashLoopBackOff", what="crash loop")
    cluster.wait_for(lambda: reason("cfg") == "CreateContainerConfigError", what="config error")
    pod = pod_named(cluster, "cfg")
    msg = pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"]  # type: ignore[index]
    assert msg == "couldn't find key B in Secret default/s"
    wide = kubectl("get", "pods")
    assert "CrashLoopBackOff" in wide and "CreateContainerConfigError" in wide


def test_verifier_resumes_after_the_watch_stream_drops(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.knobs.watch_drop_after = 0  # the first watch is cut before its first event
    cluster.apply(
        deployment(
            "web", replicas=2, env=[{"name": "A", "value": "1"}], image="registry.local/doesnotexist:1"
        )
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "verify",
            "--kubeconfig",
            kubeconfig,
            "--deployment",
            "web",
            "--expect-env",
            "A",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    cluster.wait_for(lambda: cluster.requests[("watch", "deployments")] >= 2, what="a second watch")
    fixed = deployment("web", replicas=2, env=[{"name": "A", "value": "1"}])
    cluster.apply(fixed)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert cluster.requests[("watch", "deployments")] >= 2


def test_serve_writes_a_kubeconfig_and_stops_on_sigterm(tmp_path: Path) -> None:
    kc = tmp_path / "kc"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.kubesim", "serve", "--kubeconfig", str(kc), "--nodes", "2"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("kubesim ready https://127.0.0.1:")
        out = subprocess.run(
            [KUBECTL, "get", "nodes", "--cache-dir", str(tmp_path / "c")],
            capture_output=True,
            text=True,
            env={**os.environ, "KUBECONFIG": str(kc), "HOME": str(tmp_path)},
            check=True,
        ).stdout
        assert "node-1" in out and "node-2" in out
        assert kc.stat().st_mode & 0o777 == 0o600
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def _bare_pod(name: str, node: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": 0,
            "volumes": [{"name": "c", "configMap": {"name": "imm"}}],
            "containers": [
                {
                    "name": "app",
                    "image": "busybox:1.36",
                    "command": ["sleep", "3600"],
                    "volumeMounts": [{"name": "c", "mountPath": "/c"}],
                }
            ],
        },
    }


def test_kubelet_releases_an_immutable_object_when_its_last_pod_on_the_node_goes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "imm", "namespace": "default"},
        "data": {"k": "old"},
        "immutable": True,
    }
    cluster.apply(cm)
    for name in ("first", "keeper"):
        cluster.apply(_bare_pod(name, "node-1"))
    kubectl("wait", "--for=condition=Ready", "pod/first", "pod/keeper", "--timeout=60s")
    kubectl("delete", "cm", "imm")
    cluster.apply({**cm, "data": {"k": "new"}})
    # while "keeper" still references it, a new pod on node-1 gets the cached old content
    cluster.apply(_bare_pod("second", "node-1"))
    kubectl("wait", "--for=condition=Ready", "pod/second", "--timeout=60s")
    assert kubectl("exec", "second", "--", "cat", "/c/k") == "old"
    # once no pod on node-1 references it, the entry is dropped and the next pod reads the API
    kubectl("delete", "pod", "first", "keeper", "second", "--grace-period=0")
    cluster.apply(_bare_pod("third", "node-1"))
    kubectl("wait", "--for=condition=Ready", "pod/third", "--timeout=60s")
    assert kubectl("exec", "third", "--", "cat", "/c/k") == "new"
