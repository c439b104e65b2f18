"""pods/proxy and services/proxy: the request forwarded to a pod's IP (a ready endpoint of the
Service), dialed from inside the pod's network namespace, as the apiserver's UpgradeAwareHandler
does (hop-by-hop and CORS headers dropped, X-Forwarded-* added, Go's error texts)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import posixpath
import re
import socket
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from aiohttp import web

from ..node.dial import DialError, exchange
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from .auth import USER

if TYPE_CHECKING:
    from ..cluster import Cluster
    from ..node.sandbox import Sandbox

PODS = BY_PATH[("", "pods")]
SERVICES = BY_PATH[("", "services")]
ENDPOINTS = BY_PATH[("", "endpoints")]
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


class Proxy:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store

    # -- routing ----------------------------------------------------------------------
    def sandbox_for_ip(self, ip: str) -> Sandbox | None:
        for kl in self.cluster.kubelets.values():
            rt = kl.by_ip.get(ip)
            if rt is not None and rt.sandbox is not None and rt.sandbox.alive:
                return rt.sandbox
        return None

    async def handle(self, request: web.Request, m: re.Match[str]) -> web.StreamResponse:
        """`/api/v1/namespaces/NS/{pods|services}/ID/proxy[/PATH]`, matched on the raw path."""
        ns, plural, id_ = unquote(m.group("ns")), m.group("res"), unquote(m.group("id"))
        res = PODS if plural == "pods" else SERVICES
        verb = proxy_verb(request.method)
        user = request[USER]
        if not self.cluster.auth.allowed(user, verb, "", f"{plural}/proxy", ns, id_):
            raise ApiError.forbidden(user=user.name, verb=verb, res=res, sub="proxy", name=id_, namespace=ns)
        if request.method not in PROXY_METHODS:
            raise ApiError.method_not_allowed()
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
                self.cluster.dial_pool,
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
