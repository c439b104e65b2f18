"""The kube-system pods a kind cluster runs (kind's node image and kubeadm's manifests): on the first
node, labelled the control plane, the static pods etcd, kube-apiserver, kube-controller-manager and
kube-scheduler (mirror pods owned by their Node, `kubernetes.io/config.*` annotations,
priorityClassName system-node-critical); the coredns Deployment (2 replicas, its kube-dns Service
at 10.96.0.10); and the kube-proxy and kindnet DaemonSets. Their processes are the images'
stand-ins (node/images.py: they serve until stopped), so each costs a sandbox and one process.
`Knobs.system_pods` turns them on (`python -m tests.kubesim serve` does)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..apiserver.services import admit_service
from ..storage.resources import BY_PATH
from ..storage.store import Obj, now_rfc3339

if TYPE_CHECKING:
    from ..cluster import Cluster

NS = "kube-system"
K8S = "v1.32.4"
IMAGES = {
    "etcd": "registry.k8s.io/etcd:3.5.16-0",
    "kube-apiserver": f"registry.k8s.io/kube-apiserver:{K8S}",
    "kube-controller-manager": f"registry.k8s.io/kube-controller-manager:{K8S}",
    "kube-scheduler": f"registry.k8s.io/kube-scheduler:{K8S}",
    "kube-proxy": f"registry.k8s.io/kube-proxy:{K8S}",
    "coredns": "registry.k8s.io/coredns/coredns:v1.11.3",
    "kindnet": "docker.io/kindest/kindnetd:v20250214-acbabc1a",
}
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"
_ALL = [{"operator": "Exists"}]


CPU = {"etcd": "100m", "kube-apiserver": "250m", "kube-controller-manager": "200m", "kube-scheduler": "100m"}


def _container(name: str, image: str, command: list[str], **extra: Any) -> Obj:
    return {"name": name, "image": IMAGES[image], "command": command, **extra}


def _static_pod(node: str, node_uid: str, component: str, command: list[str]) -> Obj:
    """A kubeadm static pod as the kubelet mirrors it into the API."""
    spec: Obj = {
        "containers": [
            _container(component, component, command, resources={"requests": {"cpu": CPU[component]}})
        ],
        "nodeName": node,
        "priorityClassName": "system-node-critical",
        "priority": 2000001000,
        "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
    }
    config_hash = hashlib.md5(f"{node}/{component}".encode()).hexdigest()  # a name, not a secret
    return {
        "metadata": {
            "name": f"{component}-{node}",
            "labels": {"component": component, "tier": "control-plane"},
            "annotations": {
                "kubernetes.io/config.hash": config_hash,
                "kubernetes.io/config.mirror": config_hash,
                "kubernetes.io/config.seen": now_rfc3339(),
                "kubernetes.io/config.source": "file",
            },
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid, "controller": True}
            ],
        },
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def _workload(name: str, labels: dict[str, str], containers: list[Obj], **spec: Any) -> Obj:
    return {
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": containers,
                    "priorityClassName": "system-node-critical",
                    **spec.pop("pod", {}),
                },
            },
            **spec,
        },
    }


def install(cluster: Cluster) -> None:
    """Create the control plane's mirror pods and the add-ons' workloads (on the loop, at boot)."""
    store = cluster.store
    nodes = BY_PATH[("", "nodes")]
    first = sorted(cluster.kubelets)[0]

    def control_plane(o: Obj) -> None:
        o["metadata"]["labels"][CONTROL_PLANE] = ""
        o["metadata"]["labels"]["node.kubernetes.io/exclude-from-external-load-balancers"] = ""

    node = store.mutate(nodes, "", first, control_plane)
    assert node is not None
    ip = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    pods = BY_PATH[("", "pods")]
    for component, command in (
        (
            "etcd",
            [
                "etcd",
                f"--advertise-client-urls=https://{ip}:2379",
                "--data-dir=/var/lib/etcd",
                f"--name={first}",
            ],
        ),
        (
            "kube-apiserver",
            [
                "kube-apiserver",
                f"--advertise-address={ip}",
                "--authorization-mode=Node,RBAC",
                "--secure-port=6443",
            ],
        ),
        (
            "kube-controller-manager",
            ["kube-controller-manager", "--leader-elect=true", "--use-service-account-credentials=true"],
        ),
        ("kube-scheduler", ["kube-scheduler", "--leader-elect=true"]),
    ):
        store.create(pods, NS, _static_pod(first, node["metadata"]["uid"], component, command))
    sas = BY_PATH[("", "serviceaccounts")]
    for sa in ("coredns", "kube-proxy", "kindnet"):
        store.create(sas, NS, {"metadata": {"name": sa}})
    dns = {"k8s-app": "kube-dns"}
    coredns = _workload(
        "coredns",
        dns,
        [
            _container(
                "coredns",
                "coredns",
                ["/coredns", "-conf", "/etc/coredns/Corefile"],
                ports=[
                    {"name": "dns", "containerPort": 53, "protocol": "UDP"},
                    {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                    {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
                ],
                resources={"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
            )
        ],
        replicas=2,
        pod={"serviceAccountName": "coredns", "priorityClassName": "system-cluster-critical"},
    )
    store.create(BY_PATH[("apps", "deployments")], NS, _prepared(coredns, "Deployment"))
    svc: Obj = {
        "metadata": {
            "name": "kube-dns",
            "labels": {**dns, "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
            "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"},
        },
        "spec": {
            "selector": dict(dns),
            "clusterIP": "10.96.0.10",
            "ports": [
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
            ],
        },
    }
    admit_service(store, svc, None)
    store.create(BY_PATH[("", "services")], NS, svc)
    daemonsets = BY_PATH[("apps", "daemonsets")]
    proxy = _workload(
        "kube-proxy",
        {"k8s-app": "kube-proxy"},
        [
            _container(
                "kube-proxy",
                "kube-proxy",
                ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf"],
            )
        ],
        pod={"serviceAccountName": "kube-proxy", "tolerations": _ALL},
    )
    kindnet = _workload(
        "kindnet",
        {"app": "kindnet", "k8s-app": "kindnet", "tier": "node"},
        [
            _container(
                "kindnet-cni",
                "kindnet",
                ["/bin/kindnetd"],
                resources={
                    "limits": {"cpu": "100m", "memory": "50Mi"},
                    "requests": {"cpu": "100m", "memory": "50Mi"},
                },
            )
        ],
        pod={"serviceAccountName": "kindnet", "tolerations": _ALL},
    )
    for ds in (proxy, kindnet):
        store.create(daemonsets, NS, _prepared(ds, "DaemonSet"))


def _prepared(obj: Obj, kind: str) -> Obj:
    from ..apiserver.admission import prepare

    prepare(BY_PATH[("apps", "deployments" if kind == "Deployment" else "daemonsets")], obj)
    return obj
