"""Everyday operations against kubesim, judged by the real kubectl: `rollout undo` (the old
revision's ReplicaSet reused and renumbered), `port-forward`, `attach`, and namespaces as the
apiserver's strategy creates them."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.stream import portforward

from tests.kubesim import Cluster
from tests.support.helpers import http_app_container, http_app_deployment
from tests.support.kubectl import KUBECTL, Kubectl

REV = "deployment.kubernetes.io/revision"


def _replicasets(kubectl: Kubectl) -> dict[str, dict[str, Any]]:
    items = json.loads(kubectl("get", "rs", "-l", "app=web", "-o", "json"))["items"]
    return {rs["metadata"]["name"]: rs for rs in items}


def _revisions(kubectl: Kubectl) -> dict[str, str]:
    return {n: rs["metadata"]["annotations"].get(REV, "") for n, rs in _replicasets(kubectl).items()}


def _history(kubectl: Kubectl) -> list[str]:
    lines = kubectl("rollout", "history", "deploy/web").splitlines()
    return [line.split()[0] for line in lines[2:] if line.strip()]


def _rolled_out(kubectl: Kubectl) -> None:
    out = kubectl("rollout", "status", "deploy/web", "--timeout=60s")
    assert 'deployment "web" successfully rolled out' in out


def test_rollout_undo_reuses_the_old_replicaset_and_renumbers_its_revision(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "deployment", "web", "--image=busybox", "--replicas=2", "--", "sleep", "3600")
    _rolled_out(kubectl)
    (first,) = _revisions(kubectl)
    kubectl("set", "image", "deploy/web", "busybox=busybox:1.36")
    _rolled_out(kubectl)
    second = next(n for n in _revisions(kubectl) if n != first)
    assert _revisions(kubectl) == {first: "1", second: "2"}
    assert _history(kubectl) == ["1", "2"]

    assert "deployment.apps/web rolled back" in kubectl("rollout", "undo", "deploy/web")
    # the controller adopts revision 1's ReplicaSet as the new one: revision 3, no third ReplicaSet
    cluster.wait_for(lambda: _revisions(kubectl) == {first: "3", second: "2"}, what="renumbered")
    _rolled_out(kubectl)
    rss = _replicasets(kubectl)
    assert set(rss) == {first, second}
    assert rss[first]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert rss[first]["spec"]["replicas"] == 2 and rss[second]["spec"]["replicas"] == 0
    deploy = json.loads(kubectl("get", "deploy/web", "-o", "json"))
    assert deploy["metadata"]["annotations"][REV] == "3"
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"
    assert _history(kubectl) == ["2", "3"]
    shown = kubectl("rollout", "history", "deploy/web", "--revision=3")
    assert "with revision #3" in shown and "Image:\tbusybox\n" in shown
    assert f"pod-template-hash={first.removeprefix('web-')}" in shown

    # --to-revision: back to the second template, whose ReplicaSet becomes revision 4
    kubectl("rollout", "undo", "deploy/web", "--to-revision=2")
    cluster.wait_for(lambda: _revisions(kubectl) == {first: "3", second: "4"}, what="renumbered again")
    _rolled_out(kubectl)
    rss = _replicasets(kubectl)
    assert rss[second]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "2"
    assert rss[second]["spec"]["replicas"] == 2 and rss[first]["spec"]["replicas"] == 0
    assert _history(kubectl) == ["3", "4"]
    # kubectl refuses a revision that no longer exists, as on a real cluster
    gone = kubectl.run("rollout", "undo", "deploy/web", "--to-revision=1", check=False)
    assert gone.returncode == 1 and "unable to find specified revision 1 in history" in gone.stderr


def _port_forward(kubectl: Kubectl, *args: str) -> tuple[subprocess.Popen[str], int]:
    """`kubectl port-forward ARGS` running; the local port it announced."""
    env = {"KUBECONFIG": kubectl.kubeconfig, "HOME": str(kubectl.cache), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [KUBECTL, "--cache-dir", str(kubectl.cache / "cache"), "port-forward", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until kubectl listens (or exits: "")
    m = re.match(r"Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)$", line.strip())
    assert m, f"kubectl port-forward said {line!r}"
    return proc, int(m.group(1))


def _get(port: int, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def _app_pod(kubectl: Kubectl, name: str, **env: str) -> None:
    extra = [{"name": k, "value": v} for k, v in env.items()]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [http_app_container(required_env=list(env), env=extra)]},
    }
    kubectl("apply", "-f", "-", input=json.dumps(pod))
    kubectl("wait", "--for=condition=ready", f"pod/{name}", "--timeout=60s")


def test_port_forward_carries_http_requests_to_the_pods_app(kubectl: Kubectl) -> None:
    _app_pod(kubectl, "app", MARK="from-the-pod")
    proc, port = _port_forward(kubectl, "pod/app", "0:8080")
    try:
        # each request a new forwarded connection; /config answers only if the pod's env is set
        assert _get(port, "/health") == (200, "ok\n")
        status, body = _get(port, "/config")
        assert status == 200, body
        assert _get(port, "/health") == (200, "ok\n")
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_port_forward_to_a_deployment_picks_one_of_its_pods(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=json.dumps(http_app_deployment("web", replicas=1)))
    kubectl("rollout", "status", "deploy/web", "--timeout=60s")
    proc, port = _port_forward(kubectl, "deploy/web", "0:8080")
    try:
        assert _get(port, "/health") == (200, "ok\n")
    finally:
        proc.kill()
        proc.wait()


def test_port_forward_to_a_closed_port_reports_the_kubelets_error_and_exits(kubectl: Kubectl) -> None:
    _app_pod(kubectl, "app")
    proc, port = _port_forward(kubectl, "pod/app", "0:9999")
    try:
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            _get(port, "/health")
        # the error stream's text ends kubectl's session, as on a real cluster
        assert proc.wait(timeout=30) == 1
    finally:
        proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    assert "an error occurred forwarding" in err and "-> 9999: error forwarding port 9999 to pod " in err
    assert "failed to connect to localhost:9999 inside namespace" in err
    assert "connect: connection refused" in err
    assert "error: lost connection to pod" in err


def test_the_official_client_port_forwards_over_the_websocket_channel_protocol(kubectl: Kubectl) -> None:
    _app_pod(kubectl, "app")
    v1 = client.CoreV1Api(config.new_client_from_config(config_file=kubectl.kubeconfig))
    pf = portforward(v1.connect_get_namespaced_pod_portforward, "app", "default", ports="8080")
    sock = pf.socket(8080)
    sock.setblocking(True)
    try:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: app\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(4096):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"\r\n\r\nok\n")
        assert pf.error(8080) is None
    finally:
        sock.close()
        pf.close()


def _echo_pod(kubectl: Kubectl, name: str, script: str) -> None:
    container = {
        "name": name,
        "image": "busybox",
        "stdin": True,
        "stdinOnce": True,
        "command": ["sh", "-c", script],
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "containers": [container]},
    }
    kubectl("apply", "-f", "-", input=json.dumps(pod))
    kubectl("wait", "--for=condition=ready", f"pod/{name}", "--timeout=60s")


def test_attach_sends_stdin_to_the_container_and_returns_what_it_writes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    _echo_pod(kubectl, "echo", 'echo started; while read l; do echo "got $l"; done; echo bye')
    cluster.wait_for(lambda: kubectl("logs", "echo") == "started\n", what="the first line logged")
    proc = kubectl.run("attach", "-i", "echo", input="hello\nworld\n", timeout=60)
    # only what the container wrote after the attach (not "started"); stdinOnce: kubectl's EOF
    # closes the container's stdin, the loop ends, the container exits, and attach returns
    assert proc.stdout == "got hello\ngot world\nbye\n"
    assert kubectl("logs", "echo") == "started\ngot hello\ngot world\nbye\n"
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/echo", "--timeout=60s")


def test_kubectl_run_interactive_round_trips_a_line_through_attach(kubectl: Kubectl) -> None:
    out = kubectl(
        "run", "ask", "-i", "--rm", "--image=busybox", "--restart=Never", "--",
        "sh", "-c", 'read l; echo "got $l"',
        input="ping\n",
    )  # fmt: skip
    assert out.splitlines()[0] == "got ping"
    assert 'pod "ask" deleted' in out


def test_created_namespaces_are_active_with_the_kubernetes_finalizer(kubectl: Kubectl) -> None:
    created = json.loads(kubectl("create", "namespace", "team", "-o", "json"))
    assert created["spec"] == {"finalizers": ["kubernetes"]}
    assert created["status"] == {"phase": "Active"}
    assert created["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    # a client's own finalizers and status are not the apiserver's: phase is Active regardless
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "other"},
        "spec": {"finalizers": ["example.com/keep"]},
        "status": {"phase": "Terminating"},
    }
    kubectl("create", "-f", "-", input=json.dumps(ns))
    got = json.loads(kubectl("get", "ns", "other", "-o", "json"))
    assert got["spec"]["finalizers"] == ["example.com/keep", "kubernetes"]
    assert got["status"]["phase"] == "Active"
    assert kubectl("get", "ns", "team", "--no-headers").split()[:2] == ["team", "Active"]
