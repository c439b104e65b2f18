"""Lifecycle hooks and readiness gates as the kubelet runs them (node/hooks.py after
pkg/kubelet/lifecycle/handlers.go and kuberuntime_container.go; node/status.py after
status/generate.go GeneratePodReadyCondition), judged by the real kubectl: a postStart hook runs
before the container counts as running and a failing one kills it (`FailedPostStartHook`,
PostStartHookError, restarts: the rollout never completes); preStop runs before the kubelet's
SIGTERM; a pod with readinessGates is Ready only once their conditions are True."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import deployment
from tests.support.kubectl import Kubectl


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0, crashloop_backoff_initial=2.0, crashloop_backoff_max=4.0)


def pod(name: str, *, lifecycle: dict[str, Any] | None = None, **spec: Any) -> str:
    container: dict[str, Any] = {"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}
    if lifecycle:
        container["lifecycle"] = lifecycle
    container.update(spec.pop("container", {}))
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"terminationGracePeriodSeconds": 5, "containers": [container], **spec},
    }
    return json.dumps(body)


def status(cluster: Cluster, name: str) -> dict[str, Any]:
    return ((cluster.get("Pod", name) or {}).get("status")) or {}


def container(cluster: Cluster, name: str) -> dict[str, Any]:
    return (status(cluster, name).get("containerStatuses") or [{}])[0]


def condition(cluster: Cluster, name: str, kind: str) -> dict[str, Any]:
    return next((c for c in status(cluster, name).get("conditions") or [] if c["type"] == kind), {})


def events(kubectl: Kubectl, name: str) -> list[dict[str, Any]]:
    out = kubectl("get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json")
    return list(json.loads(out)["items"])


def test_a_post_start_hook_runs_before_the_container_counts_as_running(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    hook = {"postStart": {"exec": {"command": ["sh", "-c", "echo hooked > /tmp/post-start"]}}}
    kubectl("apply", "-f", "-", input=pod("hooked", lifecycle=hook))
    cluster.wait_for(lambda: "running" in (container(cluster, "hooked").get("state") or {}), what="running")
    assert kubectl("exec", "hooked", "--", "cat", "/tmp/post-start").strip() == "hooked"
    assert not [e for e in events(kubectl, "hooked") if e["reason"] == "FailedPostStartHook"]


def test_a_failing_post_start_hook_kills_and_restarts_the_container_and_the_rollout_never_completes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    web = deployment("hookfail", replicas=1, command=["sleep", "3600"])
    web["spec"]["template"]["spec"]["containers"][0]["lifecycle"] = {
        "postStart": {"exec": {"command": ["sh", "-c", "echo no >&2; exit 3"]}}
    }
    cluster.apply(web)

    def looping() -> dict[str, Any]:
        pods = [p for p in cluster.list("Pod") if p["metadata"]["labels"].get("app") == "hookfail"]
        st = ((pods[0].get("status") or {}).get("containerStatuses") or [{}])[0] if pods else {}
        return st if (st.get("state") or {}).get("waiting", {}).get("reason") == "PostStartHookError" else {}

    cluster.wait_for(lambda: bool(looping()), timeout=60, what="PostStartHookError")
    st = looping()
    name = next(
        p["metadata"] for p in cluster.list("Pod") if p["metadata"]["labels"].get("app") == "hookfail"
    )
    assert st["restartCount"] >= 1 and st["ready"] is False
    assert st["state"]["waiting"]["message"] == (
        f'Exec lifecycle hook ([sh -c echo no >&2; exit 3]) for Container "app" in Pod '
        f"\"{name['name']}_default({name['uid']})\" failed - error: command 'sh -c echo no >&2; exit 3' "
        'exited with 3: , message: "no\\n"'
    )
    seen = {(e["reason"], e["message"]) for e in events(kubectl, name["name"])}
    assert ("FailedPostStartHook", "PostStartHook failed") in seen
    assert ("Killing", "FailedPostStartHook") in seen
    out = kubectl.run("rollout", "status", "deployment/hookfail", "--timeout=2s", check=False)
    assert out.returncode != 0


def test_an_http_post_start_hook_to_a_closed_port_fails_with_the_dial_error(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    hook = {"postStart": {"httpGet": {"path": "/ready", "port": 9}}}
    kubectl("apply", "-f", "-", input=pod("httphook", lifecycle=hook))
    cluster.wait_for(
        lambda: any(e["reason"] == "FailedPostStartHook" for e in events(kubectl, "httphook")),
        timeout=60,
        what="FailedPostStartHook",
    )
    cluster.wait_for(
        lambda: (
            (container(cluster, "httphook").get("state") or {}).get("waiting", {}).get("reason")
            == "PostStartHookError"
        ),
        timeout=60,
        what="PostStartHookError",
    )
    message = container(cluster, "httphook")["state"]["waiting"]["message"]
    assert message.startswith('HTTP lifecycle hook (/ready) for Container "app" in Pod "httphook_default(')
    assert 'failed - error: Get "http://' in message and ':9/ready": dial tcp' in message


def test_pre_stop_runs_before_the_kubelet_stops_the_container_and_its_failure_is_an_event(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "notes"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    kubectl("apply", "-f", "-", input=json.dumps(claim))
    mounted = {
        "container": {"volumeMounts": [{"name": "notes", "mountPath": "/notes"}]},
        "volumes": [{"name": "notes", "persistentVolumeClaim": {"claimName": "notes"}}],
    }
    graceful = {"preStop": {"exec": {"command": ["sh", "-c", "echo drained > /notes/pre-stop"]}}}
    kubectl("apply", "-f", "-", input=pod("graceful", lifecycle=graceful, **mounted))
    failing = {"preStop": {"exec": {"command": ["sh", "-c", "exit 1"]}}}
    kubectl("apply", "-f", "-", input=pod("sloppy", lifecycle=failing))
    for name in ("graceful", "sloppy"):
        cluster.wait_for(lambda n=name: status(cluster, n).get("phase") == "Running", timeout=60, what=name)
    kubectl("delete", "pod", "graceful", "sloppy", "--wait=true", timeout=90)
    kubectl("apply", "-f", "-", input=pod("reader", **mounted))
    cluster.wait_for(lambda: status(cluster, "reader").get("phase") == "Running", timeout=60, what="reader")
    assert kubectl("exec", "reader", "--", "cat", "/notes/pre-stop").strip() == "drained"
    seen = {(e["reason"], e["message"]) for e in events(kubectl, "sloppy")}
    assert ("FailedPreStopHook", "PreStopHook failed") in seen
    assert not [e for e in events(kubectl, "graceful") if e["reason"] == "FailedPreStopHook"]


def test_a_pod_with_readiness_gates_is_ready_only_once_their_conditions_are_true(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    gated = pod("gated", readinessGates=[{"conditionType": "example.com/lb-ready"}])
    kubectl("apply", "-f", "-", input=gated)
    cluster.wait_for(
        lambda: condition(cluster, "gated", "ContainersReady").get("status") == "True", what="ready"
    )
    ready = condition(cluster, "gated", "Ready")
    assert ready["status"] == "False" and ready["reason"] == "ReadinessGatesNotReady"
    assert (
        ready["message"]
        == 'corresponding condition of pod readiness gate "example.com/lb-ready" does not exist.'
    )
    assert kubectl("get", "pod", "gated", "-o", "wide", "--no-headers").split()[-1] == "0/1"

    def gate(value: str) -> None:
        patch = {"status": {"conditions": [{"type": "example.com/lb-ready", "status": value}]}}
        kubectl("patch", "pod", "gated", "--subresource=status", "--type=strategic", "-p", json.dumps(patch))

    gate("False")
    cluster.wait_for(
        lambda: "but False" in str(condition(cluster, "gated", "Ready").get("message", "")), what="gate False"
    )
    assert condition(cluster, "gated", "Ready")["message"] == (
        'the status of pod readiness gate "example.com/lb-ready" is not "True", but False'
    )
    gate("True")
    cluster.wait_for(lambda: condition(cluster, "gated", "Ready").get("status") == "True", what="Ready")
    assert condition(cluster, "gated", "example.com/lb-ready")["status"] == "True"  # kept by the kubelet
    assert kubectl("get", "pod", "gated", "-o", "wide", "--no-headers").split()[-1] == "1/1"
    out = kubectl("wait", "--for=condition=Ready", "pod/gated", "--timeout=30s")
    assert "condition met" in out
