"""Pod networking: one network namespace per pod, the API server's pod and service proxy, and
Services with an Endpoints controller.

Each pod gets a sandbox, as a container runtime's pause container: a process in a new network
namespace with `lo` up and an `eth0` holding the pod IP; every container of the pod joins it
(so they share localhost, and two pods may both listen on 8080). Pods cannot reach each other
(there is no bridge between the namespaces); the API server reaches a pod as the real one does,
by dialing `podIP:port`, from a thread that entered the pod's namespace.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import http.client
import ipaddress
import os
import posixpath
import re
import shutil
import signal
import socket
import ssl
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from aiohttp import web

from .errors import ApiError
from .patch import labels_match
from .resources import BY_PATH
from .store import Event, Obj, now_rfc3339

if TYPE_CHECKING:
    from .cluster import Cluster

PODS = BY_PATH[("", "pods")]
SERVICES = BY_PATH[("", "services")]
ENDPOINTS = BY_PATH[("", "endpoints")]
SLICES = BY_PATH[("discovery.k8s.io", "endpointslices")]
SLICE_SERVICE = "kubernetes.io/service-name"
SLICE_MANAGER = "endpointslice.kubernetes.io/managed-by"
SLICE_MANAGED_BY = "endpointslice-controller.k8s.io"

IP_BIN = shutil.which("ip") or "/usr/sbin/ip"
CLONE_NEWNET = 0x40000000
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
CONTROL_PLANE_IP = "172.18.0.1"  # nodes are 172.18.0.2, .3, ...
NODE_PORTS = range(30000, 32768)
PROXY_METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS")
# hop-by-hop headers (Go's httputil.ReverseProxy drops them both ways)
HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
CORS = {
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
}
# /api/v1/namespaces/{ns}/{pods|services}/{id}/proxy[/{path}]
PROXY_PATH = re.compile(
    r"^/api/v1/namespaces/(?P<ns>[^/]+)/(?P<res>pods|services)/(?P<id>[^/]+)/proxy(?P<rest>/.*)?$"
)


# -- addresses ----------------------------------------------------------------------------------


def pod_cidr(index: int) -> str:
    """Node `index` (1-based) owns a /20 of 10.244.0.0/14: room for 4000 pods per node."""
    block = index - 1
    return f"10.{244 + block // 16}.{(block % 16) * 16}.0/20"


class Ipam:
    """host-local IPAM for one node: round robin over the node's podCIDR, skipping addresses in use."""

    def __init__(self, cidr: str) -> None:
        self.net = ipaddress.ip_network(cidr)
        self.used: set[str] = set()
        self._next = 2

    def allocate(self) -> str:
        size = self.net.num_addresses
        for _ in range(size):
            off = self._next
            self._next = self._next + 1 if self._next + 1 < size - 1 else 2
            ip = str(self.net.network_address + off)
            if off & 0xFF in (0, 255) or ip in self.used:
                continue
            self.used.add(ip)
            return ip
        raise SandboxError(
            f"failed to allocate for range 0: no IP addresses available in range set: {self.net}"
        )

    def release(self, ip: str) -> None:
        self.used.discard(ip)


# -- sandboxes ---------------------------------------------------------------------------------


class SandboxError(Exception):
    """The pod's network namespace could not be set up."""


@dataclass
class Sandbox:
    """The pause process holding a pod's network namespace."""

    ip: str
    proc: asyncio.subprocess.Process

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def netns(self) -> str:
        return f"/proc/{self.proc.pid}/ns/net"

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None


async def create_sandbox(ip: str) -> Sandbox:
    """`unshare -n` a pause process; lo up, eth0 (one end of a veth pair) holds the pod IP.
    The pause process lets go of its pipes once ready, so a pod costs no file descriptor here."""
    batch = "\n".join(
        [
            "link set lo up",
            "link add eth0 type veth peer name kubesim0",
            f"addr add {ip}/32 dev eth0",
            "link set kubesim0 up",
            "link set eth0 up",
            "",
        ]
    )
    script = f"printf '%s' '{batch}' | {IP_BIN} -batch - && echo ready && exec /usr/bin/sleep infinity >/dev/null 2>&1"
    proc = await asyncio.create_subprocess_exec(
        "/usr/bin/unshare",
        "-n",
        "--",
        "/bin/sh",
        "-c",
        script,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        close_fds=False,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
    except TimeoutError:
        line = b""
    except BaseException:  # cancelled (the pod went away): leave no pause process behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    if line.strip() != b"ready":
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        err = b""
        with contextlib.suppress(TimeoutError):
            err = await asyncio.wait_for(proc.stderr.read(), timeout=5)
        await proc.wait()
        raise SandboxError(
            "failed to setup network for sandbox: " + (err.decode(errors="replace").strip() or "unknown")
        )
    return Sandbox(ip, proc)


async def destroy_sandbox(sb: Sandbox) -> None:
    if sb.proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sb.proc.pid, signal.SIGKILL)
    await sb.proc.wait()


# -- dialing into a pod's namespace --------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int, nstype: int) -> None:
    if _libc.setns(fd, nstype) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def socket_in_netns(netns: str) -> socket.socket:
    """A TCP socket created inside `netns` (a socket keeps the namespace it was created in).

    The calling thread enters the namespace only for the socket() call and goes back at once."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(netns, os.O_RDONLY)
    except OSError:
        os.close(own)
        raise
    try:
        _setns(target, CLONE_NEWNET)
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            _setns(own, CLONE_NEWNET)
    finally:
        os.close(target)
        os.close(own)


class DialError(Exception):
    """The backend could not be reached; the message is Go's net error text."""


@dataclass
class Upstream:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


def _go_error(op: str, ip: str, port: int, e: BaseException, sock: socket.socket | None = None) -> str:
    """Go's net.OpError text for a failed dial/read, e.g. `dial tcp 10.244.0.5:8080: connect: connection refused`."""
    if isinstance(e, TimeoutError | socket.timeout):
        return f"{op} tcp {ip}:{port}: i/o timeout"
    if isinstance(e, http.client.RemoteDisconnected | http.client.IncompleteRead):
        return "EOF"
    errno_text = {
        111: "connection refused",
        113: "no route to host",
        101: "network is unreachable",
        104: "connection reset by peer",
        110: "connection timed out",
    }
    text = errno_text.get(getattr(e, "errno", None) or 0, str(getattr(e, "strerror", None) or e).lower())
    if op == "dial":
        return f"dial tcp {ip}:{port}: connect: {text}"
    local = ""
    if sock is not None:
        with contextlib.suppress(OSError):
            la = sock.getsockname()
            local = f"{la[0]}:{la[1]}->"
    return f"read tcp {local}{ip}:{port}: read: {text}"


def exchange(
    netns: str | None,
    ip: str,
    port: int,
    scheme: str,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    timeout: float,
) -> Upstream:
    """One HTTP request to ip:port inside `netns` (blocking; run it in a worker thread)."""
    if netns is None:
        raise DialError(_go_error("dial", ip, port, OSError(113, "no route to host")))
    try:
        sock = socket_in_netns(netns)
    except OSError as e:
        raise DialError(_go_error("dial", ip, port, OSError(113, "no route to host"))) from e
    try:
        sock.settimeout(timeout)
        try:
            sock.connect((ip, port))
        except OSError as e:
            raise DialError(_go_error("dial", ip, port, e)) from e
        conn: http.client.HTTPConnection
        if scheme == "https":
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            try:
                wrapped = ctx.wrap_socket(sock)
            except (OSError, ssl.SSLError) as e:
                raise DialError(f"remote error: tls: {e}") from e
            conn = http.client.HTTPSConnection(ip, port, timeout=timeout, context=ctx)
            conn.sock = wrapped
        else:
            conn = http.client.HTTPConnection(ip, port, timeout=timeout)
            conn.sock = sock
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                conn.putheader(k, v)
            conn.endheaders(body if body or method in ("POST", "PUT", "PATCH") else None)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise DialError(_go_error("read", ip, port, e, sock)) from e
        finally:
            conn.close()
        return Upstream(resp.status, resp.reason, list(resp.getheaders()), data)
    finally:
        with contextlib.suppress(OSError):
            sock.close()


# -- the proxy subresources --------------------------------------------------------------------


def split_scheme_name_port(id_: str) -> tuple[str, str, str] | None:
    """apimachinery's `SplitSchemeNamePort`: `name`, `name:port` or `scheme:name:port`."""
    parts = id_.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port


def proxy_verb(method: str) -> str:
    """The RBAC verb of a connect request (`RequestInfoFactory`)."""
    return {
        "POST": "create",
        "GET": "get",
        "HEAD": "get",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete",
    }.get(method, "")


def _join_path(rest: str) -> str:
    """Go's `path.Join("", rest)`, keeping a trailing slash the client sent."""
    if not rest:
        return ""
    joined = posixpath.normpath("/" + rest.lstrip("/"))
    joined = re.sub(r"^/+", "/", joined)
    if rest.endswith("/") and not joined.endswith("/"):
        joined += "/"
    return joined


class PodNetwork:
    """Sandboxes' IPAM lives on the kubelets; this owns the proxy, Services and Endpoints."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="kubesim-proxy")
        self._dirty: set[str] = set()
        self._services: Counter[str] = Counter()  # Services per namespace
        self._scheduled = False
        self.store.hooks.append(self._on_event)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    # -- routing ----------------------------------------------------------------------
    def sandbox_for_ip(self, ip: str) -> Sandbox | None:
        for kl in self.cluster.kubelets.values():
            rt = kl.by_ip.get(ip)
            if rt is not None and rt.sandbox is not None and rt.sandbox.alive:
                return rt.sandbox
        return None

    async def handle(self, request: web.Request, m: re.Match[str]) -> web.StreamResponse:
        """`/api/v1/namespaces/NS/{pods|services}/ID/proxy[/PATH]`, matched on the raw path."""
        from .api import USER

        ns, plural, id_ = unquote(m.group("ns")), m.group("res"), unquote(m.group("id"))
        res = PODS if plural == "pods" else SERVICES
        verb = proxy_verb(request.method)
        user = request[USER]
        if not self.cluster.auth.allowed(user, verb, "", f"{plural}/proxy", ns, id_):
            raise ApiError.forbidden(user=user.name, verb=verb, res=res, sub="proxy", name=id_, namespace=ns)
        if request.method not in PROXY_METHODS:
            raise ApiError(
                405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
            )
        parsed = split_scheme_name_port(id_)
        if parsed is None:
            raise ApiError.bad_request(f'invalid {"pod" if res is PODS else "service"} request "{id_}"')
        scheme, name, port = parsed
        if res is PODS and name in self.cluster.knobs.delete_during_proxy:
            # the pod is force-deleted as its proxied request arrives (a drain, a scale-down)
            self.cluster.knobs.delete_during_proxy.discard(name)
            self.cluster.note_fault("proxy-delete")
            with contextlib.suppress(ApiError):
                self.cluster.delete_object(PODS, ns, name, grace=0, propagation="Background")
        if res is PODS:
            ip, dport = self._pod_location(ns, name, port, scheme)
        else:
            ip, dport = self._service_location(ns, name, port, id_)
        target = _join_path(unquote(m.group("rest") or ""))
        if not target:
            # UpgradeAwareHandler: an empty path is redirected to the same URL with a trailing slash
            q = f"?{request.rel_url.raw_query_string}" if request.rel_url.raw_query_string else ""
            return web.Response(status=301, headers={"Location": request.path + "/" + q})
        target = quote(target, safe="/:@!$&'()*+,;=~")
        if request.rel_url.raw_query_string:
            target += "?" + request.rel_url.raw_query_string
        return await self._forward(request, scheme or "http", ip, dport, target)

    def _pod_location(self, ns: str, name: str, port: str, scheme: str) -> tuple[str, int]:
        pod = self.store.get(PODS, ns, name)
        if not port:
            for c in pod["spec"].get("containers") or []:
                if c.get("ports"):
                    port = str(c["ports"][0]["containerPort"])
                    break
        ips = (pod.get("status") or {}).get("podIPs") or []
        ip = ips[0].get("ip", "") if ips else ""
        if not _global_unicast(ip):
            raise ApiError.bad_request("address not allowed")
        return ip, _port_number(ip, port, scheme)

    def _service_location(self, ns: str, name: str, port: str, id_: str) -> tuple[str, int]:
        """`REST.ResourceLocation` of the service registry: a random ready endpoint of the port."""
        if port.isdigit():
            svc = self.store.get(SERVICES, ns, name)
            match = next(
                (p for p in (svc.get("spec") or {}).get("ports") or [] if p.get("port") == int(port)), None
            )
            if match is None:
                raise ApiError(
                    503, "ServiceUnavailable", f'no service port {port} found for service "{name}"'
                )
            port = match.get("name", "")
        eps = self.store.get(ENDPOINTS, ns, name)
        subsets = eps.get("subsets") or []
        if not subsets:
            raise ApiError(503, "ServiceUnavailable", f'no endpoints available for service "{name}"')
        rng = self.cluster.rng
        start = rng.randrange(len(subsets))
        for i in range(len(subsets)):
            ss = subsets[(start + i) % len(subsets)]
            addrs = ss.get("addresses") or []
            if not addrs:
                continue
            for p in ss.get("ports") or []:
                if p.get("name", "") == port:
                    addr = addrs[rng.randrange(len(addrs))]
                    return addr["ip"], int(p["port"])
        raise ApiError(503, "ServiceUnavailable", f'no endpoints available for service "{id_}"')

    async def _forward(
        self, request: web.Request, scheme: str, ip: str, port: int, target: str
    ) -> web.StreamResponse:
        body = await request.read()
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP | {"authorization"}]
        peer = (request.remote or "127.0.0.1").split("%")[0]
        fwd = [v for k, v in headers if k.lower() == "x-forwarded-for"]
        headers = [(k, v) for k, v in headers if k.lower() not in ("x-forwarded-for", "content-length")]
        headers += [
            ("X-Forwarded-For", ", ".join([*fwd, peer])),
            ("X-Forwarded-Uri", request.rel_url.raw_path),
            ("X-Forwarded-Host", request.host),
            ("X-Forwarded-Proto", "https"),
        ]
        if body or request.method in ("POST", "PUT", "PATCH"):
            headers.append(("Content-Length", str(len(body))))
        sandbox = self.sandbox_for_ip(ip)
        netns = sandbox.netns if sandbox is not None else None
        loop = asyncio.get_running_loop()
        try:
            up = await loop.run_in_executor(
                self.pool,
                exchange,
                netns,
                ip,
                port,
                scheme,
                request.method,
                target,
                headers,
                body,
                self.cluster.knobs.proxy_timeout,
            )
        except DialError as e:
            raise ApiError(503, "ServiceUnavailable", f"error trying to reach service: {e}") from None
        out = [(k, v) for k, v in up.headers if k.lower() not in HOP | CORS | {"content-length"}]
        resp = web.Response(status=up.status, reason=up.reason or None, body=up.body)
        for k, v in out:
            resp.headers.add(k, v)
        return resp

    def install_default_service(self) -> None:
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
        self.admit_service(svc, None)
        self.store.create(SERVICES, "default", svc)
        port = {"name": "https", "port": 6443, "protocol": "TCP"}
        self.store.create(
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
        self.store.create(
            SLICES,
            "default",
            {
                "metadata": {"name": "kubernetes", "labels": {SLICE_SERVICE: "kubernetes"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [CONTROL_PLANE_IP], "conditions": {"ready": True}}],
                "ports": [port],
            },
        )

    # -- Services: defaulting and IP allocation --------------------------------------------
    def admit_service(self, obj: Obj, cur: Obj | None) -> None:
        """Apiserver defaulting and validation of a Service, with ClusterIP/NodePort allocation."""
        name = obj.get("metadata", {}).get("name", "")
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
            spec["clusterIP"] = self._free_cluster_ip()
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
                    p["nodePort"] = old.get(p["port"]) or self._free_node_port()
        if typ == "LoadBalancer":
            obj.setdefault("status", {}).setdefault("loadBalancer", {})

    def _free_cluster_ip(self) -> str:
        used = {(s.get("spec") or {}).get("clusterIP") for s in self.store.list(SERVICES)}
        for off in range(10, SERVICE_CIDR.num_addresses - 1):
            ip = str(SERVICE_CIDR.network_address + off)
            if ip not in used:
                return ip
        raise ApiError.internal("failed to allocate a serviceIP: range is full")

    def _free_node_port(self) -> int:
        used = {
            p.get("nodePort")
            for s in self.store.list(SERVICES)
            for p in (s.get("spec") or {}).get("ports") or []
        }
        for n in NODE_PORTS:
            if n not in used:
                return n
        raise ApiError.internal("failed to allocate a nodePort: range is full")

    # -- the Endpoints controller ------------------------------------------------------------
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


def _global_unicast(ip: str) -> bool:
    """Go's `net.IP.IsGlobalUnicast`."""
    try:
        a = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return not (
        a.is_loopback or a.is_link_local or a.is_multicast or a.is_unspecified or str(a) == "255.255.255.255"
    )


def _port_number(ip: str, port: str, scheme: str) -> int:
    if not port:
        return 443 if scheme == "https" else 80
    if port.isdigit():
        return int(port)
    try:
        return socket.getservbyname(port, "tcp")
    except OSError:
        raise ApiError(
            503,
            "ServiceUnavailable",
            f"error trying to reach service: dial tcp: lookup tcp/{port}: unknown port",
        ) from None


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


def container_port(container: Obj, port: Any) -> int | None:
    """An IntOrString port: a number, or the containerPort of one of `container`'s named ports."""
    if isinstance(port, int):
        return port
    if isinstance(port, str) and port.isdigit():
        return int(port)
    for p in container.get("ports") or []:
        if p.get("name") == port:
            return int(p["containerPort"])
    return None


def tcp_probe(netns: str, ip: str, port: int, timeout: float) -> bool:
    """A tcpSocket probe: can a connection to ip:port be opened inside `netns`?"""
    try:
        sock = socket_in_netns(netns)
    except OSError:
        return False
    try:
        sock.settimeout(timeout)
        sock.connect((ip, port))
        return True
    except OSError:
        return False
    finally:
        sock.close()


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


__all__ = [
    "PROXY_PATH",
    "Backend",
    "DialError",
    "Ipam",
    "PodNetwork",
    "Sandbox",
    "SandboxError",
    "container_port",
    "create_sandbox",
    "destroy_sandbox",
    "endpoint_subsets",
    "exchange",
    "pod_cidr",
    "service_backends",
    "socket_in_netns",
    "tcp_probe",
]
