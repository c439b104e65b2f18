"""kubectl's imperative commands against kubesim: protobuf request bodies and batch/v1 Jobs,
judged by the real kubectl (its own client-side rendering is the expected object)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.kubectl import Kubectl

CREATES = [
    ("deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=8080", "--", "sleep", "99"),
    ("configmap", "cfg", "--from-literal=a=b", "--from-literal=empty="),
    ("secret", "generic", "pw", "--from-literal=password=hunter22", "--type=example.com/basic"),
    ("namespace", "team"),
    ("serviceaccount", "robot"),
    ("job", "once", "--image=busybox", "--", "sh", "-c", "echo done"),
    ("service", "clusterip", "web", "--tcp=80:8080", "--tcp=443:8443"),
    ("service", "nodeport", "np", "--tcp=81:8081"),
    ("service", "loadbalancer", "lb", "--tcp=82:8082"),
    ("service", "externalname", "ext", "--external-name=example.com"),
]


def _with(args: tuple[str, ...], *flags: str) -> list[str]:
    """`args` with `flags` added before a `--` (after it they would be the container's command)."""
    cut = args.index("--") if "--" in args else len(args)
    return [*args[:cut], *flags, *args[cut:]]


def _empty(v: Any) -> bool:
    return v in (None, "", {}, [])


def _missing(expected: Any, got: Any, path: str = "") -> list[str]:
    """Every non-empty field of `expected` that `got` lacks or holds differently."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{path}: {got!r} is not an object"]
        out = []
        for k, v in expected.items():
            if k == "status" or _empty(v):
                continue
            out += _missing(v, got.get(k), f"{path}.{k}")
        return out
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return [f"{path}: {got!r} != {expected!r}"]
        return [
            m
            for i, (e, g) in enumerate(zip(expected, got, strict=True))
            for m in _missing(e, g, f"{path}[{i}]")
        ]
    return [] if expected == got else [f"{path}: {got!r} != {expected!r}"]


@pytest.mark.parametrize("args", CREATES, ids=["-".join(a[:2]) for a in CREATES])
def test_kubectl_create_sends_protobuf_and_kubesim_stores_what_kubectl_rendered(
    kubectl: Kubectl, args: tuple[str, ...]
) -> None:
    # what kubectl would send, rendered client-side (no server involved)
    rendered = json.loads(kubectl("create", *_with(args, "--dry-run=client", "-o", "json")))
    proc = kubectl.run("create", *_with(args, "-v=8"))
    assert "created" in proc.stdout
    # the request really was protobuf (kubectl logs the Content-Type it sent at -v=8)
    assert "Content-Type: application/vnd.kubernetes.protobuf" in proc.stderr
    kind = rendered["kind"].lower()
    stored = json.loads(kubectl("get", kind, rendered["metadata"]["name"], "-o", "json"))
    assert stored["kind"] == rendered["kind"]
    assert _missing(rendered, stored) == []


def test_created_secret_and_configmap_hold_the_bytes_and_empty_values(kubectl: Kubectl) -> None:
    kubectl("create", "secret", "generic", "s", "--from-literal=k=v\u00e9", "--from-literal=e=")
    kubectl("create", "configmap", "c", "--from-literal=x=1", "--from-literal=e=")
    data = json.loads(kubectl("get", "secret", "s", "-o", "jsonpath={.data}"))
    assert data == {"k": "dsOp", "e": ""}
    assert json.loads(kubectl("get", "configmap", "c", "-o", "jsonpath={.data}")) == {"x": "1", "e": ""}
    assert kubectl("get", "secret", "s", "-o", "jsonpath={.type}") == "Opaque"


def test_created_deployment_rolls_out(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    out = kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert "successfully rolled out" in out
    assert kubectl("get", "deploy", "web", "-o", "jsonpath={.status.readyReplicas}") == "2"


RICH = """apiVersion: v1
kind: Pod
metadata: {name: rich, labels: {app: rich}}
spec:
  terminationGracePeriodSeconds: 1
  securityContext: {runAsNonRoot: false, fsGroup: 2000}
  tolerations: [{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 0}]
  volumes:
  - {name: cfg, configMap: {name: kube-root-ca.crt, optional: false, items: [{key: ca.crt, path: ca}]}}
  - {name: scratch, emptyDir: {sizeLimit: 10Mi}}
  containers:
  - name: app
    image: busybox:1.36
    command: [sleep, "3600"]
    env:
    - {name: A, value: "1"}
    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    envFrom: [{configMapRef: {name: kube-root-ca.crt, optional: true}, prefix: CA_}]
    ports: [{name: http, containerPort: 8080}]
    resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 64Mi}}
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 5, timeoutSeconds: 2}
    livenessProbe: {tcpSocket: {port: http}, initialDelaySeconds: 30}
    lifecycle: {preStop: {exec: {command: ["true"]}}}
    volumeMounts:
    - {name: cfg, mountPath: /cfg, readOnly: true}
    - {name: scratch, mountPath: /scratch}
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [NET_RAW]}}
"""


def test_kubectl_debug_copy_to_sends_the_whole_pod_as_protobuf(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=RICH)
    kubectl("wait", "--for=condition=Ready", "pod/rich", "--timeout=60s")
    proc = kubectl.run(
        "debug", "rich", "--copy-to=twin", "--image=busybox:1.36", "--container=dbg", "--profile=general",
        "-v=8", "--", "sleep", "1000",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Content-Type: application/vnd.kubernetes.protobuf" in proc.stderr
    original = json.loads(kubectl("get", "pod", "rich", "-o", "json"))["spec"]
    twin = json.loads(kubectl("get", "pod", "twin", "-o", "json"))["spec"]
    assert [c["name"] for c in twin["containers"]] == ["app", "dbg"]
    twin["containers"] = twin["containers"][:1]
    original.pop("nodeName")  # a copy is scheduled anew, without probes (kubectl's --keep-* default)
    for probe in ("livenessProbe", "readinessProbe"):
        original["containers"][0].pop(probe)
    assert _missing(original, twin) == []


def _job(kubectl: Kubectl, name: str) -> dict[str, Any]:
    return json.loads(kubectl("get", "job", name, "-o", "json"))


def test_a_job_runs_its_pods_to_completion_and_kubectl_wait_returns(kubectl: Kubectl) -> None:
    kubectl("create", "job", "pi", "--image=busybox", "--", "sh", "-c", "echo 3.14")
    out = kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=90s", timeout=120)
    assert out.strip() == "job.batch/pi condition met"
    job = _job(kubectl, "pi")
    conds = {c["type"]: c for c in job["status"]["conditions"]}
    assert list(conds) == ["SuccessCriteriaMet", "Complete"]
    assert (conds["Complete"]["reason"], conds["Complete"]["message"]) == (
        "CompletionsReached",
        "Reached expected number of succeeded pods",
    )
    assert job["status"]["succeeded"] == 1 and "active" not in job["status"]
    assert job["status"]["completionTime"] >= job["status"]["startTime"]
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert kubectl("logs", "job/pi").strip() == "3.14"
    pods = kubectl("get", "pods", "-l", "job-name=pi", "--no-headers").split()
    assert pods[1:3] == ["0/1", "Completed"]
    table = kubectl("get", "jobs").splitlines()
    assert table[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert table[1].split()[:3] == ["pi", "Complete", "1/1"]
    wide = kubectl("get", "jobs", "-o", "wide").splitlines()
    assert wide[0].split()[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[5:] == ["pi", "busybox", f"batch.kubernetes.io/controller-uid={uid}"]


def test_completions_and_parallelism_run_that_many_pods_at_most_that_many_at_once(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch"},
        "spec": {
            "completions": 4,
            "parallelism": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "w", "image": "busybox", "command": ["sh", "-c", "sleep 1"]}],
                }
            },
        },
    }
    kubectl("apply", "-f", "-", input=json.dumps(manifest))
    peak = 0
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        pods = cluster.list("Pod")
        running = [p for p in pods if p["status"].get("phase") not in ("Succeeded", "Failed")]
        peak = max(peak, len(running))
        job = cluster.get("Job", "batch") or {}
        if any(c["type"] == "Complete" for c in job.get("status", {}).get("conditions", [])):
            break
        time.sleep(0.1)
    kubectl("wait", "--for=condition=complete", "job/batch", "--timeout=5s")
    assert peak == 2
    phases = [p["status"]["phase"] for p in cluster.list("Pod")]
    assert phases == ["Succeeded"] * 4
    assert kubectl("get", "job", "batch", "--no-headers").split()[1:3] == ["Complete", "4/4"]


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0, job_backoff=0.5)


def test_a_failing_job_retries_then_fails_with_backoff_limit_exceeded(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    manifest = json.loads(
        kubectl(
            "create",
            "job",
            "bad",
            "--image=busybox",
            "--dry-run=client",
            "-o=json",
            "--",
            "sh",
            "-c",
            "exit 3",
        )
    )
    manifest["spec"]["backoffLimit"] = 2
    kubectl("create", "-f", "-", input=json.dumps(manifest))
    out = kubectl("wait", "--for=condition=failed", "job/bad", "--timeout=90s", timeout=120)
    assert out.strip() == "job.batch/bad condition met"
    job = _job(kubectl, "bad")
    conds = {c["type"]: c for c in job["status"]["conditions"]}
    assert list(conds) == ["FailureTarget", "Failed"]
    assert (conds["Failed"]["reason"], conds["Failed"]["message"]) == (
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    # backoffLimit 2: the first pod and two retries, each a new pod that failed
    assert job["status"]["failed"] == 3 and "completionTime" not in job["status"]
    pods = json.loads(kubectl("get", "pods", "-l", "job-name=bad", "-o", "json"))["items"]
    assert len(pods) == 3 and {p["status"]["phase"] for p in pods} == {"Failed"}
    exits = {p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] for p in pods}
    assert exits == {3}
    # the controller's back-off separates the retries (0.5 s, then 1 s, in this cluster's knobs)
    starts = sorted(p["metadata"]["creationTimestamp"] for p in pods)
    assert starts[0] < starts[2]
    assert kubectl("get", "job", "bad", "--no-headers").split()[1:3] == ["Failed", "0/1"]
    # no new pod after the Job failed
    time.sleep(2)
    assert len(cluster.list("Pod")) == 3


def test_a_job_whose_template_restarts_always_is_refused_with_the_apiserver_text(kubectl: Kubectl) -> None:
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "forever"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
    }
    proc = kubectl.run("apply", "-f", "-", input=json.dumps(manifest), check=False)
    assert proc.returncode == 1
    assert (
        'The Job "forever" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": '
        'supported values: "OnFailure", "Never"' in proc.stderr
    )
