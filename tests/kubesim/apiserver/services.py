"""The Service registry: defaulting and validation of a Service, ClusterIP and NodePort
allocation, and the `default/kubernetes` Service the apiserver keeps."""

from __future__ import annotations

import ipaddress

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store

SERVICES = BY_PATH[("", "services")]
ENDPOINTS = BY_PATH[("", "endpoints")]
SLICES = BY_PATH[("discovery.k8s.io", "endpointslices")]
SLICE_SERVICE = "kubernetes.io/service-name"
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
CONTROL_PLANE_IP = "172.18.0.1"  # nodes are 172.18.0.2, .3, ...
NODE_PORTS = range(30000, 32768)


def install_default_service(store: Store) -> None:
    """`default/kubernetes`, as the apiserver's reconciler keeps it (ClusterIP 10.96.0.1, the
    control plane's address as its endpoint; nothing listens there in kubesim)."""
    svc: Obj = {
        "metadata": {
            "name": "kubernetes",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "clusterIP": "10.96.0.1",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
        },
    }
    admit_service(store, svc, None)
    store.create(SERVICES, "default", svc)
    port = {"name": "https", "port": 6443, "protocol": "TCP"}
    store.create(
        ENDPOINTS,
        "default",
        {
            "metadata": {
                "name": "kubernetes",
                "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
            },
            "subsets": [{"addresses": [{"ip": CONTROL_PLANE_IP}], "ports": [port]}],
        },
    )
    store.create(
        SLICES,
        "default",
        {
            "metadata": {"name": "kubernetes", "labels": {SLICE_SERVICE: "kubernetes"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [CONTROL_PLANE_IP], "conditions": {"ready": True}}],
            "ports": [port],
        },
    )


def admit_service(store: Store, obj: Obj, cur: Obj | None) -> None:
    """Apiserver defaulting and validation of a Service, with ClusterIP/NodePort allocation."""
    name = obj.get("metadata", {}).get("name", "")
    # the registry's PrepareForCreate/Update: a status with an empty loadBalancer, as served
    status = obj.get("status") if isinstance(obj.get("status"), dict) else None
    obj["status"] = {**(status or {}), "loadBalancer": (status or {}).get("loadBalancer") or {}}
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    typ = spec["type"]
    if typ not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
        raise ApiError.invalid(
            "Service",
            name,
            "spec.type",
            f'Unsupported value: "{typ}": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
        )
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if not ports and typ != "ExternalName" and not headless:
        raise ApiError.invalid("Service", name, "spec.ports", "Required value")
    names: set[str] = set()
    for i, p in enumerate(ports):
        if not isinstance(p.get("port"), int) or not 1 <= p["port"] <= 65535:
            raise ApiError.invalid(
                "Service",
                name,
                f"spec.ports[{i}].port",
                f"Invalid value: {p.get('port')}: must be between 1 and 65535, inclusive",
            )
        if len(ports) > 1 and not p.get("name"):
            raise ApiError.invalid("Service", name, f"spec.ports[{i}].name", "Required value")
        if p.get("name") in names:
            raise ApiError(
                422,
                "Invalid",
                f'Service "{name}" is invalid: spec.ports[{i}].name: Duplicate value: "{p["name"]}"',
                {
                    "name": name,
                    "kind": "Service",
                    "causes": [
                        {
                            "reason": "FieldValueDuplicate",
                            "message": f'Duplicate value: "{p["name"]}"',
                            "field": f"spec.ports[{i}].name",
                        }
                    ],
                },
            )
        names.add(p.get("name", ""))
        p.setdefault("protocol", "TCP")
        p.setdefault("targetPort", p["port"])
    if typ == "ExternalName":
        return
    cur_spec = (cur or {}).get("spec") or {}
    if cur_spec.get("clusterIP"):
        want = spec.get("clusterIP")
        if want and want != cur_spec["clusterIP"]:
            raise ApiError.invalid(
                "Service",
                name,
                "spec.clusterIPs[0]",
                f'Invalid value: []string{{"{want}"}}: may not change once set',
            )
        spec["clusterIP"] = cur_spec["clusterIP"]
    elif not spec.get("clusterIP"):
        spec["clusterIP"] = _free_cluster_ip(store)
    spec["clusterIPs"] = [spec["clusterIP"]]
    if not headless:
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    if typ in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
        old = {p.get("port"): p.get("nodePort") for p in cur_spec.get("ports") or []}
        for p in ports:
            if not p.get("nodePort"):
                p["nodePort"] = old.get(p["port"]) or _free_node_port(store)
    if typ == "LoadBalancer":
        obj.setdefault("status", {}).setdefault("loadBalancer", {})


def _free_cluster_ip(store: Store) -> str:
    used = {(s.get("spec") or {}).get("clusterIP") for s in store.list(SERVICES)}
    for off in range(10, SERVICE_CIDR.num_addresses - 1):
        ip = str(SERVICE_CIDR.network_address + off)
        if ip not in used:
            return ip
    raise ApiError.internal("failed to allocate a serviceIP: range is full")


def _free_node_port(store: Store) -> int:
    used = {p.get("nodePort") for s in store.list(SERVICES) for p in (s.get("spec") or {}).get("ports") or []}
    for n in NODE_PORTS:
        if n not in used:
            return n
    raise ApiError.internal("failed to allocate a nodePort: range is full")
