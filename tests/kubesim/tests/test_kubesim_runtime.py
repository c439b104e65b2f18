"""kubesim's containers as a runtime and a kubelet run them, judged by the real kubectl and the
real rollout-verify: image ENTRYPOINT/CMD under command/args, start errors, exits and the
kubelet's restart back-off, and the kubelet's events (deduplicated as client-go does)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.kubesim import Cluster
from tests.kubesim.record import Recorder, container_ref
from tests.support.helpers import deployment, run_verify
from tests.support.kubectl import Kubectl

NOT_FOUND = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create failed: unable to start container process: error during container init: "
    'exec: "no-such-binary": executable file not found in $PATH: unknown'
)


def bare_pod(name: str, container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "app", **container}], **spec},
    }


def status_of(cluster: Cluster, name: str) -> dict[str, Any]:
    """The pod's first container status ({} until there is one)."""
    pod = cluster.get("Pod", name) or {}
    return ((pod.get("status") or {}).get("containerStatuses") or [{}])[0]


def only_pod(cluster: Cluster, app: str) -> dict[str, Any]:
    (pod,) = [p for p in cluster.list("Pod") if p["metadata"]["labels"].get("app") == app]
    return pod


def test_a_missing_command_fails_to_start_crash_loops_and_the_rollout_never_completes(
    cluster: Cluster, kubectl: Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("broken", replicas=1, image="debian:bookworm", command=["no-such-binary"]))

    def crash_looping() -> bool:
        pods = [p for p in cluster.list("Pod") if p["metadata"]["labels"].get("app") == "broken"]
        cs = ((pods[0].get("status") or {}).get("containerStatuses") or [{}])[0] if pods else {}
        return (cs.get("state") or {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"

    cluster.wait_for(crash_looping, timeout=60, what="CrashLoopBackOff")
    name = only_pod(cluster, "broken")["metadata"]["name"]
    pod = json.loads(kubectl("get", "pod", name, "-o", "json"))
    uid = pod["metadata"]["uid"]
    (cs,) = pod["status"]["containerStatuses"]
    # runc could not find the program: StartError (128) with containerd's text, then the back-off
    last = cs["lastState"]["terminated"]
    assert (last["reason"], last["exitCode"], last["message"]) == ("StartError", 128, NOT_FOUND)
    assert cs["state"]["waiting"]["message"] == (
        f"back-off 10s restarting failed container=app pod={name}_default({uid})"
    )
    assert cs["restartCount"] >= 1 and cs["ready"] is False and cs["started"] is False
    assert pod["status"]["phase"] == "Running"  # a container waiting to be restarted is not Pending
    ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"]
    assert ready == "False"
    row = kubectl("get", "pod", name, "--no-headers").split()
    assert row[1:3] == ["0/1", "CrashLoopBackOff"] and re.fullmatch(r"\d+", row[3])
    assert row[4:6][0].startswith("(") and row[5] == "ago)"  # `2 (3s ago)`

    # the kubelet's events: the same failure twice is one event with count 2 (client-go's correlator)
    events = json.loads(
        kubectl("get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json")
    )["items"]
    by_reason = {e["reason"]: e for e in events}
    assert {"Pulled", "Created", "Failed", "BackOff"} <= set(by_reason), sorted(by_reason)
    failed = by_reason["Failed"]
    assert (failed["type"], failed["message"]) == ("Warning", f"Error: {NOT_FOUND}")
    assert failed["count"] >= 2 and failed["firstTimestamp"] <= failed["lastTimestamp"]
    assert failed["source"] == {"component": "kubelet", "host": pod["spec"]["nodeName"]}
    assert failed["involvedObject"]["fieldPath"] == "spec.containers{app}"
    assert failed["involvedObject"]["uid"] == uid
    assert by_reason["Created"]["message"] == "Created container app"
    assert by_reason["Pulled"][
        "message"
    ] == 'Container image "debian:bookworm" already present on machine' or (
        by_reason["Pulled"]["message"].startswith('Successfully pulled image "debian:bookworm" in ')
    )
    assert (
        by_reason["BackOff"]["message"]
        == f"Back-off restarting failed container app in pod {name}_default({uid})"
    )
    assert "Started" not in by_reason
    described = kubectl("describe", "pod", name)
    assert re.search(
        r"Warning\s+Failed\s+\S+ \(x\d+ over \S+\)\s+kubelet\s+Error: failed to create", described
    )
    assert re.search(r"Warning\s+BackOff\s+.*kubelet\s+Back-off restarting failed container app", described)
    assert re.search(r"Last State:\s+Terminated\n\s+Reason:\s+StartError", described)

    # the rollout stalls for kubectl and for rollout-verify, which names the reason
    proc = kubectl.run("rollout", "status", "deployment/broken", "--timeout=1s", check=False)
    assert proc.returncode != 0 and "timed out waiting for the condition" in proc.stderr
    out = run_verify(
        "--deployment",
        "broken",
        "--expect-env",
        "HOME",
        "--timeout",
        "2s",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 4, out.everything
    assert f"pod {name} (" in out.stdout and "container app: CrashLoopBackOff: back-off 10s" in out.stdout
    assert "last run: exit code 128 (StartError)" in out.stdout


def test_images_run_their_entrypoint_and_cmd_and_processes_that_exit_follow_the_restart_policy(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # busybox's CMD is `sh`: without stdin it exits 0 at once, so Always restarts it (Completed)
    cluster.apply(bare_pod("shell", {"image": "busybox:1.36"}))
    # with `stdin: true` (kubectl run -i) its stdin stays open and the shell waits on it
    cluster.apply(bare_pod("interactive", {"image": "busybox:1.36", "stdin": True}))
    # Never: one run, exit 3, the pod Failed; OnFailure + exit 0: Succeeded
    cluster.apply(
        bare_pod("once", {"image": "busybox:1.36", "args": ["sh", "-c", "exit 3"]}, restartPolicy="Never")
    )
    cluster.apply(bare_pod("job", {"image": "busybox:1.36", "args": ["true"]}, restartPolicy="OnFailure"))
    # nginx's ENTRYPOINT + CMD serve :80 (a stand-in HTTP server answers there)
    web = {
        "image": "nginx:1.27",
        "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 1},
    }
    cluster.apply(bare_pod("web", web))
    # distroless has neither ENTRYPOINT nor CMD: containerd cannot make a process
    cluster.apply(bare_pod("static", {"image": "gcr.io/distroless/static:nonroot"}))
    # this repository's image: ENTRYPOINT python -m verify, the pod's args after it
    tool = {"image": "ghcr.io/example/rollout-verify:0.1.0", "args": ["--help"]}
    cluster.apply(bare_pod("tool", tool, restartPolicy="Never"))

    def waiting(name: str) -> str:
        return str(((status_of(cluster, name).get("state") or {}).get("waiting") or {}).get("reason", ""))

    cluster.wait_for(lambda: waiting("shell") == "CrashLoopBackOff", what="busybox's sh to exit")
    last = status_of(cluster, "shell")["lastState"]["terminated"]
    assert (last["reason"], last["exitCode"]) == ("Completed", 0)
    cluster.wait_for(
        lambda: (cluster.get("Pod", "once") or {})["status"].get("phase") == "Failed", what="once"
    )
    cs = status_of(cluster, "once")
    assert (cs["state"]["terminated"]["exitCode"], cs["state"]["terminated"]["reason"]) == (3, "Error")
    assert cs["restartCount"] == 0 and cs["lastState"] == {}
    cluster.wait_for(
        lambda: (cluster.get("Pod", "job") or {})["status"].get("phase") == "Succeeded", what="job"
    )
    assert status_of(cluster, "job")["state"]["terminated"]["reason"] == "Completed"
    kubectl("wait", "--for=condition=Ready", "pod/web", "pod/interactive", "--timeout=60s")
    assert status_of(cluster, "interactive")["restartCount"] == 0
    cluster.wait_for(lambda: waiting("static") == "CreateContainerError", what="distroless without a command")
    msg = status_of(cluster, "static")["state"]["waiting"]["message"]
    assert re.fullmatch(
        r'failed to generate container "[0-9a-f]{64}" spec: failed to generate spec: no command specified',
        msg,
    )
    assert (cluster.get("Pod", "static") or {})["status"]["phase"] == "Pending"
    cluster.wait_for(
        lambda: (cluster.get("Pod", "tool") or {})["status"].get("phase") == "Succeeded", what="tool"
    )
    assert kubectl("logs", "tool").startswith("usage: rollout-verify ")
    rows = {line.split()[0]: line.split()[2] for line in kubectl("get", "pods", "--no-headers").splitlines()}
    assert rows["once"] == "Error" and rows["job"] == "Completed" and rows["static"] == "CreateContainerError"


def test_the_restart_back_off_doubles_up_to_its_cap(cluster: Cluster) -> None:
    # a short back-off (the knob) so the doubling shows within a test: at once, 500ms, 1s, 1s (capped)
    cluster.knobs.crashloop_backoff_initial = 0.5
    cluster.knobs.crashloop_backoff_max = 1.0
    cluster.apply(bare_pod("crash", {"image": "busybox:1.36", "command": ["false"]}))
    seen: set[str] = set()

    def observe() -> bool:
        cs = status_of(cluster, "crash")
        msg = ((cs.get("state") or {}).get("waiting") or {}).get("message", "")
        if msg:
            seen.add(msg.split(" restarting")[0])
        return int(cs.get("restartCount", 0)) >= 4

    cluster.wait_for(observe, timeout=60, what="four restarts")
    assert seen == {"back-off 500ms", "back-off 1s"}
    last = status_of(cluster, "crash")["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")


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


def test_the_scheduler_and_controllers_record_their_events_as_kubectl_describe_shows_them(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    """schedule_one.go (Scheduled), replica_set.go (SuccessfulCreate/SuccessfulDelete) and the
    deployment controller's sync.go (ScalingReplicaSet up, then down after a scale)."""
    cluster.apply(deployment("shop", replicas=2, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("shop")
    kubectl("scale", "deployment/shop", "--replicas=1")
    cluster.wait_for(
        lambda: len([p for p in cluster.list("Pod") if p["metadata"]["name"].startswith("shop-")
                     and not p["metadata"].get("deletionTimestamp")]) == 1,
        what="scaled down",
    )  # fmt: skip
    rs = next(r["metadata"]["name"] for r in cluster.list("ReplicaSet") if r["metadata"]["name"].startswith("shop-"))

    def events() -> list[tuple[str, str, str, str]]:
        items = json.loads(kubectl("get", "events", "-o", "json"))["items"]
        return [(e["source"].get("component", ""), e["involvedObject"]["kind"], e["reason"], e["message"]) for e in items]

    cluster.wait_for(lambda: any(r == "SuccessfulDelete" for _, _, r, _ in events()), what="SuccessfulDelete")
    seen = events()
    assert ("deployment-controller", "Deployment", "ScalingReplicaSet", f"Scaled up replica set {rs} to 2") in seen
    assert ("deployment-controller", "Deployment", "ScalingReplicaSet", f"Scaled down replica set {rs} to 1 from 2") in seen
    created = [m for c, k, r, m in seen if (c, k, r) == ("replicaset-controller", "ReplicaSet", "SuccessfulCreate")]
    assert len(created) == 2 and all(m.startswith(f"Created pod: {rs}-") for m in created)
    scheduled = [m for c, _, r, m in seen if (c, r) == ("default-scheduler", "Scheduled")]
    assert len(scheduled) == 2 and all(re.fullmatch(rf"Successfully assigned default/{rs}-\w+ to node-\d", m) for m in scheduled)
    described = kubectl("describe", "deployment", "shop")
    assert f"Scaled down replica set {rs} to 1 from 2" in described and "deployment-controller" in described


def test_a_variable_whose_name_is_no_shell_identifier_reaches_the_process_and_pid_1(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # a ConfigMap key such as app.conf is a valid env name for the kubelet (envFrom passes it), and
    # a runtime execs the process with every variable; dash would drop it in kubesim's own shells
    env = [{"name": "app.conf", "value": "mode=prod"}, {"name": "PLAIN", "value": "1"}]
    cluster.apply(bare_pod("dotted", {"image": "debian", "command": ["/usr/bin/env"], "env": env}, restartPolicy="Never"))
    cluster.apply(bare_pod("init", {"image": "debian", "command": ["sleep", "3600"], "env": env}))
    cluster.wait_for(
        lambda: (cluster.get("Pod", "dotted") or {}).get("status", {}).get("phase") == "Succeeded", what="dotted"
    )
    assert {"app.conf=mode=prod", "PLAIN=1"} <= set(kubectl("logs", "dotted").splitlines())
    cluster.wait_for(lambda: status_of(cluster, "init").get("ready") is True, what="init ready")
    # what a debug container sharing its PID namespace reads: the container's first process
    pid1 = kubectl("exec", "init", "--", "cat", "/proc/1/environ").split("\0")
    assert "app.conf=mode=prod" in pid1 and "PLAIN=1" in pid1
