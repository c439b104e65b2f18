"""Reads: a collection (paginated, at a resourceVersion: listing.py) or one object as JSON or as a
Table, label and field selectors (with the apiserver's field labels per kind), and watch streams
with bookmarks and resumption within the watch cache's window (storage/history.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..storage.errors import ApiError
from ..storage.resources import Resource
from ..storage.selection import fields_match, labels_match, parse_field_selector, parse_label_selector
from ..storage.store import Event, Obj
from . import tables
from .listing import read_page
from .responses import encode, flag, json_response

if TYPE_CHECKING:
    from ..cluster import Cluster

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


class ListWatch:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store

    def _filters(self, request: web.Request, kind: str = "") -> tuple[list[Any], list[Any]]:
        fields = parse_field_selector(request.query.get("fieldSelector", ""))
        for label, _, _ in fields:
            _check_field_label(kind, label)
        return parse_label_selector(request.query.get("labelSelector", "")), fields

    @staticmethod
    def _matches(obj: Obj, lsel: list[Any], fsel: list[Any]) -> bool:
        return labels_match(obj["metadata"].get("labels") or {}, lsel) and fields_match(obj, fsel)

    async def list_response(self, request: web.Request, res: Resource, ns: str | None) -> web.Response:
        lsel, fsel = self._filters(request, res.kind)
        page = await read_page(
            self.store,
            request.query,
            res,
            ns,
            lambda o: self._matches(o, lsel, fsel),
            bool(lsel or fsel),
        )
        if tables.wants_table(request.headers.get("Accept", "")):
            table = tables.table(
                res, page.items, str(page.rv), request.query.get("includeObject", "Metadata")
            )
            table["metadata"] = page.list_meta()
            return json_response(table)
        listing = {
            "kind": f"{res.kind}List",
            "apiVersion": res.api_version,
            "metadata": page.list_meta(),
            "items": page.items,
        }
        return json_response(listing)

    def get_response(self, request: web.Request, res: Resource, obj: Obj) -> web.Response:
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

    async def watch_response(self, request: web.Request, res: Resource, ns: str | None) -> web.StreamResponse:
        lsel, fsel = self._filters(request, res.kind)
        as_table = tables.wants_table(request.headers.get("Accept", ""))
        include = request.query.get("includeObject", "Metadata")
        rv_s = request.query.get("resourceVersion", "")
        timeout = float(request.query.get("timeoutSeconds") or 1800)
        bookmarks = flag(request.query.get("allowWatchBookmarks"))
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
                    since = self.store.history.events_since(res, ns, _int(rv_s))
                except ApiError as err:  # before the watch cache's window: one ERROR event, 410
                    await self._send(resp, "ERROR", err.status())
                    await resp.write_eof()
                    return resp
                for ev in since:
                    typed = self._filter_event(ev, lsel, fsel)
                    if typed:
                        initial.append(typed)
            sent = 0
            for type_, obj in initial:
                await self._send(resp, type_, self._shape(res, obj, as_table, include))
                sent += 1
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            next_bookmark = _next_bookmark(loop.time(), deadline, knobs.bookmark_interval, bookmarks)
            while True:
                now = loop.time()
                remaining = deadline - now
                if remaining <= 0:
                    break
                if knobs.watch_drop_after is not None and sent >= knobs.watch_drop_after:
                    knobs.watch_drop_after = None
                    self.cluster.note_fault("watch-drop")
                    if request.transport is not None:
                        request.transport.abort()
                    return resp
                if next_bookmark is not None and now >= next_bookmark:
                    await self._send(
                        resp,
                        "BOOKMARK",
                        {
                            "kind": res.kind,
                            "apiVersion": res.api_version,
                            "metadata": {"resourceVersion": str(self.store.rv)},
                        },
                    )
                    next_bookmark = _next_bookmark(now, deadline, knobs.bookmark_interval, bookmarks)
                    continue
                wait = remaining if next_bookmark is None else min(remaining, next_bookmark - now)
                try:
                    ev = await asyncio.wait_for(watcher.queue.get(), timeout=max(wait, 0.001))
                except TimeoutError:
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
        await resp.write(encode({"type": type_, "object": obj}))  # the watch encoder: compact, a line each


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


def _next_bookmark(now: float, deadline: float, interval: float, allowed: bool) -> float | None:
    """cacher/cache_watcher.go nextBookmarkTime: every bookmark frequency, and 2 s before the
    watch's deadline; none once that has passed, nor unless the client allowed bookmarks."""
    if not allowed:
        return None
    at = min(now + interval, deadline - 2)
    return at if at >= now else None
