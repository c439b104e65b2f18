"""The API server: one aiohttp application; its middleware counts, delays, injects faults and
authenticates every request, then requests are routed to discovery, the proxy subresources, or a
resource, authorised, and served (REST verbs here; reads, watches, logs and exec elsewhere)."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import uuid
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..storage.errors import ApiError
from ..storage.resources import ACCESS_REVIEWS_GROUP, BY_PATH, RESOURCES, REVIEWS_BY_PATH, Resource, serves
from ..storage.selection import labels_match, parse_field_selector, parse_label_selector
from ..storage.store import Obj
from . import kinds, pod_defaults, validation
from .admission import admit_namespace, prepare, webhook
from .audit import audit_middleware
from .auth import USER
from .customresources import served_version
from .discovery import discovery_response
from .ephemeral import handle_ephemeral
from .eviction import handle_eviction, parse_eviction
from .fieldvalidation import loads as loads_json
from .fieldvalidation import plain, validate, with_warnings
from .health import is_health
from .health import response as health_response
from .impersonation import GROUP as IMPERSONATE_GROUP
from .impersonation import impersonated
from .jobs import admit_job
from .listwatch import ListWatch
from .managed import manager_name, record_update, server_side_apply
from .namespace_lifecycle import begin_deletion, refuse_if_terminating
from .patch import apply_patch
from .pod_attach import handle_attach
from .pod_exec import BROKEN_UPGRADE, KUBELET_REFUSAL, SIGN_IN_PAGE, handle_exec, proxy_page
from .pod_log import log_response
from .podsecurity import admit_create
from .portforward import handle_portforward
from .protobuf_body import decode as decode_protobuf
from .proxy import PROXY_PATH, Proxy, proxy_verb
from .responses import flag, json_response, status_response
from .reviews import review
from .services import admit_service
from .tokenrequest import token_request
from .versions import CONVERTED_BODY, SERVED_METHOD, converts, serve_converted

if TYPE_CHECKING:
    from ..cluster import Cluster

STREAMED = ("exec", "attach", "portforward")  # connect subresources: the verb follows the method
_CORE = re.compile(
    r"^/api/v1(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?/?$"
)
_GROUP = re.compile(
    r"^/apis/(?P<group>[^/]+)/(?P<version>[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?/?$"
)


def _fault_error(fault: Any, path: str = "") -> ApiError:
    """The Status an injected status fault answers with (the apiserver's texts by default)."""
    target = _CORE.match(path) or _GROUP.match(path)
    res, name = (target.group("res"), target.group("name")) if target else ("", "")
    if fault.status == 429:
        err = ApiError.too_many(fault.retry_after)
    elif fault.status == 503:
        err = ApiError.unavailable()
    elif fault.status == 403:
        # an admission plugin whose informers have not synced (apiserver pkg/admission/plugin/
        # webhook/generic/webhook.go, namespace/lifecycle/admission.go): admission.NewForbidden's
        # `<resource> "<name>" is forbidden: not yet ready to handle request`
        what = f'{res} "{name}" is forbidden' if res and name else "forbidden"
        err = ApiError(403, "Forbidden", f"{what}: not yet ready to handle request")
    elif fault.status == 504:
        # the apiserver's timeout filter (apimachinery errors.NewTimeoutError)
        err = ApiError(504, "Timeout", "Timeout: request did not complete within requested timeout")
    else:
        err = ApiError.internal("injected fault")
        err.code = fault.status
    if fault.message:
        err.message = fault.message
    return err


async def _bare_upgrade(request: web.Request, response: web.StreamResponse) -> None:
    """A 101 as the apiserver's WebSocket streams write it (golang.org/x/net/websocket's
    hybiServerHandshaker, on a hijacked connection): Upgrade, Connection, Sec-WebSocket-Accept
    and -Protocol only, no Date or Server. Clients read these headers a byte at a time."""
    if response.status == 101:
        response.headers.popall("Date", None)
        response.headers.popall("Server", None)
        response.headers["Connection"] = "Upgrade"


class ApiServer:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.store.admission += [pod_defaults.admit, validation.admit]
        kinds.register(self.store)
        self.reads = ListWatch(cluster)
        self.proxy = Proxy(cluster)
        middlewares = [audit_middleware(cluster, self._verb), self._middleware]
        self.app = web.Application(middlewares=middlewares, client_max_size=16 * 1024 * 1024)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self.app.on_response_prepare.append(_bare_upgrade)

    # -- middleware: count, delay, inject faults, authenticate ---------------
    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        c = self.cluster
        if c.auth.entra is not None:  # Entra ID's endpoints share the port; they are not the API's
            answer = await c.auth.entra.serve(request)
            if answer is not None:
                return answer
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
                rv = c.store.rv
                event = {"type": "ERROR", "object": ApiError.expired(rv - 1, rv).status()}
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
            if fault.kind == "status" and fault.via == "proxy":
                c.note_fault(f"proxy-{fault.status}")
                return proxy_page(fault.status)
            if fault.kind == "status" and fault.via != "kubelet":
                c.note_fault(str(fault.status))
                return status_response(_fault_error(fault, request.path))
            if fault.kind == "upgrade-ignored":
                c.note_fault("upgrade-ignored")
                return web.Response(status=200, text=SIGN_IN_PAGE, content_type="text/html")
            if fault.kind == "upgrade-broken":
                c.note_fault("upgrade-broken")
                if request.transport is not None:
                    request.transport.write(BROKEN_UPGRADE)
                    request.transport.close()
                raise asyncio.CancelledError
        if is_health(request.path):
            return health_response(request)
        user = c.auth.authenticate(request.headers.get("Authorization"))
        if user is None:
            return status_response(ApiError.unauthorized())
        if fault is not None and fault.kind == "status":  # via the kubelet: its answer, once there
            c.note_fault(f"kubelet-{fault.status}")
            request[KUBELET_REFUSAL] = fault
        try:
            user = impersonated(c.auth, user, request.headers, request.headers.getall(IMPERSONATE_GROUP, []))
            request[USER] = user
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
        p = PROXY_PATH.match(request.rel_url.raw_path)
        if p:
            return (proxy_verb(request.method), f"{p.group('res')}/proxy")
        m = _CORE.match(request.path) or _GROUP.match(request.path)
        if not m:
            return (request.method.lower(), request.path)
        d = m.groupdict()
        res, name, sub = d["res"], d["name"], d["sub"]
        verb = self._verb(request.method, bool(name), flag(request.query.get("watch")), sub)
        if sub in STREAMED:
            verb = "create"  # counted as one exec, whichever verb authorises it
        return (verb, f"{res}/{sub}" if sub else res)

    @staticmethod
    def _verb(method: str, named: bool, watch: bool, sub: str | None) -> str:
        if sub in STREAMED:
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
        found = discovery_response(
            request, path, reviews=self.cluster.knobs.access_reviews, custom=self.store.custom
        )
        if found is not None:
            return found

        proxied = PROXY_PATH.match(request.rel_url.raw_path)
        if proxied:
            return await self.proxy.handle(request, proxied)
        m3 = _CORE.match(request.path)
        group = ""
        if m3 is None:
            m3 = _GROUP.match(request.path)
            if m3 is None:
                raise ApiError.no_route()
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
            raise ApiError.no_route()
        reviewed = REVIEWS_BY_PATH.get((group, plural))
        if reviewed is not None and (self.cluster.knobs.access_reviews or group != ACCESS_REVIEWS_GROUP):
            return await self._review(request, reviewed, ns, name)
        res = BY_PATH.get((group, plural))
        if res is not None and group and not serves(res, d["version"]):
            res = None  # a version the group does not serve
        deprecated = ""
        if res is None and group:
            custom = self.store.custom.lookup(group, plural)
            if custom is not None and served_version(custom, d["version"]):
                res, deprecated = custom, custom.warning(d["version"])
        if res is None:
            # /api/v1/namespaces/{ns} and /api/v1/namespaces/{ns}/status
            if ns is not None and not group and plural == "status" and name is None:
                res, name, sub, ns = BY_PATH[("", "namespaces")], ns, "status", None
            else:
                raise ApiError.no_route()
        if not res.namespaced and ns is not None:
            if res.plural == "namespaces" and name is None:
                name, ns = None, None
            else:
                raise ApiError.no_route()
        if converts(res, d.get("version") or res.version):
            return await serve_converted(self, request, res, d["version"], (ns, name, sub))
        response = await self._resource(request, res, ns, name, sub)
        if deprecated and not response.prepared:
            response.headers.add("Warning", "299 - " + json.dumps(deprecated))
        return response

    async def _resource(
        self, request: web.Request, res: Resource, ns: str | None, name: str | None, sub: str | None
    ) -> web.StreamResponse:
        user = request[USER]
        method = request.get(SERVED_METHOD, request.method)
        watch = flag(request.query.get("watch"))
        verb = self._verb(method, bool(name), watch, sub)
        if sub and sub not in res.subresources:
            raise ApiError.no_route()
        rbac_res = f"{res.plural}/{sub}" if (sub and sub != "status") or sub == "status" else res.plural
        if sub is None:
            rbac_res = res.plural
        authz_name = name or ""
        if not name and verb in ("list", "watch"):
            # a list/watch narrowed to one object by `fieldSelector=metadata.name=X` is authorised
            # for that name (apiserver/pkg/endpoints/request/requestinfo.go), so a Role's
            # resourceNames can grant `kubectl get deploy web -w` and rollout-verify's wait
            exact = [
                v
                for k, op, v in parse_field_selector(request.query.get("fieldSelector", ""))
                if k == "metadata.name" and op == "="
            ]
            authz_name = exact[0] if exact else ""
        if not self.cluster.auth.allowed(user, verb, res.group, rbac_res, ns or "", authz_name):
            raise ApiError.forbidden(
                user=user.name, verb=verb, res=res, sub=sub or "", name=authz_name, namespace=ns
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
        if sub == "eviction":
            body = parse_eviction(await request.read(), request.headers.get("Content-Type", ""))
            return await handle_eviction(request, self.cluster, ns or "", name or "", body)
        if sub == "exec":
            return await handle_exec(request, self.cluster, ns or "", name or "")
        if sub == "ephemeralcontainers":
            return await handle_ephemeral(request, self.cluster, ns or "", name or "")
        if sub == "attach":
            return await handle_attach(request, self.cluster, ns or "", name or "")
        if sub == "portforward":
            return await handle_portforward(request, self.cluster, ns or "", name or "")
        if sub == "token":
            if method != "POST":
                raise ApiError.method_not_allowed()
            body = await self._body(request)
            return json_response(
                token_request(self.cluster.auth, self.store, ns or "", name or "", body), 201
            )
        if sub == "log":
            return await log_response(request, self.cluster, ns or "", name or "")
        if sub == "scale":
            return await self._scale(request, res, ns or "", name or "")
        if method == "GET":
            if name:
                obj = self.store.get(res, ns or "", name)
                return self.reads.get_response(request, res, obj)
            if watch:
                return await self.reads.watch_response(request, res, ns)
            return await self.reads.list_response(request, res, ns)
        if method == "POST" and not name:
            return await self._create(request, res, ns or "")
        if method == "PUT" and name:
            body = await self._body(request)
            warnings = [] if sub else validate(request, res, body, decode_error=True)
            body = plain(body)
            if body.get("metadata", {}).get("name") not in (None, name):
                raise ApiError.bad_request("the name of the object does not match the name on the URL")
            body.setdefault("metadata", {})["name"] = name
            prepare(res, body)
            webhook(res, body, sub, self.cluster.knobs)
            if res.kind == "Service" and not sub:
                admit_service(self.store, body, self.store.get(res, ns or "", name))
            if res.kind == "Job" and not sub:
                body["metadata"]["uid"] = self.store.get(res, ns or "", name)["metadata"]["uid"]
                admit_job(body)
            if sub != "status":
                record_update(
                    res, self.store.get(res, ns or "", name), body, self._manager(request), sub or ""
                )
            out = self.store.update(res, ns or "", body, subresource=sub or "")
            return with_warnings(json_response(out), warnings)
        if method == "PATCH" and name and self._is_apply(request) and not sub:
            return await self._apply(request, res, ns or "", name)
        if method == "PATCH" and name:
            cur = self.store.get(res, ns or "", name)
            raw = await request.read()
            target = copy.deepcopy(cur)
            patched = apply_patch(target, raw, request.headers.get("Content-Type", ""))
            patched.setdefault("metadata", {})["name"] = name
            warnings = [] if sub else validate(request, res, patched, decode_error=False)
            # a patch never carries a stale resourceVersion unless the client put one in
            prepare(res, patched)
            webhook(res, patched, sub, self.cluster.knobs)
            if res.kind == "Service" and not sub:
                admit_service(self.store, patched, cur)
            if res.kind == "Job" and not sub:
                admit_job(patched)
            if flag(request.query.get("dryRun")) or request.query.get("dryRun") == "All":
                if sub != "status":
                    self.store.admit(res, patched, cur)
                return with_warnings(json_response(patched), warnings)
            if sub != "status":
                record_update(res, cur, patched, self._manager(request), sub or "")
            out = self.store.update(res, ns or "", patched, subresource=sub or "")
            return with_warnings(json_response(out), warnings)
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
        raise ApiError.method_not_allowed()

    async def _review(
        self, request: web.Request, res: Resource, ns: str | None, name: str | None
    ) -> web.Response:
        """A self-review (reviews.py): cluster-scoped, create only, allowed to every
        authenticated user by the default system:basic-user binding."""
        if ns is not None or name is not None:
            raise ApiError.no_route()
        if request.method != "POST":
            raise ApiError.method_not_allowed()
        user = request[USER]
        if not self.cluster.auth.allowed(user, "create", res.group, res.plural, ""):
            raise ApiError.forbidden(user=user.name, verb="create", res=res, sub="", name="", namespace=None)
        body = await self._body(request)
        return json_response(review(self.cluster.auth, res, user, body), 201)

    # -- verbs ------------------------------------------------------------
    @staticmethod
    def _manager(request: web.Request) -> str:
        return manager_name(request.query, request.headers.get("User-Agent", ""))

    @staticmethod
    def _is_apply(request: web.Request) -> bool:
        return request.headers.get("Content-Type", "").split(";")[0].strip() == "application/apply-patch+yaml"

    async def _apply(self, request: web.Request, res: Resource, ns: str, name: str) -> web.Response:
        """Server-side apply (managed.py): creates the object when it does not exist."""
        manager = request.query.get("fieldManager", "")
        if not manager:
            raise ApiError.invalid(
                res.kind, name, "fieldManager", "Required value: is required for apply patch"
            )
        raw = await request.read()
        try:
            import yaml

            config = yaml.safe_load(raw or b"{}")
        except Exception as e:
            raise ApiError.bad_request(f"error decoding YAML: {e}") from None
        if not isinstance(config, dict):
            raise ApiError.bad_request("error decoding YAML: the applied configuration is not an object")
        if config.get("kind") not in (None, res.kind) or config.get("apiVersion") not in (
            None,
            res.api_version,
        ):
            raise ApiError.bad_request(
                f"the API version in the data ({config.get('apiVersion')}) does not match the expected API version ({res.api_version})"
            )
        if (config.get("metadata") or {}).get("name") not in (None, name):
            raise ApiError.bad_request("the name of the object does not match the name on the URL")
        warnings = validate(request, res, config, decode_error=False)
        config.setdefault("metadata", {})["name"] = name
        live = self.store.find(res, ns, name)
        merged = server_side_apply(res, live, config, manager, flag(request.query.get("force")))
        prepare(res, merged)
        webhook(res, merged, None, self.cluster.knobs)
        if res.kind == "Service":
            admit_service(self.store, merged, live)
        dry = request.query.get("dryRun") == "All"
        if live is None:
            refuse_if_terminating(self.store, res, ns, name)
            if res.kind == "Job":
                admit_job(merged)
            out = merged if dry else self.store.create(res, ns, merged)
            return with_warnings(json_response(out, 201), warnings)
        if res.kind == "Job":
            admit_job(merged)
        out = merged if dry else self.store.update(res, ns, merged)
        return with_warnings(json_response(out), warnings)

    async def _body(self, request: web.Request) -> Obj:
        converted = request.get(CONVERTED_BODY)  # versions.py read and converted it
        if converted is not None:
            return copy.deepcopy(converted)  # type: ignore[no-any-return]
        raw = await request.read()
        if "protobuf" in request.headers.get("Content-Type", ""):
            # JSON (and YAML) only, as for a custom resource, but for the few kinds kubectl's
            # typed auth/RBAC commands send as protobuf (protobuf_body.py); others get 415
            return decode_protobuf(raw)
        try:
            body = loads_json(raw or b"{}")
        except ValueError:
            try:
                import yaml

                body = yaml.safe_load(raw)
            except Exception as e:
                raise ApiError.bad_request(f"error decoding body: {e}") from None
        if not isinstance(body, dict):
            raise ApiError.bad_request("request body must be an object")
        return body

    async def _create(self, request: web.Request, res: Resource, ns: str) -> web.Response:
        body = await self._body(request)
        warnings = validate(request, res, body, decode_error=True)
        body = plain(body)
        if body.get("kind") not in (None, res.kind):
            raise ApiError.bad_request(
                f"the API version in the data ({body.get('apiVersion')}) does not match the expected API version ({res.api_version})"
            )
        refuse_if_terminating(self.store, res, ns, (body.get("metadata") or {}).get("name") or "")
        prepare(res, body)
        uid = None
        if res.kind == "Job":
            # the uid is the apiserver's before validation: the generated selector names it
            uid = str(uuid.uuid4())
            body.setdefault("metadata", {})["uid"] = uid
            admit_job(body)
        if res.kind == "Pod":
            body.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})
        if res.namespaced:  # Pod Security admission: a pod refused, a pod template warned about
            warnings += admit_create(self.store.find(BY_PATH[("", "namespaces")], "", ns), res.kind, body)
        if res.kind == "Service":
            admit_service(self.store, body, None)
        if res.kind == "Namespace":
            admit_namespace(body)
        record_update(res, None, body, self._manager(request))
        if request.query.get("dryRun") == "All":
            self.store.admit(res, body, None)
            out = copy.deepcopy(body)
            out.setdefault("metadata", {}).setdefault("namespace", ns)
            return with_warnings(json_response(out, 201), warnings)
        out = self.store.create(res, ns, body, uid=uid)
        return with_warnings(json_response(out, 201), warnings)

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
        if res.plural == "namespaces":
            return json_response(begin_deletion(self.store, name))
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
            validation.check_scale(name, replicas)
            obj = self.store.get(res, ns, name)  # as it is now, after the body's read
            scaled = copy.deepcopy(obj)
            scaled["spec"]["replicas"] = replicas
            # an Update through the scale subresource, recorded as such in managedFields
            record_update(res, obj, scaled, self._manager(request), "scale")
            obj = self.store.update(res, ns, scaled)
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
