"""Ephemeral containers as the apiserver validates them (pkg/apis/core/validation/validation.go
validateEphemeralContainers, ValidatePodEphemeralContainersUpdate; the subresource's strategy in
pkg/registry/core/pod/strategy.go) and the kubelet runs them (started once, never restarted,
`ephemeralContainerStatuses`), judged by the real kubectl (`kubectl debug`) and the official
Python client; and Pod Security admission refusing a root debug container in a restricted
namespace (staging/src/k8s.io/pod-security-admission/policy/check_runAsNonRoot.go)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl

DISTROLESS = "gcr.io/distroless/static:nonroot"


def core(cluster: Cluster, tmp_path: Path) -> client.CoreV1Api:
    path = cluster.write_kubeconfig(tmp_path / "kc-admin")
    return client.CoreV1Api(config.new_client_from_config(config_file=path))


def app_pod(
    name: str, *, image: str = "busybox:1.36", namespace: str = "default", **extra: Any
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "app",
        "image": image,
        "env": [{"name": "GREETING", "value": "hello"}],
    }
    # kubesim's distroless image stands for an application built FROM it, its binary /server
    container["command"] = ["sleep", "3600"] if image == "busybox:1.36" else ["/server"]
    container.update(extra.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {"containers": [container], **extra},
    }


def running(cluster: Cluster, name: str, namespace: str = "default") -> None:
    cluster.wait_for(
        lambda: ((cluster.get("Pod", name, namespace) or {}).get("status") or {}).get("phase") == "Running",
        timeout=60,
        what=f"pod {name} running",
    )


def ephemeral_status(
    cluster: Cluster, pod: str, container: str, namespace: str = "default"
) -> dict[str, Any]:
    statuses = ((cluster.get("Pod", pod, namespace) or {}).get("status") or {}).get(
        "ephemeralContainerStatuses"
    )
    return next((s for s in statuses or [] if s["name"] == container), {})


def add(v1: client.CoreV1Api, pod: str, *containers: dict[str, Any], namespace: str = "default") -> Any:
    body = {"spec": {"ephemeralContainers": list(containers)}}
    return v1.patch_namespaced_pod_ephemeralcontainers(pod, namespace, body)


def debugger(name: str = "dbg", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", "command": ["sleep", "3600"], **extra}


def test_an_added_ephemeral_container_runs_once_is_reported_and_takes_an_exec(
    cluster: Cluster, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(app_pod("web"))
    running(cluster, "web")
    v1 = core(cluster, tmp_path)
    out = add(v1, "web", debugger(), debugger("oneshot", command=["sh", "-c", "exit 3"]))
    stored = {c.name: c for c in out.spec.ephemeral_containers}
    # defaulted as any container is (SetDefaults_EphemeralContainer)
    assert stored["dbg"].image_pull_policy == "IfNotPresent"
    assert stored["dbg"].termination_message_policy == "File"
    cluster.wait_for(
        lambda: "running" in (ephemeral_status(cluster, "web", "dbg").get("state") or {}), timeout=60
    )
    cluster.wait_for(
        lambda: "terminated" in (ephemeral_status(cluster, "web", "oneshot").get("state") or {}), timeout=60
    )
    done = ephemeral_status(cluster, "web", "oneshot")
    assert done["state"]["terminated"]["exitCode"] == 3 and done["restartCount"] == 0
    assert done["ready"] is False
    # never restarted, whatever it exited with, and the app is untouched
    pod = cluster.get("Pod", "web") or {}
    assert pod["status"]["phase"] == "Running"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    said = stream(
        v1.connect_get_namespaced_pod_exec,
        "web",
        "default",
        container="dbg",
        command=["sh", "-c", "echo from-$HOSTNAME"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
    )
    assert said.strip() == "from-web"
    # kubectl sees it: `get -o json` and the exec by name
    assert kubectl("exec", "web", "-c", "dbg", "--", "echo", "ok").strip() == "ok"
    events = json.loads(kubectl("get", "events", "--field-selector", "involvedObject.name=web", "-o", "json"))
    paths = {e["involvedObject"].get("fieldPath") for e in events["items"] if e["reason"] == "Started"}
    assert "spec.ephemeralContainers{dbg}" in paths, paths


def test_the_apiserver_refuses_what_validation_refuses_with_its_texts(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(app_pod("web"))
    running(cluster, "web")
    v1 = core(cluster, tmp_path)

    def refused(*containers: dict[str, Any]) -> dict[str, Any]:
        with pytest.raises(ApiException) as e:
            add(v1, "web", *containers)
        assert e.value.status == 422, e.value.body
        return dict(json.loads(e.value.body))

    body = refused(debugger("app"))
    assert body["message"] == 'Pod "web" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "app"'
    body = refused(debugger(targetContainerName="nope"))
    assert body["message"] == (
        'Pod "web" is invalid: spec.ephemeralContainers[0].targetContainerName: Not found: "nope"'
    )
    body = refused(debugger(ports=[{"containerPort": 80}], readinessProbe={"exec": {"command": ["true"]}}))
    assert [c["field"] for c in body["details"]["causes"]] == [
        "spec.ephemeralContainers[0].ports",
        "spec.ephemeralContainers[0].readinessProbe",
    ]
    assert "Forbidden: cannot be set for an Ephemeral Container" in body["message"]
    body = refused(debugger(resources={"limits": {"cpu": "100m"}}))
    assert body["details"]["causes"][0]["field"] == "spec.ephemeralContainers[0].resources"
    # `resources: {}` (as kubectl debug sends it) is no resources at all
    add(v1, "web", debugger(resources={}))
    # once added, never changed nor removed
    body = refused(debugger(image="busybox:1.37"))
    assert 'existing ephemeral containers "dbg" may not be changed' in body["message"]
    with pytest.raises(ApiException) as e:
        v1.replace_namespaced_pod_ephemeralcontainers(
            "web",
            "default",
            {"metadata": {"name": "web"}, "spec": {"containers": [], "ephemeralContainers": []}},
        )
    message = json.loads(e.value.body)["message"]
    assert e.value.status == 422 and 'existing ephemeral containers "dbg" may not be removed' in message
    # adding a second one keeps the first; nothing else of the pod changes through this subresource
    out = add(v1, "web", debugger(), debugger("dbg2"))
    assert [c.name for c in out.spec.ephemeral_containers] == ["dbg", "dbg2"]
    assert [c.name for c in out.spec.containers] == ["app"]


def test_kubectl_debug_attaches_to_a_debug_container(cluster: Cluster, kubectl: Kubectl) -> None:
    cluster.apply(app_pod("web"))
    running(cluster, "web")
    proc = kubectl.run(
        "debug",
        "web",
        "-it",
        "--image=busybox:1.36",
        "--target=app",
        "-c",
        "dbg",
        "--",
        "sh",
        input="echo debug-shell-$HOSTNAME\ntr '\\000' '\\n' < /proc/1/environ | grep GREETING\nexit\n",
        timeout=90,
    )
    # the issue's `kubectl debug -it POD --image=busybox --target=app -- sh`, stdin from a pipe
    assert "debug-shell-web" in proc.stdout and "GREETING=hello" in proc.stdout, (proc.stdout, proc.stderr)
    pod = json.loads(kubectl("get", "pod", "web", "-o", "json"))
    (ec,) = pod["spec"]["ephemeralContainers"]
    assert (ec["name"], ec["stdin"], ec["tty"], ec["targetContainerName"]) == ("dbg", True, True, "app")


RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_a_restricted_namespace_refuses_a_debug_container_that_would_run_as_root(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": "locked",
                "labels": {"pod-security.kubernetes.io/enforce": "restricted"},
            },
        }
    )
    pod_sc = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    cluster.apply(
        app_pod(
            "web",
            image=DISTROLESS,
            namespace="locked",
            securityContext=pod_sc,
            container={"securityContext": RESTRICTED_CONTAINER},
        )
    )
    running(cluster, "web", "locked")
    v1 = core(cluster, tmp_path)
    with pytest.raises(ApiException) as e:
        add(v1, "web", debugger(securityContext={"runAsUser": 0}), namespace="locked")
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"] == (
        'pods "web" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false '
        '(container "dbg" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
        '(container "dbg" must set securityContext.capabilities.drop=["ALL"]), runAsUser=0 (container "dbg" '
        "must not set runAsUser=0)"
    )
    assert not (cluster.get("Pod", "web", "locked") or {})["spec"].get("ephemeralContainers")
    # the same debugger as the app's user, without privileges, is admitted and runs
    add(v1, "web", debugger(securityContext={"runAsUser": 65532, **RESTRICTED_CONTAINER}), namespace="locked")
    cluster.wait_for(
        lambda: "running" in (ephemeral_status(cluster, "web", "dbg", "locked").get("state") or {}),
        timeout=60,
    )


def test_kubectl_debug_target_shares_the_targets_processes_and_reads_its_environment(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    nonroot = {"runAsUser": 65532, "runAsGroup": 65532}
    cluster.apply(app_pod("web", image=DISTROLESS, container={"securityContext": nonroot}))
    running(cluster, "web")
    # the app's image has no shell: exec finds nothing to run
    refused = kubectl.run("exec", "web", "--", "sh", "-c", "true", check=False)
    assert refused.returncode != 0 and 'exec: "sh": executable file not found in $PATH' in refused.stderr
    script = (
        "echo uid=$(id -u)\n"
        "tr '\\000' '\\n' < /proc/1/environ | grep '^GREETING='\n"
        "test -d /proc/1/root/home/nonroot && echo root-ok\n"
        "exit\n"
    )
    # as root without CAP_SYS_PTRACE (the runtime's default capabilities), another user's
    # /proc/1 stays closed, as in a real container
    proc = kubectl.run(
        "debug",
        "web",
        "-i",
        "--image=busybox:1.36",
        "--target=app",
        "-c",
        "asroot",
        "--profile=legacy",
        "--",
        "sh",
        input=script,
        timeout=90,
        check=False,
    )
    assert "uid=0" in proc.stdout and "GREETING=hello" not in proc.stdout, proc.stdout
    # the same user as the target: its environment and root, through the shared PID namespace
    cluster.apply(app_pod("web2", image=DISTROLESS, container={"securityContext": nonroot}))
    running(cluster, "web2")
    v1_body = {
        "spec": {
            "ephemeralContainers": [
                {
                    "name": "dbg",
                    "image": "busybox:1.36",
                    "command": ["sleep", "3600"],
                    "targetContainerName": "app",
                    "securityContext": {**nonroot, **RESTRICTED_CONTAINER},
                }
            ]
        }
    }
    kubectl("patch", "pod", "web2", "--subresource=ephemeralcontainers", "-p", json.dumps(v1_body))
    cluster.wait_for(
        lambda: "running" in (ephemeral_status(cluster, "web2", "dbg").get("state") or {}), timeout=60
    )
    out = kubectl("exec", "web2", "-c", "dbg", "-i", "--", "sh", input=script)
    assert "uid=65532" in out and "GREETING=hello" in out and "root-ok" in out, out
    # its own processes and the app's share one namespace: the app's init is PID 1
    ps = kubectl("exec", "web2", "-c", "dbg", "--", "cat", "/proc/1/cmdline")
    assert "/bin/sh" in ps or "sleep" in ps, ps


def test_pod_security_refuses_a_root_pod_and_warns_about_a_workload_template(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "locked")
    kubectl(
        "label",
        "namespace",
        "locked",
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/warn=restricted",
    )
    proc = kubectl.run(
        "run", "rooty", "-n", "locked", "--image=busybox:1.36", "--", "sleep", "60", check=False
    )
    assert proc.returncode != 0
    assert (
        'pods "rooty" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false'
        in proc.stderr
    )
    made = kubectl.run("create", "deployment", "web", "-n", "locked", "--image=busybox:1.36")
    assert (
        'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false'
        in made.stderr
    )
    assert 'seccompProfile (pod or container "busybox" must set' in made.stderr
