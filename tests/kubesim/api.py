"""The HTTP API server: discovery, REST verbs, watch streams, auth and fault injection."""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime as dt
import json
import re
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import tables
from .errors import ApiError
from .patch import (
    apply_patch,
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
)
from .resources import BY_PATH, RESOURCES, Resource, api_group_list, resource_list
from .store import Event, Obj, now_rfc3339

if TYPE_CHECKING:
    from .cluster import Cluster

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4-kubesim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_CORE = re.compile(
    r"^/api/v1(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?/?$"
)
_GROUP = re.compile(
    r"^/apis/(?P<group>[^/]+)/(?P<version>[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?/?$"
)


USER: web.RequestKey[Any] = web.RequestKey("user", object)


def status_response(err: ApiError) -> web.Response:
    body = json.dumps(err.status()).encode()
    headers = {}
    if err.code == 429 and err.details:
        headers["Retry-After"] = str(err.details.get("retryAfterSeconds", 1))
    return web.Response(status=err.code, body=body, content_type="application/json", headers=headers)


def _fault_error(fault: Any) -> ApiError:
    """The Status an injected status fault answers with (the apiserver's texts by default)."""
    if fault.status == 429:
        err = ApiError.too_many(fault.retry_after)
    elif fault.status == 503:
        err = ApiError.unavailable()
    elif fault.status == 403:
        err = ApiError(403, "Forbidden", "forbidden: not yet ready to handle request")
    else:
        err = ApiError.internal("injected fault")
        err.code = fault.status
    if fault.message:
        err.message = fault.message
    return err


def json_response(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=json.dumps(obj).encode(), content_type="application/json")


def _bool(v: str | None) -> bool:
    return v is not None and v.lower() not in ("0", "false")


async def _bare_upgrade(request: web.Request, response: web.StreamResponse) -> None:
    """A 101 as the apiserver's WebSocket streams write it (golang.org/x/net/websocket's
    hybiServerHandshaker, on a hijacked connection): Upgrade, Connection, Sec-WebSocket-Accept
    and -Protocol only, no Date or Server. Clients read these headers a byte at a time."""
    if response.status == 101:
        response.headers.popall("Date", None)
        response.headers.popall("Server", None)
        response.headers["Connection"] = "Upgrade"


WEBHOOK_STAMP = "policy.example.com/stamp"

# Field labels a real apiserver accepts in a fieldSelector, by kind (each kind's registry
# `GetAttrs`/field label conversion); every kind takes metadata.name and metadata.namespace.
_FIELD_LABELS = {
    "Pod": {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    },
    "Event": {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    },
    "Secret": {"type"},
    "Node": {"spec.unschedulable"},
    "ReplicaSet": {"status.replicas"},
    "Namespace": {"status.phase"},
    "Service": {"spec.clusterIP", "spec.type"},
}


def _check_field_label(kind: str, label: str) -> None:
    """The apiserver's 400 for a field it cannot select on (kubesim could match any path)."""
    if not kind or label in ("metadata.name", "metadata.namespace"):
        return
    if kind in _FIELD_LABELS:
        if label not in _FIELD_LABELS[kind]:
            raise ApiError.bad_request(f"field label not supported: {label}")
        return
    raise ApiError.bad_request(
        f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )


class ApiServer:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.app = web.Application(middlewares=[self._middleware], client_max_size=16 * 1024 * 1024)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self.app.on_response_prepare.append(_bare_upgrade)

    # -- middleware: count, delay, inject faults, authenticate ---------------
    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        c = self.cluster
        route = self._classify(request)
        c.count(route)
        if route[1] in ("pods/exec", "pods/proxy"):
            # one event loop: no lock needed between these two lines and the decrement
            c.in_flight += 1
            c.peak_in_flight = max(c.peak_in_flight, c.in_flight)
            try:
                return await self._served(request, handler, route)
            finally:
                c.in_flight -= 1
        return await self._served(request, handler, route)

    async def _served(self, request: web.Request, handler: Any, route: tuple[str, str]) -> web.StreamResponse:
        c = self.cluster
        if c.knobs.api_latency:
            await asyncio.sleep(c.knobs.api_latency)
        fault = c.take_fault(request.method, request.path_qs, route) or c.random_fault(
            request.method, request.path
        )
        if fault is not None:
            if fault.kind == "reset":
                c.note_fault("reset")
                if request.transport is not None:
                    request.transport.abort()
                raise asyncio.CancelledError
            if fault.kind == "expired":
                # what a watch from a compacted resourceVersion gets: HTTP 200, one ERROR event
                c.note_fault("expired")
                rv = c.store.oldest_rv()
                event = {"type": "ERROR", "object": ApiError.expired(max(rv - 1, 1), rv).status()}
                return web.Response(
                    status=200, body=json.dumps(event).encode() + b"\n", content_type="application/json"
                )
            if fault.kind == "watch-error":
                # etcd's leader change or timeout reaching an open watch: HTTP 200, one ERROR event
                c.note_fault("watch-error")
                event = {"type": "ERROR", "object": _fault_error(fault).status()}
                return web.Response(
                    status=200, body=json.dumps(event).encode() + b"\n", content_type="application/json"
                )
            if fault.kind == "status":
                c.note_fault(str(fault.status))
                return status_response(_fault_error(fault))
        if request.path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok")
        user = c.auth.authenticate(request.headers.get("Authorization"))
        if user is None:
            return status_response(ApiError.unauthorized())
        request[USER] = user
        try:
            response = await handler(request)
        except ApiError as e:
            return status_response(e)
        if fault is not None and fault.kind == "reset-after":
            # served (the change is stored), then the connection drops before the answer
            c.note_fault("reset-after")
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        return response

    def _classify(self, request: web.Request) -> tuple[str, str]:
        """(verb, resource[/sub]) for the request counter."""
        from .network import PROXY_PATH, proxy_verb

        p = PROXY_PATH.match(request.rel_url.raw_path)
        if p:
            return (proxy_verb(request.method), f"{p.group('res')}/proxy")
        m = _CORE.match(request.path) or _GROUP.match(request.path)
        if not m:
            return (request.method.lower(), request.path)
        d = m.groupdict()
        res, name, sub = d["res"], d["name"], d["sub"]
        verb = self._verb(request.method, bool(name), _bool(request.query.get("watch")), sub)
        if sub == "exec":
            verb = "create"  # counted as one exec, whichever verb authorises it
        return (verb, f"{res}/{sub}" if sub else res)

    @staticmethod
    def _verb(method: str, named: bool, watch: bool, sub: str | None) -> str:
        if sub == "exec":
            # by the HTTP method, as the apiserver's RequestInfo does: a WebSocket exec is a GET
            # (`get pods/exec`), kubectl's SPDY exec a POST (`create pods/exec`)
            return "get" if method == "GET" else "create"
        if method == "GET":
            if watch:
                return "watch"
            return "get" if named else "list"
        return {
            "POST": "create",
            "PUT": "update",
            "PATCH": "patch",
            "DELETE": "delete" if named else "deletecollection",
        }.get(method, method.lower())

    # -- routing -----------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path == "/version":
            return json_response(VERSION_INFO)
        if path == "/api":
            return json_response(
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": request.host}
                    ],
                }
            )
        if path == "/apis":
            return json_response(api_group_list())
        if path == "/api/v1":
            return json_response(resource_list("", "v1"))
        m = re.match(r"^/apis/([^/]+)/([^/]+)$", path)
        if m and any(r.group == m.group(1) and r.version == m.group(2) for r in RESOURCES):
            return json_response(resource_list(m.group(1), m.group(2)))
        m2 = re.match(r"^/apis/([^/]+)$", path)
        if m2:
            for g in api_group_list()["groups"]:  # type: ignore[attr-defined]
                if g["name"] == m2.group(1):
                    return json_response({"kind": "APIGroup", "apiVersion": "v1", **g})
        if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
            from .openapi import documents

            index, docs = documents()
            if path == "/openapi/v3":
                return json_response(index)
            doc = docs.get(path[len("/openapi/v3/") :])
            if doc is not None:
                return json_response(doc)
        if path.startswith("/openapi"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")

        from .network import PROXY_PATH

        proxied = PROXY_PATH.match(request.rel_url.raw_path)
        if proxied:
            return await self.cluster.net.handle(request, proxied)
        m3 = _CORE.match(request.path)
        group = ""
        if m3 is None:
            m3 = _GROUP.match(request.path)
            if m3 is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            group = m3.group("group")
        d = m3.groupdict()
        ns, plural, name, sub = d["ns"], d["res"], d["name"], d["sub"]
        if (
            ns is not None
            and plural is not None
            and name is None
            and group == ""
            and plural not in {r.plural for r in RESOURCES if r.namespaced}
        ):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        res = BY_PATH.get((group, plural))
        if res is None:
            # /api/v1/namespaces/{ns} and /api/v1/namespaces/{ns}/status
            if ns is not None and not group and plural == "status" and name is None:
                res, name, sub, ns = BY_PATH[("", "namespaces")], ns, "status", None
            else:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not res.namespaced and ns is not None:
            if res.plural == "namespaces" and name is None:
                name, ns = None, None
            else:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return await self._resource(request, res, ns, name, sub)

    async def _resource(
        self, request: web.Request, res: Resource, ns: str | None, name: str | None, sub: str | None
    ) -> web.StreamResponse:
        user = request[USER]
        method = request.method
        watch = _bool(request.query.get("watch"))
        verb = self._verb(method, bool(name), watch, sub)
        if sub and sub not in res.subresources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        rbac_res = f"{res.plural}/{sub}" if (sub and sub != "status") or sub == "status" else res.plural
        if sub is None:
            rbac_res = res.plural
        if not self.cluster.auth.allowed(user, verb, res.group, rbac_res, ns or "", name or ""):
            raise ApiError.forbidden(
                user=user.name, verb=verb, res=res, sub=sub or "", name=name or "", namespace=ns
            )
        if (
            sub == "exec"
            and verb == "get"
            and self.cluster.knobs.websocket_exec_needs_create
            and not self.cluster.auth.allowed(user, "create", res.group, rbac_res, ns or "", name or "")
        ):
            raise ApiError.forbidden(
                user=user.name, verb="create", res=res, sub=sub, name=name or "", namespace=ns
            )
        if sub == "exec":
            from .exec import handle_exec

            return await handle_exec(request, self.cluster, ns or "", name or "")
        if sub == "log":
            return self._log(request, ns or "", name or "")
        if sub == "scale":
            return await self._scale(request, res, ns or "", name or "")
        if method == "GET":
            if name:
                obj = self.store.get(res, ns or "", name)
                return self._render_one(request, res, obj)
            if watch:
                return await self._watch(request, res, ns)
            return self._list(request, res, ns)
        if method == "POST" and not name:
            return await self._create(request, res, ns or "")
        if method == "PUT" and name:
            body = await self._body(request)
            if body.get("metadata", {}).get("name") not in (None, name):
                raise ApiError.bad_request("the name of the object does not match the name on the URL")
            body.setdefault("metadata", {})["name"] = name
            self._prepare(res, body)
            self._webhook(res, body, sub)
            if res.kind == "Service" and not sub:
                self.cluster.net.admit_service(body, self.store.get(res, ns or "", name))
            out = self.store.update(res, ns or "", body, subresource=sub or "")
            return json_response(out)
        if method == "PATCH" and name:
            cur = self.store.get(res, ns or "", name)
            raw = await request.read()
            target = copy.deepcopy(cur)
            patched = apply_patch(target, raw, request.headers.get("Content-Type", ""))
            patched.setdefault("metadata", {})["name"] = name
            # a patch never carries a stale resourceVersion unless the client put one in
            self._prepare(res, patched)
            self._webhook(res, patched, sub)
            if res.kind == "Service" and not sub:
                self.cluster.net.admit_service(patched, cur)
            if _bool(request.query.get("dryRun")) or request.query.get("dryRun") == "All":
                return json_response(patched)
            out = self.store.update(res, ns or "", patched, subresource=sub or "")
            return json_response(out)
        if method == "DELETE" and name:
            return await self._delete(request, res, ns or "", name)
        if method == "DELETE":
            sel = parse_label_selector(request.query.get("labelSelector", ""))
            for obj in self.store.list(res, ns):
                if labels_match(obj["metadata"].get("labels") or {}, sel):
                    self.cluster.delete_object(
                        res, ns or "", obj["metadata"]["name"], grace=None, propagation="Background"
                    )
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
        raise ApiError(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )

    # -- verbs ------------------------------------------------------------
    async def _body(self, request: web.Request) -> Obj:
        if "protobuf" in request.headers.get("Content-Type", ""):
            # kubesim speaks JSON (and YAML) only, as an apiserver serving a custom resource does
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json, application/yaml",
            )
        raw = await request.read()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            try:
                import yaml

                body = yaml.safe_load(raw)
            except Exception as e:
                raise ApiError.bad_request(f"error decoding body: {e}") from None
        if not isinstance(body, dict):
            raise ApiError.bad_request("request body must be an object")
        return body

    def _webhook(self, res: Resource, obj: Obj, sub: str | None) -> None:
        """Knobs.mutating_webhook: stamp the pod template of a Deployment written via the API."""
        if res.kind != "Deployment" or sub or not self.cluster.knobs.mutating_webhook:
            return
        template = obj.setdefault("spec", {}).setdefault("template", {})
        annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[WEBHOOK_STAMP] = str(int(annotations.get(WEBHOOK_STAMP, "0")) + 1)

    def _prepare(self, res: Resource, obj: Obj) -> None:
        """Apiserver-side defaulting and validation that kubesim's clients rely on."""
        kind = res.kind
        name = obj.get("metadata", {}).get("name", "")
        if kind == "Secret":
            data = dict(obj.get("data") or {})
            for k, v in (obj.pop("stringData", None) or {}).items():
                data[k] = base64.b64encode(str(v).encode()).decode()
            for k, v in data.items():
                try:
                    base64.b64decode(v, validate=True)
                except Exception:
                    raise ApiError.invalid(
                        "Secret", name, f"data[{k}]", "Invalid value: illegal base64 data"
                    ) from None
            if data or "data" in obj:
                obj["data"] = data
            obj.setdefault("type", "Opaque")
        if kind in ("ConfigMap", "Secret"):
            for k in list((obj.get("data") or {}).keys()) + list((obj.get("binaryData") or {}).keys()):
                if not re.fullmatch(r"[-._a-zA-Z0-9]+", k):
                    raise ApiError.invalid(
                        kind,
                        name,
                        f"data[{k}]",
                        "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                    )
        if kind == "Deployment":
            spec = obj.setdefault("spec", {})
            spec.setdefault("replicas", 1)
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
            strat = spec.setdefault("strategy", {"type": "RollingUpdate"})
            strat.setdefault("type", "RollingUpdate")
            if strat["type"] == "RollingUpdate":
                ru = strat.setdefault("rollingUpdate", {})
                ru.setdefault("maxSurge", "25%")
                ru.setdefault("maxUnavailable", "25%")
            _default_pod_spec(spec.setdefault("template", {}).setdefault("spec", {}))
            sel = (spec.get("selector") or {}).get("matchLabels")
            if not spec.get("selector"):
                raise ApiError.invalid("Deployment", name, "spec.selector", "Required value")
            labels = spec["template"].setdefault("metadata", {}).get("labels") or {}
            if sel and any(labels.get(k) != v for k, v in sel.items()):
                raise ApiError.invalid(
                    "Deployment",
                    name,
                    "spec.template.metadata.labels",
                    f"Invalid value: {json.dumps(labels)}: `selector` does not match template `labels`",
                )
        if kind in ("StatefulSet", "DaemonSet"):
            from .workloads import default_workload

            default_workload(kind, obj)
        if kind == "ReplicaSet":
            obj.setdefault("spec", {}).setdefault("replicas", 1)
            _default_pod_spec(obj["spec"].setdefault("template", {}).setdefault("spec", {}))
        if kind == "Pod":
            _default_pod_spec(obj.setdefault("spec", {}))

    async def _create(self, request: web.Request, res: Resource, ns: str) -> web.Response:
        body = await self._body(request)
        if body.get("kind") not in (None, res.kind):
            raise ApiError.bad_request(
                f"the API version in the data ({body.get('apiVersion')}) does not match the expected API version ({res.api_version})"
            )
        self._prepare(res, body)
        if res.kind == "Pod":
            body.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})
        if res.kind == "Service":
            self.cluster.net.admit_service(body, None)
        if request.query.get("dryRun") == "All":
            out = copy.deepcopy(body)
            out.setdefault("metadata", {}).setdefault("namespace", ns)
            return json_response(out, 201)
        out = self.store.create(res, ns, body)
        return json_response(out, 201)

    async def _delete(self, request: web.Request, res: Resource, ns: str, name: str) -> web.Response:
        opts: dict[str, Any] = {}
        raw = await request.read()
        if raw:
            try:
                opts = json.loads(raw)
            except ValueError:
                opts = {}
        grace = opts.get("gracePeriodSeconds")
        if grace is None and "gracePeriodSeconds" in request.query:
            grace = int(request.query["gracePeriodSeconds"])
        prop = opts.get("propagationPolicy") or request.query.get("propagationPolicy") or "Background"
        if opts.get("orphanDependents") is True:
            prop = "Orphan"
        out = self.cluster.delete_object(res, ns, name, grace=grace, propagation=prop)
        return json_response(out)

    async def _scale(self, request: web.Request, res: Resource, ns: str, name: str) -> web.Response:
        obj = self.store.get(res, ns, name)
        if request.method in ("PUT", "PATCH"):
            scale = self._scale_obj(obj)
            raw = await request.read()
            new = (
                apply_patch(scale, raw, request.headers.get("Content-Type", ""))
                if request.method == "PATCH"
                else json.loads(raw)
            )
            replicas = int(new.get("spec", {}).get("replicas", 0))

            def set_replicas(o: Obj) -> None:
                o["spec"]["replicas"] = replicas

            obj = self.store.mutate(res, ns, name, set_replicas) or obj
        return json_response(self._scale_obj(obj))

    @staticmethod
    def _scale_obj(obj: Obj) -> Obj:
        sel = (obj.get("spec", {}).get("selector") or {}).get("matchLabels") or {}
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: obj["metadata"][k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in obj["metadata"]
            },
            "spec": {"replicas": obj.get("spec", {}).get("replicas", 0)},
            "status": {
                "replicas": obj.get("status", {}).get("replicas", 0),
                "selector": ",".join(f"{k}={v}" for k, v in sel.items()),
            },
        }

    def _log(self, request: web.Request, ns: str, name: str) -> web.Response:
        pod = self.store.get(BY_PATH[("", "pods")], ns, name)
        container = pick_container(pod, request.query.get("container", ""))
        text = self.cluster.container_log(ns, name, container, previous=_bool(request.query.get("previous")))
        if text is None:
            raise ApiError.bad_request(
                f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
            )
        tail = request.query.get("tailLines")
        if tail is not None:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-int(tail) :]) if int(tail) > 0 else ""
        return web.Response(text=text, content_type="text/plain")

    # -- list / watch / render ---------------------------------------------
    def _filters(self, request: web.Request, kind: str = "") -> tuple[list[Any], list[Any]]:
        fields = parse_field_selector(request.query.get("fieldSelector", ""))
        for label, _, _ in fields:
            _check_field_label(kind, label)
        return parse_label_selector(request.query.get("labelSelector", "")), fields

    @staticmethod
    def _matches(obj: Obj, lsel: list[Any], fsel: list[Any]) -> bool:
        return labels_match(obj["metadata"].get("labels") or {}, lsel) and fields_match(obj, fsel)

    def _list(self, request: web.Request, res: Resource, ns: str | None) -> web.Response:
        lsel, fsel = self._filters(request, res.kind)
        items = [o for o in self.store.list(res, ns) if self._matches(o, lsel, fsel)]
        if tables.wants_table(request.headers.get("Accept", "")):
            return json_response(
                tables.table(res, items, str(self.store.rv), request.query.get("includeObject", "Metadata"))
            )
        listing = {
            "kind": f"{res.kind}List",
            "apiVersion": res.api_version,
            "metadata": {"resourceVersion": str(self.store.rv)},
            "items": items,
        }
        return json_response(listing)

    def _render_one(self, request: web.Request, res: Resource, obj: Obj) -> web.Response:
        if tables.wants_table(request.headers.get("Accept", "")):
            return json_response(
                tables.table(
                    res,
                    [obj],
                    obj["metadata"]["resourceVersion"],
                    request.query.get("includeObject", "Metadata"),
                )
            )
        return json_response(obj)

    async def _watch(self, request: web.Request, res: Resource, ns: str | None) -> web.StreamResponse:
        lsel, fsel = self._filters(request, res.kind)
        as_table = tables.wants_table(request.headers.get("Accept", ""))
        include = request.query.get("includeObject", "Metadata")
        rv_s = request.query.get("resourceVersion", "")
        timeout = float(request.query.get("timeoutSeconds") or 1800)
        bookmarks = _bool(request.query.get("allowWatchBookmarks"))
        resp = web.StreamResponse(
            status=200,
            headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"},
        )
        await resp.prepare(request)
        watcher = self.store.subscribe(res, ns)
        knobs = self.cluster.knobs
        try:
            initial: list[tuple[str, Obj]] = []
            if rv_s in ("", "0"):
                initial = [("ADDED", o) for o in self.store.list(res, ns) if self._matches(o, lsel, fsel)]
            else:
                try:
                    rv = int(rv_s)
                except ValueError:
                    rv = 0
                oldest = self.store.oldest_rv()
                if rv < oldest:
                    err = ApiError.expired(rv, oldest)
                    await self._send(resp, "ERROR", err.status())
                    await resp.write_eof()
                    return resp
                for ev in self.store.events_since(res, ns, rv):
                    typed = self._filter_event(ev, lsel, fsel)
                    if typed:
                        initial.append(typed)
            sent = 0
            for type_, obj in initial:
                await self._send(resp, type_, self._shape(res, obj, as_table, include))
                sent += 1
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                if knobs.watch_drop_after is not None and sent >= knobs.watch_drop_after:
                    knobs.watch_drop_after = None
                    self.cluster.note_fault("watch-drop")
                    if request.transport is not None:
                        request.transport.abort()
                    return resp
                try:
                    ev = await asyncio.wait_for(
                        watcher.queue.get(), timeout=min(remaining, knobs.bookmark_interval)
                    )
                except TimeoutError:
                    if bookmarks:
                        await self._send(
                            resp,
                            "BOOKMARK",
                            {
                                "kind": res.kind,
                                "apiVersion": res.api_version,
                                "metadata": {"resourceVersion": str(self.store.rv)},
                            },
                        )
                    continue
                typed = self._filter_event(ev, lsel, fsel)
                if typed:
                    await self._send(resp, typed[0], self._shape(res, typed[1], as_table, include))
                    sent += 1
            await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.store.unsubscribe(watcher)
        return resp

    @staticmethod
    def _shape(res: Resource, obj: Obj, as_table: bool, include: str) -> Obj:
        if as_table:
            return tables.table(res, [obj], obj["metadata"]["resourceVersion"], include)
        return obj

    def _filter_event(self, ev: Event, lsel: list[Any], fsel: list[Any]) -> tuple[str, Obj] | None:
        now = self._matches(ev.obj, lsel, fsel)
        if ev.type == "MODIFIED" and ev.old is not None:
            before = self._matches(ev.old, lsel, fsel)
            if now and not before:
                return ("ADDED", ev.obj)
            if before and not now:
                return ("DELETED", ev.obj)
        return (ev.type, ev.obj) if now else None

    @staticmethod
    async def _send(resp: web.StreamResponse, type_: str, obj: Obj) -> None:
        await resp.write(json.dumps({"type": type_, "object": obj}).encode() + b"\n")


def pick_container(pod: Obj, requested: str) -> str:
    """The container a pods/log or pods/exec request means, with the apiserver's 400 texts."""
    name = pod["metadata"]["name"]
    containers = [c["name"] for c in pod["spec"].get("containers") or []]
    if not requested:
        if len(containers) != 1:
            raise ApiError.bad_request(
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
            )
        return str(containers[0])
    if requested not in containers:
        raise ApiError.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _default_pod_spec(spec: Obj) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for c in spec.get("containers") or []:
        c.setdefault(
            "imagePullPolicy",
            "Always"
            if str(c.get("image", "")).endswith(":latest") or ":" not in str(c.get("image", ""))
            else "IfNotPresent",
        )
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})


def rfc3339(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = ["ApiServer", "now_rfc3339", "rfc3339"]
