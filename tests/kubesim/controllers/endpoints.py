"""The Endpoints and EndpointSlice controllers: for every Service with a selector, its pods' IPs
(ready ones in `addresses`, unready ones in `notReadyAddresses`) and resolved target ports."""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..apiserver.services import SLICE_SERVICE
from ..node.containers import container_port
from ..storage.resources import BY_PATH
from ..storage.selection import labels_match
from ..storage.store import Event, Obj, now_rfc3339

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
SERVICES = BY_PATH[("", "services")]
ENDPOINTS = BY_PATH[("", "endpoints")]
SLICES = BY_PATH[("discovery.k8s.io", "endpointslices")]
SLICE_MANAGER = "endpointslice.kubernetes.io/managed-by"
SLICE_MANAGED_BY = "endpointslice-controller.k8s.io"


class EndpointsController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self._dirty: set[str] = set()
        self._services: Counter[str] = Counter()  # Services per namespace
        self._scheduled = False
        self.store.hooks.append(self._on_event)

    def _on_event(self, ev: Event) -> None:
        if ev.res is SERVICES and ev.type != "MODIFIED":
            self._services[ev.namespace] += 1 if ev.type == "ADDED" else -1
        # pods matter only where some Service may select them
        if ev.res is SERVICES or (ev.res is PODS and self._services[ev.namespace] > 0):
            self._dirty.add(ev.namespace)
            if not self._scheduled and self.cluster.loop is not None:
                self._scheduled = True
                self.cluster.loop.call_soon(self._sync_dirty)

    def _sync_dirty(self) -> None:
        self._scheduled = False
        dirty, self._dirty = self._dirty, set()
        for ns in dirty:
            self.sync_endpoints(ns)

    def sync_endpoints(self, ns: str) -> None:
        """The endpoints and endpointslice controllers for one namespace."""
        services = self.store.list(SERVICES, ns)
        pods = self.store.list(PODS, ns)
        wanted: set[str] = set()
        for svc in services:
            spec = svc.get("spec") or {}
            if not spec.get("selector") or spec.get("type") == "ExternalName":
                continue
            wanted.add(svc["metadata"]["name"])
            backends = service_backends(svc, pods)
            self._put_endpoints(
                ns, svc, endpoint_subsets(backends, bool(spec.get("publishNotReadyAddresses")))
            )
            self._put_slices(ns, svc, backends)
        for ep in self.store.list(ENDPOINTS, ns):
            managed = (ep["metadata"].get("labels") or {}).get("endpoints.kubernetes.io/managed-by")
            if managed == "endpoint-controller" and ep["metadata"]["name"] not in wanted:
                self.store.remove(ENDPOINTS, ns, ep["metadata"]["name"])
        for sl in self.store.list(SLICES, ns):
            labels = sl["metadata"].get("labels") or {}
            if labels.get(SLICE_MANAGER) == SLICE_MANAGED_BY and labels.get(SLICE_SERVICE) not in wanted:
                self.store.remove(SLICES, ns, sl["metadata"]["name"])

    def _put_endpoints(self, ns: str, svc: Obj, subsets: list[Obj]) -> None:
        name = svc["metadata"]["name"]
        labels = dict(svc["metadata"].get("labels") or {})
        labels["endpoints.kubernetes.io/managed-by"] = "endpoint-controller"
        cur = self.store.find(ENDPOINTS, ns, name)
        if cur is not None and cur.get("subsets", []) == subsets and cur["metadata"].get("labels") == labels:
            return

        def put(o: Obj) -> None:
            o.pop("subsets", None)
            if subsets:
                o["subsets"] = subsets
            o["metadata"]["labels"] = labels
            o["metadata"].setdefault("annotations", {})[
                "endpoints.kubernetes.io/last-change-trigger-time"
            ] = now_rfc3339()

        if cur is None:
            obj: Obj = {"metadata": {"name": name}}
            put(obj)
            self.store.create(ENDPOINTS, ns, obj)
        else:
            self.store.mutate(ENDPOINTS, ns, name, put)

    def _put_slices(self, ns: str, svc: Obj, backends: list[Backend]) -> None:
        """One EndpointSlice per port set (an empty placeholder when nothing matches)."""
        name = svc["metadata"]["name"]
        groups: dict[tuple[tuple[str, int, str], ...], list[Backend]] = {}
        for b in backends:
            groups.setdefault(b.ports, []).append(b)
        if not groups:
            groups[()] = []
        existing = [
            s
            for s in self.store.list(SLICES, ns)
            if (s["metadata"].get("labels") or {}).get(SLICE_SERVICE) == name
            and (s["metadata"].get("labels") or {}).get(SLICE_MANAGER) == SLICE_MANAGED_BY
        ]
        labels = {
            **(svc["metadata"].get("labels") or {}),
            SLICE_SERVICE: name,
            SLICE_MANAGER: SLICE_MANAGED_BY,
        }
        for key, members in sorted(groups.items()):
            ports = [{"name": n, "port": p, "protocol": proto} for n, p, proto in key]
            endpoints = [
                {
                    "addresses": [b.ip],
                    "conditions": {
                        "ready": b.ready and not b.terminating,
                        "serving": b.ready,
                        "terminating": b.terminating,
                    },
                    "nodeName": b.node,
                    "targetRef": b.target_ref,
                }
                for b in sorted(members, key=lambda b: ipaddress.ip_address(b.ip))
            ]
            body: Obj = {"addressType": "IPv4", "endpoints": endpoints}
            if ports:
                body["ports"] = ports
            cur = next((s for s in existing if (s.get("ports") or []) == ports), None)
            if cur is None:
                self.store.create(
                    SLICES,
                    ns,
                    {
                        "metadata": {
                            "generateName": f"{name}-",
                            "labels": labels,
                            "ownerReferences": [
                                {
                                    "apiVersion": "v1",
                                    "kind": "Service",
                                    "name": name,
                                    "uid": svc["metadata"]["uid"],
                                    "controller": True,
                                    "blockOwnerDeletion": True,
                                }
                            ],
                        },
                        **body,
                    },
                )
                continue
            existing.remove(cur)
            if cur.get("endpoints") != endpoints or cur["metadata"].get("labels") != labels:

                def put(o: Obj, body: Obj = body) -> None:
                    o.update(body)
                    o["metadata"]["labels"] = labels

                self.store.mutate(SLICES, ns, cur["metadata"]["name"], put)
        for stale in existing:
            self.store.remove(SLICES, ns, stale["metadata"]["name"])


def _pod_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _target_port(pod: Obj, target: Any) -> int | None:
    """A Service targetPort on this pod: a number, or a container port looked up by name."""
    for c in pod["spec"].get("containers") or [{}]:
        port = container_port(c, target)
        if port is not None:
            return port
    return None


@dataclass
class Backend:
    """One pod behind a Service: its IP, readiness and the Service ports resolved on it."""

    ip: str
    node: str
    target_ref: Obj
    ready: bool
    terminating: bool
    ports: tuple[tuple[str, int, str], ...]  # (service port name, target port, protocol)


def service_backends(svc: Obj, pods: list[Obj]) -> list[Backend]:
    """The pods a Service selects that have an IP and are not finished; a pod that lacks a named
    targetPort is skipped, as the endpoints controller does."""
    spec = svc.get("spec") or {}
    sel = [(k, "=", [v]) for k, v in (spec.get("selector") or {}).items()]
    out = []
    for pod in pods:
        st = pod.get("status") or {}
        ip = ((st.get("podIPs") or [{}])[0]).get("ip") or st.get("podIP")
        if not ip or st.get("phase") in ("Succeeded", "Failed"):
            continue
        if not labels_match(pod["metadata"].get("labels") or {}, sel):
            continue
        ports: list[tuple[str, int, str]] = []
        for sp in spec.get("ports") or []:
            tp = _target_port(pod, sp.get("targetPort", sp.get("port")))
            if tp is not None:
                ports.append((sp.get("name", ""), tp, sp.get("protocol", "TCP")))
        if spec.get("ports") and not ports:
            continue
        meta = pod["metadata"]
        out.append(
            Backend(
                ip=ip,
                node=pod["spec"].get("nodeName", ""),
                target_ref={
                    "kind": "Pod",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
                ready=_pod_ready(pod),
                terminating=bool(meta.get("deletionTimestamp")),
                ports=tuple(sorted(ports)),
            )
        )
    return out


def endpoint_subsets(backends: list[Backend], publish_not_ready: bool = False) -> list[Obj]:
    """What the endpoints controller writes: ready pods in `addresses`, unready ones in
    `notReadyAddresses`, terminating ones nowhere, grouped by port set (`RepackSubsets`)."""
    groups: dict[tuple[tuple[str, int, str], ...], dict[str, list[Obj]]] = {}
    for b in backends:
        if b.terminating:
            continue
        bucket = groups.setdefault(b.ports, {"addresses": [], "notReadyAddresses": []})
        addr = {"ip": b.ip, "nodeName": b.node, "targetRef": b.target_ref}
        bucket["addresses" if publish_not_ready or b.ready else "notReadyAddresses"].append(addr)
    out = []
    for key, g in sorted(groups.items()):
        ss: Obj = {}
        for k in ("addresses", "notReadyAddresses"):
            if g[k]:
                ss[k] = sorted(g[k], key=lambda a: (ipaddress.ip_address(a["ip"]), a["targetRef"]["uid"]))
        ports_out = []
        for name, port, proto in key:
            p: Obj = {"port": port, "protocol": proto}
            if name:
                p["name"] = name
            ports_out.append(p)
        if ports_out:
            ss["ports"] = ports_out
        out.append(ss)
    return out
