"""The kinds every cluster serves beside the workloads, driven by the real kubectl: CronJob and its
controller (pkg/controller/cronjob), HorizontalPodAutoscaler without metrics-server
(pkg/controller/podautoscaler/horizontal.go), PodDisruptionBudget with the eviction subresource
and `kubectl drain` (pkg/controller/disruption, pkg/registry/core/pod/storage/eviction.go),
ResourceQuota and LimitRange at admission (plugin/pkg/admission/resourcequota, limitranger), and
Ingress, NetworkPolicy, Lease, ReplicationController, PriorityClass and APIService listed with
kubectl's columns (pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import deployment
from tests.support.kubectl import Kubectl


@pytest.fixture
def knobs() -> Knobs:
    # a cron minute a second, an HPA sync twice a second, node Leases renewed twice a second
    return Knobs(sync_period=1.0, cron_speed=60.0, hpa_sync_period=0.5, node_lease_renew=0.5)


def _json(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl(*args, "-o", "json"))


def _events(kubectl: Kubectl, kind: str, name: str) -> list[tuple[str, str]]:
    items = _json(
        kubectl, "get", "events", "--field-selector", f"involvedObject.kind={kind},involvedObject.name={name}"
    )
    return [(e["reason"], e["message"]) for e in items["items"]]


def test_api_resources_and_versions_list_the_kinds_every_cluster_serves(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    rows = {tuple(line.split()) for line in kubectl("api-resources", "--no-headers").splitlines()}
    for row in [
        ("cronjobs", "cj", "batch/v1", "true", "CronJob"),
        ("horizontalpodautoscalers", "hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler"),
        ("poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"),
        ("resourcequotas", "quota", "v1", "true", "ResourceQuota"),
        ("limitranges", "limits", "v1", "true", "LimitRange"),
        ("replicationcontrollers", "rc", "v1", "true", "ReplicationController"),
        ("ingresses", "ing", "networking.k8s.io/v1", "true", "Ingress"),
        ("ingressclasses", "networking.k8s.io/v1", "false", "IngressClass"),
        ("networkpolicies", "netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"),
        ("leases", "coordination.k8s.io/v1", "true", "Lease"),
        ("priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass"),
        ("apiservices", "apiregistration.k8s.io/v1", "false", "APIService"),
    ]:
        assert row in rows, row
    versions = kubectl("api-versions").split()
    assert {
        "autoscaling/v1",
        "autoscaling/v2",
        "policy/v1",
        "scheduling.k8s.io/v1",
        "coordination.k8s.io/v1",
    } <= set(versions)
    # the aggregator's local APIServices, and the node Leases the kubelets renew
    services = kubectl("get", "apiservices")
    assert re.search(r"^v2\.autoscaling\s+Local\s+True\s+\S+$", services, re.M), services
    renewed = {
        i["metadata"]["name"]: i["spec"]["renewTime"]
        for i in _json(kubectl, "get", "leases", "-n", "kube-node-lease")["items"]
    }
    assert set(renewed) == {"node-1", "node-2", "node-3"}
    cluster.wait_for(
        lambda: cluster.get("Lease", "node-1", "kube-node-lease")["spec"]["renewTime"] != renewed["node-1"],  # type: ignore[index]
        timeout=10,
        what="the node Lease renewed",
    )
    assert re.search(r"^node-1\s+node-1\s+\S+$", kubectl("get", "leases", "-n", "kube-node-lease"), re.M)


def test_a_cronjob_runs_on_schedule_keeps_its_history_and_kubectl_makes_a_job_from_it(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "cronjob", "tick", "--image=busybox:1.36", "--schedule=*/1 * * * *", "--", "true")
    kubectl("patch", "cronjob", "tick", "--type=merge", "-p", '{"spec":{"successfulJobsHistoryLimit":2}}')

    def succeeded() -> list[dict[str, Any]]:
        jobs = [j for j in cluster.list("Job") if j["metadata"]["name"].startswith("tick-")]
        return [
            j
            for j in jobs
            if any(c["type"] == "Complete" for c in (j.get("status") or {}).get("conditions") or [])
        ]

    cluster.wait_for(
        lambda: any(e[0] == "SuccessfulDelete" for e in _events(kubectl, "CronJob", "tick")),
        timeout=60,
        what="history pruned",
    )
    # suspended: no new Job; the finished ones beyond successfulJobsHistoryLimit are deleted
    kubectl("patch", "cronjob", "tick", "--type=merge", "-p", '{"spec":{"suspend":true}}')
    before = cluster.get("CronJob", "tick")["status"]["lastScheduleTime"]  # type: ignore[index]
    cluster.wait_for(lambda: len(succeeded()) == 2, timeout=30, what="two successful Jobs kept")
    cj = _json(kubectl, "get", "cronjob", "tick")
    assert cj["spec"]["concurrencyPolicy"] == "Allow" and cj["spec"]["failedJobsHistoryLimit"] == 1
    assert cj["status"]["lastScheduleTime"] and cj["status"]["lastSuccessfulTime"]
    job = succeeded()[0]
    minutes = int(job["metadata"]["name"].rsplit("-", 1)[1])
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    scheduled = dt.datetime.fromtimestamp(minutes * 60, dt.UTC).strftime("%Y-%m-%dT%H:%M:00Z")
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == scheduled
    reasons = {r for r, _ in _events(kubectl, "CronJob", "tick")}
    assert {"SuccessfulCreate", "SawCompletedJob", "SuccessfulDelete"} <= reasons
    row = kubectl("get", "cronjob", "tick").splitlines()
    assert row[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert row[1].split()[1:7] == ["*/1", "*", "*", "*", "*", "<none>"]
    assert "True" in kubectl("get", "cronjob", "tick").splitlines()[1].split()
    kubectl("create", "job", "by-hand", "--from=cronjob/tick")
    made = _json(kubectl, "get", "job", "by-hand")
    assert made["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert made["metadata"]["ownerReferences"][0]["name"] == "tick"
    cluster.wait_for(
        lambda: any(e[0] == "UnexpectedJob" for e in _events(kubectl, "CronJob", "tick")),
        timeout=20,
        what="UnexpectedJob",
    )
    assert cluster.get("CronJob", "tick")["status"]["lastScheduleTime"] == before  # type: ignore[index]


def test_forbid_skips_a_run_while_one_is_active_and_replace_replaces_it(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    for name, policy in (("forbid", "Forbid"), ("replace", "Replace")):
        kubectl(
            "create", "cronjob", name, "--image=busybox:1.36", "--schedule=*/1 * * * *", "--", "sleep", "3600"
        )
        kubectl(
            "patch",
            "cronjob",
            name,
            "--type=merge",
            "-p",
            json.dumps({"spec": {"concurrencyPolicy": policy}}),
        )
    cluster.wait_for(
        lambda: any(e[0] == "JobAlreadyActive" for e in _events(kubectl, "CronJob", "forbid")),
        timeout=30,
        what="JobAlreadyActive",
    )
    assert len(cluster.get("CronJob", "forbid")["status"]["active"]) == 1  # type: ignore[index]
    cluster.wait_for(
        lambda: sum(e[0] == "SuccessfulDelete" for e in _events(kubectl, "CronJob", "replace")) >= 1,
        timeout=30,
        what="a replaced Job",
    )
    assert len(cluster.get("CronJob", "replace")["status"]["active"]) == 1  # type: ignore[index]


def test_an_hpa_without_metrics_server_reports_it_and_manual_scale_still_works(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(deployment("web", replicas=2, image="busybox:1.36", command=["sleep", "3600"]))
    assert "horizontalpodautoscaler.autoscaling/web autoscaled" in kubectl(
        "autoscale", "deployment", "web", "--min=2", "--max=4"
    )

    def condition(kind: str) -> dict[str, Any]:
        hpa = cluster.get("HorizontalPodAutoscaler", "web") or {}
        return next((c for c in (hpa.get("status") or {}).get("conditions") or [] if c["type"] == kind), {})

    cluster.wait_for(
        lambda: condition("ScalingActive").get("reason") == "FailedGetResourceMetric",
        timeout=20,
        what="ScalingActive",
    )
    assert condition("ScalingActive")["status"] == "False"
    assert condition("ScalingActive")["message"] == (
        "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for "
        "resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested "
        "resource (get pods.metrics.k8s.io)"
    )
    assert condition("AbleToScale")["reason"] == "SucceededGetScale"
    row = kubectl("get", "hpa", "web").splitlines()
    assert row[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert row[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/80%", "2", "4", "2"]
    reasons = {r for r, _ in _events(kubectl, "HorizontalPodAutoscaler", "web")}
    assert {"FailedGetResourceMetric", "FailedComputeMetricsReplicas"} <= reasons
    # autoscaling/v1 shows the same object as v1 has it
    v1 = _json(kubectl, "get", "horizontalpodautoscalers.v1.autoscaling", "web")
    assert v1["apiVersion"] == "autoscaling/v1" and v1["spec"]["targetCPUUtilizationPercentage"] == 80
    assert (
        "FailedGetResourceMetric"
        in v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/conditions"]
    )
    # a manual scale within the bounds stays; beyond maxReplicas the controller brings it back
    kubectl("scale", "deployment", "web", "--replicas=3")
    cluster.wait_rollout("web", timeout=60)
    hpas = cluster.controllers.autoscalers
    syncs = cluster.call(lambda: hpas.syncs[("default", "web")])
    cluster.wait_for(
        lambda: cluster.call(lambda: hpas.syncs[("default", "web")]) >= syncs + 2,
        timeout=30,
        what="two more syncs",
    )
    assert cluster.get("Deployment", "web")["spec"]["replicas"] == 3  # type: ignore[index]
    kubectl("scale", "deployment", "web", "--replicas=7")
    cluster.wait_for(
        lambda: cluster.get("Deployment", "web")["spec"]["replicas"] == 4, timeout=20, what="rescaled to max"
    )  # type: ignore[index]
    assert (
        "SuccessfulRescale",
        "New size: 4; reason: Current number of replicas above Spec.MaxReplicas",
    ) in _events(kubectl, "HorizontalPodAutoscaler", "web")


def test_drain_respects_a_pod_disruption_budget_and_evictions_answer_429(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(deployment("web", replicas=2, image="busybox:1.36", command=["sleep", "3600"]))
    cluster.wait_rollout("web", timeout=60)
    assert kubectl("create", "pdb", "web", "--selector=app=web", "--min-available=2").strip() == (
        "poddisruptionbudget.policy/web created"
    )
    cluster.wait_for(
        lambda: (
            (cluster.get("PodDisruptionBudget", "web") or {}).get("status", {}).get("currentHealthy") == 2
        ),
        timeout=20,
        what="pdb status",
    )
    st = cluster.get("PodDisruptionBudget", "web")["status"]  # type: ignore[index]
    assert (st["disruptionsAllowed"], st["desiredHealthy"], st["expectedPods"]) == (0, 2, 2)
    assert kubectl("get", "pdb", "web").splitlines()[1].split()[:4] == ["web", "2", "N/A", "0"]
    pod = next(p for p in cluster.list("Pod") if p["metadata"]["labels"].get("app") == "web")
    name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
    eviction = json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}})
    refused = kubectl.run(
        "create",
        "--raw",
        f"/api/v1/namespaces/default/pods/{name}/eviction",
        "-f",
        "-",
        input=eviction,
        check=False,
    )
    assert refused.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in refused.stderr
    drained = kubectl.run("drain", node, "--ignore-daemonsets", "--timeout=1s", check=False)
    assert drained.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in drained.stderr
    assert cluster.get("Pod", name) is not None  # still there
    kubectl("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    cluster.wait_for(
        lambda: cluster.get("PodDisruptionBudget", "web")["status"]["disruptionsAllowed"] == 1,
        timeout=20,
        what="allowed",
    )  # type: ignore[index]
    out = kubectl("drain", node, "--ignore-daemonsets", "--timeout=30s")
    assert f"pod/{name} evicted" in out and f"node/{node} drained" in out
    cluster.wait_rollout("web", timeout=60)
    assert all(
        p["spec"]["nodeName"] != node
        for p in cluster.list("Pod")
        if not p["metadata"].get("deletionTimestamp")
    )


def test_a_quota_refuses_pods_over_it_at_admission_so_the_replicaset_reports_failed_create(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    assert (
        kubectl("create", "quota", "q", "--hard=pods=2,count/configmaps=5").strip()
        == "resourcequota/q created"
    )
    cluster.apply(deployment("web", replicas=3, image="busybox:1.36", command=["sleep", "3600"]))
    rs_events: list[tuple[str, str]] = []

    def refused() -> bool:
        rs = [r for r in cluster.list("ReplicaSet") if r["metadata"]["name"].startswith("web-")]
        rs_events[:] = _events(kubectl, "ReplicaSet", rs[0]["metadata"]["name"]) if rs else []
        return any(r == "FailedCreate" for r, _ in rs_events)

    cluster.wait_for(refused, timeout=30, what="FailedCreate")
    message = next(m for r, m in rs_events if r == "FailedCreate")
    assert re.fullmatch(
        r'Error creating: pods "web-[a-z0-9]+-[a-z0-9]{5}" is forbidden: exceeded quota: q, '
        r"requested: pods=1, used: pods=2, limited: pods=2",
        message.removeprefix("(combined from similar events): "),
    ), message
    cluster.wait_for(
        lambda: (
            (cluster.get("ResourceQuota", "q") or {}).get("status", {}).get("used", {}).get("pods") == "2"
        ),
        timeout=20,
        what="used",
    )
    row = kubectl("get", "quota", "q").splitlines()
    assert row[0].split() == ["NAME", "REQUEST", "LIMIT", "AGE"]
    assert "count/configmaps: 1/5, pods: 2/2" in row[1]  # kube-root-ca.crt counts
    run = kubectl.run("run", "extra", "--image=busybox:1.36", check=False)
    assert run.stderr.strip() == (
        'Error from server (Forbidden): pods "extra" is forbidden: exceeded quota: q, requested: pods=1, '
        "used: pods=2, limited: pods=2"
    )
    kubectl("create", "quota", "cpu", "--hard=requests.cpu=1")
    bare = kubectl.run("run", "bare", "--image=busybox:1.36", check=False)
    assert 'pods "bare" is forbidden: failed quota: cpu: must specify requests.cpu for: bare' in bare.stderr
    kubectl("delete", "quota", "q", "cpu")
    cluster.wait_rollout("web", timeout=60)  # the ReplicaSet's retry goes through once the quota is gone


def test_a_limit_range_defaults_a_pods_resources_and_refuses_more_than_its_max(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "limits"},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "max": {"cpu": "1"},
                    "default": {"cpu": "500m"},
                    "defaultRequest": {"cpu": "100m"},
                }
            ]
        },
    }
    kubectl("apply", "-f", "-", input=json.dumps(limits))
    stored = _json(kubectl, "get", "limitrange", "limits")
    assert stored["spec"]["limits"][0]["default"] == {"cpu": "500m"}
    assert kubectl("get", "limits").splitlines()[0].split() == ["NAME", "CREATED", "AT"]
    kubectl("run", "small", "--image=busybox:1.36", "--", "sleep", "3600")
    pod = _json(kubectl, "get", "pod", "small")
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m"},
        "requests": {"cpu": "100m"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container small; cpu limit for container small"
    )
    big = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big"},
        "spec": {
            "containers": [{"name": "big", "image": "busybox:1.36", "resources": {"limits": {"cpu": "2"}}}]
        },
    }
    out = kubectl.run("create", "-f", "-", input=json.dumps(big), check=False)
    assert out.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": pods "big" is forbidden: '
        "maximum cpu usage per Container is 1, but limit is 2"
    )


def test_the_other_kinds_are_stored_and_listed_with_kubectls_columns(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "ingress", "shop", "--class=nginx", "--rule=shop.example/=shop:80,tls=shop-tls")
    kubectl("create", "priorityclass", "gold", "--value=1000", "--description=important")
    objects = [
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "deny"},
            "spec": {"podSelector": {"matchLabels": {"app": "web"}}},
        },
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "leader"},
            "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
        },
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "old"},
            "spec": {
                "replicas": 2,
                "template": {
                    "metadata": {"labels": {"app": "old"}},
                    "spec": {
                        "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]
                    },
                },
            },
        },
    ]
    for obj in objects:
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    header = {
        "ingress": ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
        "networkpolicy": ["NAME", "POD-SELECTOR", "AGE"],
        "lease": ["NAME", "HOLDER", "AGE"],
        "priorityclass": ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE"],
        "replicationcontroller": ["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
    }
    for kind, cols in header.items():
        assert kubectl("get", kind).splitlines()[0].split() == cols, kind
    assert kubectl("get", "ingress", "shop").splitlines()[1].split()[:5] == [
        "shop",
        "nginx",
        "shop.example",
        "80,",
        "443",
    ]
    assert kubectl("get", "netpol", "deny").splitlines()[1].split()[:2] == ["deny", "app=web"]
    assert kubectl("get", "lease", "leader").splitlines()[1].split()[:2] == ["leader", "me"]
    assert "gold" in kubectl("get", "pc") and "system-node-critical" in kubectl("get", "pc")
    assert _json(kubectl, "get", "netpol", "deny")["spec"]["policyTypes"] == ["Ingress"]
    cluster.wait_for(
        lambda: (
            (cluster.get("ReplicationController", "old") or {}).get("status", {}).get("readyReplicas") == 2
        ),
        timeout=60,
        what="the ReplicationController's pods",
    )
    assert kubectl("get", "rc", "old").splitlines()[1].split()[:4] == ["old", "2", "2", "2"]
    kubectl("scale", "rc", "old", "--replicas=1")
    cluster.wait_for(
        lambda: (
            len(
                [
                    p
                    for p in cluster.list("Pod")
                    if p["metadata"]["labels"].get("app") == "old"
                    and not p["metadata"].get("deletionTimestamp")
                ]
            )
            == 1
        ),
        timeout=30,
        what="scaled down",
    )
    # a pod naming the class gets its priority; a class nobody created is refused
    kubectl("run", "vip", "--image=busybox:1.36", "--overrides", '{"spec":{"priorityClassName":"gold"}}')
    assert _json(kubectl, "get", "pod", "vip")["spec"]["priority"] == 1000
    bad = kubectl.run(
        "run",
        "nobody",
        "--image=busybox:1.36",
        "--overrides",
        '{"spec":{"priorityClassName":"tin"}}',
        check=False,
    )
    assert 'pods "nobody" is forbidden: no PriorityClass with name tin was found' in bad.stderr
