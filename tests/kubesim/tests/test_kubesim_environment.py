"""A container's runtime environment in kubesim, as a kubelet and containerd make it, judged from
inside the container through the real kubectl and by rollout-verify's --expect-env: HOME from the
image user's passwd entry, HOSTNAME and /etc/hostname, the kubelet's /etc/hosts, the `kubernetes`
Service's variables and the service links of the Services present when the container starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify
from tests.support.kubectl import Kubectl

KUBERNETES_VARS = {
    "KUBERNETES_SERVICE_HOST": "10.96.0.1",
    "KUBERNETES_SERVICE_PORT": "443",
    "KUBERNETES_SERVICE_PORT_HTTPS": "443",
    "KUBERNETES_PORT": "tcp://10.96.0.1:443",
    "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443",
    "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
    "KUBERNETES_PORT_443_TCP_PORT": "443",
    "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1",
}


def env_of(kubectl: Kubectl, pod: str) -> dict[str, str]:
    out = kubectl("exec", pod, "--", "env")
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def pods_of(cluster: Cluster, app: str) -> list[dict[str, Any]]:
    return [
        p
        for p in cluster.list("Pod")
        if p["metadata"]["labels"].get("app") == app and not p["metadata"].get("deletionTimestamp")
    ]


def test_home_hostname_and_the_kubernetes_variables_are_set_and_expect_env_passes_on_debian(
    cluster: Cluster, kubectl: Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("deb", replicas=1, image="debian:bookworm"))
    nobody = deployment("nobody", replicas=1, image="debian:bookworm")
    nobody["spec"]["template"]["spec"]["securityContext"] = {"runAsUser": 1000}  # not in debian's passwd
    cluster.apply(nobody)
    cluster.wait_rollout("deb")
    cluster.wait_rollout("nobody")
    out = run_verify(
        "--deployment",
        "deb",
        "--expect-env",
        "HOME",
        "--expect-env",
        "KUBERNETES_SERVICE_HOST",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    (p,) = pods_of(cluster, "deb")
    name, ip = p["metadata"]["name"], p["status"]["podIP"]
    env = env_of(kubectl, name)
    assert env["HOME"] == "/root" and env["HOSTNAME"] == name
    assert env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert {k: v for k, v in env.items() if k.startswith("KUBERNETES_")} == KUBERNETES_VARS
    assert kubectl("exec", name, "--", "cat", "/etc/hostname") == name + "\n"
    assert kubectl("exec", name, "--", "cat", "/etc/hosts") == (
        "# Kubernetes-managed hosts file.\n"
        "127.0.0.1\tlocalhost\n"
        "::1\tlocalhost ip6-localhost ip6-loopback\n"
        "fe00::0\tip6-localnet\n"
        "fe00::0\tip6-mcastprefix\n"
        "fe00::1\tip6-allnodes\n"
        "fe00::2\tip6-allrouters\n"
        f"{ip}\t{name}\n"
    )
    # runc: a user without a passwd entry gets HOME=/
    (other,) = pods_of(cluster, "nobody")
    assert env_of(kubectl, other["metadata"]["name"])["HOME"] == "/"


def test_service_links_come_from_the_services_present_when_the_container_starts(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "back-end", "namespace": "default"},
            "spec": {
                "selector": {"app": "back-end"},
                "ports": [
                    {"name": "http", "port": 80, "targetPort": 8080},
                    {"name": "dns", "port": 53, "protocol": "UDP"},
                ],
            },
        }
    )
    app = deployment(
        "app",
        replicas=1,
        env=[{"name": "UPSTREAM", "value": "http://$(BACK_END_SERVICE_HOST):$(BACK_END_SERVICE_PORT)"}],
    )
    unlinked = deployment("unlinked", replicas=1)
    unlinked["spec"]["template"]["spec"]["enableServiceLinks"] = False
    cluster.apply(app)
    cluster.apply(unlinked)
    cluster.wait_rollout("app")
    cluster.wait_rollout("unlinked")
    ip = (cluster.get("Service", "back-end") or {})["spec"]["clusterIP"]
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "late", "namespace": "default"},
            "spec": {"selector": {"app": "late"}, "ports": [{"port": 8080}]},
        }
    )
    (first,) = pods_of(cluster, "app")
    env = env_of(kubectl, first["metadata"]["name"])
    assert {k: v for k, v in env.items() if k.startswith("BACK_END_")} == {
        "BACK_END_SERVICE_HOST": ip,
        "BACK_END_SERVICE_PORT": "80",
        "BACK_END_SERVICE_PORT_HTTP": "80",
        "BACK_END_SERVICE_PORT_DNS": "53",
        "BACK_END_PORT": f"tcp://{ip}:80",
        "BACK_END_PORT_80_TCP": f"tcp://{ip}:80",
        "BACK_END_PORT_80_TCP_PROTO": "tcp",
        "BACK_END_PORT_80_TCP_PORT": "80",
        "BACK_END_PORT_80_TCP_ADDR": ip,
        "BACK_END_PORT_53_UDP": f"udp://{ip}:53",
        "BACK_END_PORT_53_UDP_PROTO": "udp",
        "BACK_END_PORT_53_UDP_PORT": "53",
        "BACK_END_PORT_53_UDP_ADDR": ip,
    }
    assert env["UPSTREAM"] == f"http://{ip}:80"  # $(VAR) expands service variables too
    assert not any(k.startswith("LATE_") for k in env)  # created after the container started
    (off,) = pods_of(cluster, "unlinked")
    plain = env_of(kubectl, off["metadata"]["name"])
    assert not any(k.startswith(("BACK_END_", "LATE_")) for k in plain)
    assert {k: v for k, v in plain.items() if k.startswith("KUBERNETES_")} == KUBERNETES_VARS

    # the replacement pod's container starts after `late` exists: it gets its variables
    kubectl("delete", "pod", first["metadata"]["name"], "--wait=false")
    cluster.wait_for(
        lambda: any(p["metadata"]["name"] != first["metadata"]["name"] for p in pods_of(cluster, "app")),
        what="a replacement pod",
    )
    cluster.wait_rollout("app")
    (second,) = [p for p in pods_of(cluster, "app") if p["metadata"]["name"] != first["metadata"]["name"]]
    late_ip = (cluster.get("Service", "late") or {})["spec"]["clusterIP"]
    assert env_of(kubectl, second["metadata"]["name"])["LATE_SERVICE_HOST"] == late_ip
