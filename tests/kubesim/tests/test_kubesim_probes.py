"""kubesim's kubelet probes, judged by the real kubectl: a failing liveness probe restarts the
container (`Unhealthy`, `Killing`, restartCount), a failing startup probe keeps the pod unready
and restarts it, readiness waits for startup and flips the Service's endpoints both ways."""

from __future__ import annotations

import json
from typing import Any

from tests.kubesim import Cluster
from tests.support.helpers import http_app_container, service
from tests.support.kubectl import Kubectl


def pod(name: str, *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": list(containers), **spec},
    }


def status(cluster: Cluster, name: str) -> dict[str, Any]:
    p = cluster.get("Pod", name) or {}
    return ((p.get("status") or {}).get("containerStatuses") or [{}])[0]


def events_of(kubectl: Kubectl, name: str) -> dict[str, list[dict[str, Any]]]:
    items = json.loads(
        kubectl("get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json")
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for e in items["items"]:
        out.setdefault(e["reason"], []).append(e)
    return out


def test_a_failing_liveness_probe_restarts_the_container_with_unhealthy_and_killing_events(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # /health answers 500: the httpGet liveness probe fails twice, the kubelet kills and restarts
    sick = http_app_container(env=[{"name": "HEALTH_STATUS", "value": "500"}], readiness=False)
    sick["livenessProbe"] = {
        "httpGet": {"path": "/health", "port": "http"},
        "periodSeconds": 1,
        "failureThreshold": 2,
    }
    cluster.apply(pod("sick", sick))
    # nothing listens on 9999: a tcpSocket liveness probe fails the same way
    deaf = {
        "name": "app",
        "image": "busybox:1.36",
        "command": ["sleep", "3600"],
        "livenessProbe": {"tcpSocket": {"port": 9999}, "periodSeconds": 1, "failureThreshold": 1},
    }
    cluster.apply(pod("deaf", deaf))
    for name in ("sick", "deaf"):
        cluster.wait_for(
            lambda n=name: int(status(cluster, n).get("restartCount", 0)) >= 1, what=f"{name} restart"
        )
    last = status(cluster, "sick")["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (143, "Error")  # SIGTERM within its grace period
    status_500 = "Liveness probe failed: HTTP probe failed with statuscode: 500"
    cluster.wait_for(
        lambda: status_500 in {e["message"] for e in events_of(kubectl, "sick").get("Unhealthy", [])},
        what="the 500 recorded",
    )
    ev = events_of(kubectl, "sick")
    ip = (cluster.get("Pod", "sick") or {})["status"]["podIP"]
    refused = f'Liveness probe failed: Get "http://{ip}:8080/health": dial tcp {ip}:8080: connect: connection refused'
    assert {e["message"] for e in ev["Unhealthy"]} <= {status_500, refused}  # refused: before it listens
    assert all(e["type"] == "Warning" for e in ev["Unhealthy"])
    assert [e["message"] for e in ev["Killing"]] == ["Container app failed liveness probe, will be restarted"]
    assert len(ev["Started"]) == 1 and ev["Started"][0]["count"] >= 2
    ip = (cluster.get("Pod", "deaf") or {})["status"]["podIP"]
    ev = events_of(kubectl, "deaf")
    assert (
        ev["Unhealthy"][0]["message"]
        == f"Liveness probe failed: dial tcp {ip}:9999: connect: connection refused"
    )
    row = kubectl("get", "pod", "sick", "--no-headers").split()
    assert int(row[3]) >= 1


def test_a_failing_startup_probe_keeps_the_pod_unready_and_restarts_it(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # the readiness probe would pass at once; it waits for the startup probe, which needs a file
    app = http_app_container()
    app["startupProbe"] = {
        "exec": {"command": ["cat", "/data/started"]},
        "periodSeconds": 1,
        "failureThreshold": 3,
    }
    app["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    cluster.apply(pod("slow", app, volumes=[{"name": "data", "emptyDir": {}}]))
    seen_ready: list[bool] = []

    def observe() -> bool:
        st = status(cluster, "slow")
        seen_ready.append(bool(st.get("ready")) or bool(st.get("started")))
        return int(st.get("restartCount", 0)) >= 1

    cluster.wait_for(observe, timeout=60, what="a restart after the startup probe's failures")
    assert len(seen_ready) > 10 and not any(seen_ready)
    ev = events_of(kubectl, "slow")
    messages = {e["message"] for e in ev["Unhealthy"]}
    assert messages == {"Startup probe failed: cat: /data/started: No such file or directory\n"}
    assert [e["message"] for e in ev["Killing"]] == ["Container app failed startup probe, will be restarted"]
    assert (cluster.get("Pod", "slow") or {})["status"]["phase"] == "Running"

    # once the file exists (the volume outlives the container) startup passes, then readiness
    cluster.wait_for(lambda: "running" in (status(cluster, "slow").get("state") or {}), what="running again")
    kubectl("exec", "slow", "--", "touch", "/data/started")
    kubectl("wait", "--for=condition=Ready", "pod/slow", "--timeout=60s")
    st = status(cluster, "slow")
    assert st["started"] is True and st["ready"] is True


def test_readiness_flips_the_services_endpoints_both_ways(cluster: Cluster, kubectl: Kubectl) -> None:
    gate = {
        "name": "app",
        "image": "busybox:1.36",
        "command": ["sleep", "3600"],
        "ports": [{"name": "http", "containerPort": 8080}],
        "readinessProbe": {
            "exec": {"command": ["cat", "/tmp/ready"]},
            "periodSeconds": 1,
            "failureThreshold": 1,
        },
    }
    cluster.apply(pod("gated", gate))
    cluster.apply(service("gated"))
    kubectl("wait", "--for=jsonpath={.status.phase}=Running", "pod/gated", "--timeout=60s")
    ip = (cluster.get("Pod", "gated") or {})["status"]["podIP"]

    def endpoints() -> tuple[list[str], list[str]]:
        subsets = (cluster.get("Endpoints", "gated") or {}).get("subsets") or [{}]
        return (
            [a["ip"] for a in subsets[0].get("addresses", [])],
            [a["ip"] for a in subsets[0].get("notReadyAddresses", [])],
        )

    cluster.wait_for(lambda: endpoints() == ([], [ip]), what="not ready before the file")
    kubectl("exec", "gated", "--", "touch", "/tmp/ready")
    cluster.wait_for(lambda: endpoints() == ([ip], []), what="ready: in the endpoints")
    kubectl("exec", "gated", "--", "rm", "/tmp/ready")
    cluster.wait_for(lambda: endpoints() == ([], [ip]), what="unready again after a failure")
    assert kubectl("get", "pod", "gated", "-o", "jsonpath={.status.containerStatuses[0].ready}") == "false"
    ev = events_of(kubectl, "gated")
    assert {e["message"] for e in ev["Unhealthy"]} == {
        "Readiness probe failed: cat: /tmp/ready: No such file or directory\n"
    }
    assert "Killing" not in ev  # readiness never restarts anything
    kubectl("exec", "gated", "--", "touch", "/tmp/ready")
    cluster.wait_for(lambda: endpoints() == ([ip], []), what="ready again")
    assert status(cluster, "gated")["restartCount"] == 0
