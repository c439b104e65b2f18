"""kubesim's kubelet events, judged by the real kubectl: deduplicated as client-go does."""

from __future__ import annotations

import json
from typing import Any

from tests.kubesim import Cluster
from tests.kubesim.node.events import Recorder, container_ref
from tests.support.kubectl import Kubectl


def bare_pod(name: str, container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "app", **container}], **spec},
    }


def test_events_are_deduplicated_aggregated_and_rate_limited_as_client_go_does(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(bare_pod("subject", {"image": "busybox:1.36", "command": ["sleep", "3600"]}))
    pod = cluster.get("Pod", "subject")
    assert pod is not None

    def record() -> None:
        rec = Recorder(cluster.store, "kubelet", "node-x")
        ref = container_ref(pod, "app")
        for _ in range(3):  # identical: one event, count 3
            rec.event(ref, "Warning", "Unhealthy", "Readiness probe failed: same")
        for i in range(11):  # the 10th distinct message of one reason turns into an aggregate
            rec.event(ref, "Warning", "ProbeWarning", f"distinct {i}")
        for _ in range(20):  # past 25 events about one object: dropped (then one every 5 minutes)
            rec.event(ref, "Normal", "Spam", "again")

    cluster.call(record)
    events = [
        e
        for e in json.loads(kubectl("get", "events", "-o", "json"))["items"]
        if (e.get("source") or {}).get("host") == "node-x"
    ]
    unhealthy = [e for e in events if e["reason"] == "Unhealthy"]
    assert [(e["count"], e["message"]) for e in unhealthy] == [(3, "Readiness probe failed: same")]
    warnings = [e for e in events if e["reason"] == "ProbeWarning"]
    plain = sorted(e["message"] for e in warnings if e["count"] == 1 and e["message"].startswith("distinct"))
    assert plain == sorted(f"distinct {i}" for i in range(9))
    combined = [(e["count"], e["message"]) for e in warnings if e["message"].startswith("(combined")]
    assert combined == [(2, "(combined from similar events): distinct 10")]
    # 3 + 11 occurrences used 14 of the burst of 25: 11 of the 20 reach the API, as one event
    spam = [(e["count"], e["message"]) for e in events if e["reason"] == "Spam"]
    assert spam == [(11, "again")]
    assert all(e["involvedObject"]["fieldPath"] == "spec.containers{app}" for e in events)
