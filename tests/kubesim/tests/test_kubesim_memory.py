"""Memory limits (node/memory.py, emulating the cgroup OOM killer by polling the container's
RSS): a container that grows past `resources.limits.memory` ends `OOMKilled` with exit code 137
and is restarted per restartPolicy (a rollout of it never completes); one within its limit runs
on. Judged by the real kubectl."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.kubesim import Cluster, Knobs
from tests.kubesim.node.memory import memory_limit
from tests.support.kubectl import Kubectl

HOG = "import time; hog = b'x' * (200 * 1024 * 1024); time.sleep(600)"


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0, crashloop_backoff_initial=2.0, crashloop_backoff_max=4.0)


def pod(name: str, command: list[str], *, restart: str = "Always") -> str:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": restart,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "app",
                    "image": "kubesim.local/configapp:1",
                    "command": command,
                    "resources": {"limits": {"memory": "48Mi"}, "requests": {"memory": "32Mi"}},
                }
            ],
        },
    }
    return json.dumps(body)


def container(cluster: Cluster, name: str) -> dict[str, Any]:
    return ((((cluster.get("Pod", name) or {}).get("status")) or {}).get("containerStatuses") or [{}])[0]


def test_the_limit_is_read_as_a_quantity() -> None:
    assert memory_limit({"resources": {"limits": {"memory": "48Mi"}}}) == 48 * 1024 * 1024
    assert memory_limit({"resources": {"limits": {"memory": "1G"}}}) == 10**9
    assert memory_limit({"resources": {"requests": {"memory": "1G"}}}) is None


def test_a_container_over_its_memory_limit_is_oom_killed_and_restarted(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", input=pod("hog", ["python3", "-c", HOG]))
    kubectl("apply", "-f", "-", input=pod("calm", ["sleep", "600"]))
    cluster.wait_for(
        lambda: (
            (container(cluster, "hog").get("lastState") or {}).get("terminated", {}).get("reason")
            == "OOMKilled"
        ),
        timeout=60,
        what="OOMKilled",
    )
    shown = json.loads(kubectl("get", "pod", "hog", "-o", "json"))["status"]["containerStatuses"][0]
    last = shown["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (137, "OOMKilled")
    assert shown["restartCount"] >= 1
    assert "OOMKilled" in kubectl("describe", "pod", "hog")
    # v1qos.GetPodQOS, as the kubelet reports it: a request below its limit is Burstable
    assert kubectl("get", "pod", "hog", "-o", "jsonpath={.status.qosClass}") == "Burstable"
    calm = container(cluster, "calm")
    assert "running" in calm["state"] and calm["restartCount"] == 0


def test_under_restart_policy_never_the_oom_killed_pod_fails(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=pod("once", ["python3", "-c", HOG], restart="Never"))
    cluster.wait_for(
        lambda: ((cluster.get("Pod", "once") or {}).get("status") or {}).get("phase") == "Failed",
        timeout=60,
        what="Failed",
    )
    term = container(cluster, "once")["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (137, "OOMKilled")
    assert kubectl("get", "pod", "once", "--no-headers").split()[2] == "OOMKilled"
