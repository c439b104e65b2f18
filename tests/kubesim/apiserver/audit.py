"""An audit log as kube-apiserver writes it with `--audit-log-path` and a Metadata-level policy
(k8s.io/apiserver pkg/apis/audit/v1 Event; pkg/audit/request.go): one JSON line per request at
its ResponseComplete stage, with the verb as RequestInfo names it (`list`, `watch`, `create`, ...;
the HTTP method for a path that names no resource), the request URI with its query, the user and
groups, the source IP, the user agent, the object reference, the response code and the
received/completed timestamps (microseconds). The request's latency is also an annotation
(`kubesim.local/latency`, seconds), so a tool counting requests or timing them needs nothing else.
`python -m tests.kubesim serve --audit-log FILE` writes one."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from aiohttp import web

from .auth import USER
from .responses import flag

if TYPE_CHECKING:
    from ..cluster import Cluster

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Verb = Callable[[str, bool, bool, str | None], str]  # ApiServer._verb: method, named, watch, sub

_RESOURCE = re.compile(
    r"^/(?:api/(?P<cv>v1)|apis/(?P<group>[^/]+)/(?P<gv>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?/?$"
)


def _micro(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def object_ref(path: str) -> dict[str, str] | None:
    """The request's objectRef (RequestInfo's resource, namespace, name, group, version, subresource)."""
    m = _RESOURCE.match(path)
    if m is None:
        return None
    d = m.groupdict()
    res, name, ns, sub = d["res"], d["name"], d["ns"], d["sub"]
    if res == "namespaces" and ns is None and name is not None and sub is None:
        ns = name  # /api/v1/namespaces/NAME: the namespace is itself
    ref: dict[str, str] = {"resource": res}
    if ns:
        ref["namespace"] = ns
    if name:
        ref["name"] = name
    if d["group"]:
        ref["apiGroup"] = d["group"]
    ref["apiVersion"] = d["gv"] or d["cv"] or "v1"
    if sub:
        ref["subresource"] = sub
    return ref


class AuditLog:
    """A JSON-lines file of audit.k8s.io/v1 Events; writes are serialised (the proxy threads too)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: IO[str] = self.path.open("a", buffering=1)
        self._lock = threading.Lock()

    def record(
        self,
        *,
        verb: str,
        uri: str,
        path: str,
        user: Any,
        code: int,
        started: float,
        source: str,
        user_agent: str,
    ) -> None:
        ended = time.time()
        who: dict[str, Any] = (
            {"username": user.name, "groups": list(user.all_groups)}
            if user is not None
            else {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
        )
        if user is not None and getattr(user, "uid", ""):
            who["uid"] = user.uid
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": str(uuid.uuid4()),
            "stage": "ResponseComplete",
            "requestURI": uri,
            "verb": verb,
            "user": who,
            "sourceIPs": [source],
            "userAgent": user_agent,
        }
        ref = object_ref(path)
        if ref is not None:
            event["objectRef"] = ref
        event["responseStatus"] = {"metadata": {}, "code": code}
        event["requestReceivedTimestamp"] = _micro(started)
        event["stageTimestamp"] = _micro(ended)
        event["annotations"] = {"kubesim.local/latency": f"{ended - started:.6f}"}
        line = json.dumps(event, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")

    def close(self) -> None:
        with self._lock:
            self._file.close()


def audit_middleware(cluster: Cluster, verb_of: Verb) -> Any:
    """The API server's outermost middleware: each request's line once it is answered (a
    cluster without an audit log skips it)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        audit = cluster.audit
        if audit is None:
            return await handler(request)
        started, code = time.time(), 0
        try:
            response = await handler(request)
            code = response.status
            return response
        finally:
            ref = object_ref(request.path)
            watch = flag(request.query.get("watch"))
            verb = (
                request.method.lower()
                if ref is None
                else verb_of(request.method, "name" in ref, watch, ref.get("subresource"))
            )
            audit.record(
                verb=verb,
                uri=request.rel_url.raw_path_qs,
                path=request.path,
                user=request.get(USER),
                code=code,
                started=started,
                source=request.remote or "",
                user_agent=request.headers.get("User-Agent", ""),
            )

    return middleware
