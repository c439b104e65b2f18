"""Init containers and native sidecars as the kubelet runs them (kuberuntime_manager.go
computePodActions, kuberuntime_container.go computeInitContainerActions, status/generate.go),
judged by the real kubectl: a failing init container keeps the pod initializing (no false green
rollout), a passing one lets the app start, a sidecar runs beside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify
from tests.support.kubectl import Kubectl


def with_init(obj: dict[str, Any], *inits: dict[str, Any], **spec: Any) -> dict[str, Any]:
    pod_spec = obj["spec"]["template"]["spec"] if obj["kind"] != "Pod" else obj["spec"]
    pod_spec["initContainers"] = list(inits)
    pod_spec.update(spec)
    return obj


def pod_of(cluster: Cluster, app: str) -> dict[str, Any]:
    pods = [p for p in cluster.list("Pod") if p["metadata"]["labels"].get("app") == app]
    return pods[0] if pods else {}


def init_status(pod: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return (((pod.get("status") or {}).get("initContainerStatuses")) or [{}] * (i + 1))[i]


def conditions(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (pod.get("status") or {}).get("conditions") or []}


def test_an_init_container_exiting_1_crash_loops_the_pod_in_init_and_the_rollout_never_completes(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    init = {
        "name": "migrate",
        "image": "busybox:1.36",
        "command": ["sh", "-c", "echo migration failed; exit 1"],
    }
    cluster.apply(with_init(deployment("initfail", replicas=1, command=["sleep", "3600"]), init))

    def crash_looping() -> bool:
        state = init_status(pod_of(cluster, "initfail")).get("state") or {}
        return (state.get("waiting") or {}).get("reason") == "CrashLoopBackOff"

    cluster.wait_for(crash_looping, timeout=60, what="Init:CrashLoopBackOff")
    name = pod_of(cluster, "initfail")["metadata"]["name"]
    pod = json.loads(kubectl("get", "pod", name, "-o", "json"))
    (ics,) = pod["status"]["initContainerStatuses"]
    assert ics["name"] == "migrate" and ics["restartCount"] >= 1 and ics["ready"] is False
    last = ics["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")
    (cs,) = pod["status"]["containerStatuses"]  # the app never started
    assert cs["state"] == {"waiting": {"reason": "PodInitializing"}} and cs["restartCount"] == 0
    assert pod["status"]["phase"] == "Pending"
    init_cond = conditions(pod)["Initialized"]
    assert (init_cond["status"], init_cond["reason"]) == ("False", "ContainersNotInitialized")
    assert init_cond["message"] == "containers with incomplete status: [migrate]"
    row = kubectl("get", "pod", name, "--no-headers").split()
    assert row[1:3] == ["0/1", "Init:CrashLoopBackOff"], row
    assert "migration failed" in kubectl("logs", name, "-c", "migrate")
    events = json.loads(
        kubectl("get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json")
    )["items"]
    mine = {
        e["reason"] for e in events if e["involvedObject"].get("fieldPath") == "spec.initContainers{migrate}"
    }
    assert {"Created", "Started", "BackOff"} <= mine, sorted(mine)
    assert not any(e["involvedObject"].get("fieldPath") == "spec.containers{app}" for e in events)

    proc = kubectl.run("rollout", "status", "deployment/initfail", "--timeout=2s", check=False)
    assert proc.returncode != 0 and "timed out waiting for the condition" in proc.stderr

    # restartPolicy Never: the failed init container fails the pod (Init:Error), no restart
    never = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "initnever", "namespace": "default", "labels": {"app": "initnever"}},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
        },
    }
    cluster.apply(with_init(never, init, restartPolicy="Never"))
    cluster.wait_for(
        lambda: (pod_of(cluster, "initnever").get("status") or {}).get("phase") == "Failed",
        timeout=60,
        what="pod Failed",
    )
    row = kubectl("get", "pod", "initnever", "--no-headers").split()
    assert row[1:4] == ["0/1", "Init:Error", "0"], row


def test_a_passing_init_container_runs_first_then_the_app_runs_and_the_pod_is_initialized(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    shared = [{"name": "work", "emptyDir": {}}]
    mounts = [{"name": "work", "mountPath": "/work"}]
    init = {
        "name": "prepare",
        "image": "busybox:1.36",
        "command": ["sh", "-c", "echo prepared > /work/ready; echo init done"],
        "volumeMounts": mounts,
    }
    # the app only stays up if the init container ran (and finished) before it
    app_cmd = ["sh", "-c", "test -f /work/ready || exit 3; exec sleep 3600"]
    cluster.apply(
        with_init(deployment("initok", replicas=1, command=app_cmd, volumes=shared, mounts=mounts), init)
    )
    kubectl("rollout", "status", "deployment/initok", "--timeout=60s")
    name = pod_of(cluster, "initok")["metadata"]["name"]
    pod = json.loads(kubectl("get", "pod", name, "-o", "json"))
    (ics,) = pod["status"]["initContainerStatuses"]
    term = ics["state"]["terminated"]
    assert (term["exitCode"], term["reason"], ics["ready"], ics["restartCount"]) == (0, "Completed", True, 0)
    (cs,) = pod["status"]["containerStatuses"]
    assert "running" in cs["state"] and cs["restartCount"] == 0
    assert conditions(pod)["Initialized"]["status"] == "True"
    assert pod["status"]["phase"] == "Running"
    row = kubectl("get", "pod", name, "--no-headers").split()
    assert row[1:4] == ["1/1", "Running", "0"], row
    assert kubectl("logs", name, "-c", "prepare").strip() == "init done"


def test_a_native_sidecar_runs_beside_the_app_counts_in_ready_and_takes_exec(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    sidecar = {
        "name": "sidecar",
        "image": "busybox:1.36",
        "restartPolicy": "Always",
        "command": ["sh", "-c", "echo proxy up; exec sleep 3600"],
        "env": [{"name": "SIDECAR_ROLE", "value": "proxy"}],
    }
    # a plain init container after the sidecar starts once the sidecar has started, without
    # waiting for it to exit
    after = {"name": "after", "image": "busybox:1.36", "command": ["true"]}
    cluster.apply(with_init(deployment("withsidecar", replicas=1, command=["sleep", "3600"]), sidecar, after))
    kubectl("rollout", "status", "deployment/withsidecar", "--timeout=60s")
    name = pod_of(cluster, "withsidecar")["metadata"]["name"]
    pod = json.loads(kubectl("get", "pod", name, "-o", "json"))
    side, done = pod["status"]["initContainerStatuses"]
    assert "running" in side["state"] and side["started"] is True and side["ready"] is True
    assert done["state"]["terminated"]["exitCode"] == 0
    assert conditions(pod)["Initialized"]["status"] == "True"
    assert conditions(pod)["ContainersReady"]["status"] == "True"
    row = kubectl("get", "pod", name, "--no-headers").split()
    assert row[1:3] == ["2/2", "Running"], row
    env = kubectl("exec", name, "-c", "sidecar", "--", "env")
    assert "SIDECAR_ROLE=proxy" in env.splitlines()
    assert "proxy up" in kubectl("logs", name, "-c", "sidecar")


def test_rollout_verify_names_a_crash_looping_init_container_and_exits_4(cluster: Cluster, tmp_path: Path) -> None:
    init = {"name": "migrate", "image": "busybox:1.36", "command": ["sh", "-c", "echo migration failed; exit 1"]}
    cluster.apply(with_init(deployment("initfail", replicas=1, command=["sleep", "3600"]), init))
    out = run_verify(
        "--deployment", "initfail", "--timeout", "8s",
        kubeconfig=cluster.write_kubeconfig(str(tmp_path / "kc")), tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 4, out.everything
    assert "init container migrate" in out.stdout and "exit code 1" in out.stdout, out.stdout
