"""core/v1 Events as a component's client-go recorder writes them (tools/record/event.go and
events_cache.go): named `<object>.<hex UnixNano>`, `source`/`reportingComponent` naming the
component and host, and correlated before they reach the API: an identical event (same source,
object, fieldPath, type, reason, message) patches the first one's `count` and `lastTimestamp`;
more than 10 distinct messages of one reason within 10 minutes become one
`(combined from similar events): …` event; a source may burst 25 events about one object, then
one every 5 minutes (the spam filter)."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from .storage.resources import BY_PATH
from .storage.store import Obj, Store, now_rfc3339

EVENTS = BY_PATH[("", "events")]
LRU = 4096  # maxLruCacheEntries
AGGREGATE_MAX, AGGREGATE_INTERVAL = 10, 600.0  # defaultAggregateMaxEvents / IntervalInSeconds
SPAM_BURST, SPAM_QPS = 25, 1.0 / 300.0  # defaultSpamBurst / defaultSpamQPS


def go_duration(seconds: float) -> str:
    """Go's time.Duration String(): `500ms`, `10s`, `1m20s`, `5m0s`."""
    if seconds < 1:
        ms = round(seconds * 1000, 3)
        return f"{ms:g}ms" if ms else "0s"
    s = round(seconds, 3)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    out = f"{sec:g}s"
    if h or m:
        out = f"{int(m)}m" + out
    if h:
        out = f"{int(h)}h" + out
    return out


def object_ref(obj: Obj, *, kind: str, api_version: str) -> Obj:
    """The ObjectReference a controller's events point at (reference.GetReference)."""
    meta = obj["metadata"]
    return {
        "kind": kind,
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": api_version,
        "resourceVersion": meta.get("resourceVersion", ""),
    }


def container_ref(pod: Obj, container: str = "") -> Obj:
    """The ObjectReference the kubelet's events point at (pkg/kubelet/container/ref.go):
    the pod, with `spec.containers{NAME}` (`spec.initContainers{NAME}` for an init container) as
    fieldPath for a container's events."""
    meta = pod["metadata"]
    ref: Obj = {
        "kind": "Pod",
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": "v1",
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    if container:
        spec = pod.get("spec") or {}
        inits = {c["name"] for c in spec.get("initContainers") or []}
        ephemeral = {c["name"] for c in spec.get("ephemeralContainers") or []}
        field = "initContainers" if container in inits else "containers"
        if container in ephemeral:
            field = "ephemeralContainers"
        ref["fieldPath"] = f"spec.{field}{{{container}}}"
    return ref


@dataclass
class _Log:
    count: int
    first: str
    name: str


@dataclass
class _Aggregate:
    keys: set[str] = field(default_factory=set)
    last: float = 0.0


@dataclass
class _Bucket:
    tokens: float
    at: float


def _lru_get(cache: OrderedDict[str, Any], key: str) -> Any:
    value = cache.get(key)
    if value is not None:
        cache.move_to_end(key)
    return value


def _lru_put(cache: OrderedDict[str, Any], key: str, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > LRU:
        cache.popitem(last=False)


class Recorder:
    """One component's event recorder with its EventCorrelator. Runs on the cluster's loop."""

    def __init__(self, store: Store, component: str, host: str = "") -> None:
        self.store = store
        self.component, self.host = component, host
        self._logs: OrderedDict[str, _Log] = OrderedDict()
        self._aggregates: OrderedDict[str, _Aggregate] = OrderedDict()
        self._spam: OrderedDict[str, _Bucket] = OrderedDict()

    def event(self, ref: Obj, type_: str, reason: str, message: str) -> None:
        """Record one occurrence (`Eventf`): correlated, then created or patched in the store."""
        src = [self.component, self.host]

        def r(k: str) -> str:
            return str(ref.get(k, ""))

        obj = [r("kind"), r("namespace"), r("name"), r("uid"), r("apiVersion")]
        # getSpamKey: source + object; getEventKey: also fieldPath, type, reason, message;
        # EventAggregatorByReasonFunc: source + object + type + reason + reporting controller/instance
        spam_key = "".join(src + obj)
        event_key = "".join(src + obj[:3] + [r("fieldPath")] + obj[3:] + [type_, reason, message])
        agg_key = "".join(src + obj + [type_, reason, self.component, self.host])
        now = time.monotonic()
        agg = _lru_get(self._aggregates, agg_key)
        if agg is None or now - agg.last > AGGREGATE_INTERVAL:
            agg = _Aggregate()
        agg.keys.add(message)
        agg.last = now
        _lru_put(self._aggregates, agg_key, agg)
        cache_key = event_key
        if len(agg.keys) >= AGGREGATE_MAX:
            agg.keys.pop()
            message = "(combined from similar events): " + message
            cache_key = agg_key
        # eventObserve: an event seen before patches the first one, one more in `count`
        stamp = now_rfc3339()
        last = _lru_get(self._logs, cache_key)
        if last is not None and last.count > 0:
            log = _Log(last.count + 1, last.first, last.name)
        else:
            log = _Log(1, stamp, f"{ref['name']}.{time.time_ns():x}")
        _lru_put(self._logs, cache_key, log)
        # the spam filter: a token bucket per source + object
        bucket = _lru_get(self._spam, spam_key) or _Bucket(float(SPAM_BURST), now)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.at) * SPAM_QPS)
        bucket.at = now
        allowed = bucket.tokens >= 1.0
        if allowed:
            bucket.tokens -= 1.0
        _lru_put(self._spam, spam_key, bucket)
        if not allowed:
            return
        self._write(ref, type_, reason, message, log, stamp)

    def _write(self, ref: Obj, type_: str, reason: str, message: str, log: _Log, stamp: str) -> None:
        ns = str(ref.get("namespace") or "default")
        if log.count > 1 and self.store.find(EVENTS, ns, log.name) is not None:

            def patch(ev: Obj) -> None:
                ev["count"] = log.count
                ev["lastTimestamp"] = stamp
                ev["message"] = message

            self.store.mutate(EVENTS, ns, log.name, patch)
            return
        # the event is new, or was deleted since: created afresh (recordToSink)
        self.store.create(
            EVENTS,
            ns,
            {
                "metadata": {"name": log.name, "namespace": ns},
                "involvedObject": dict(ref),
                "reason": reason,
                "message": message,
                "source": {"component": self.component, **({"host": self.host} if self.host else {})},
                "firstTimestamp": log.first,
                "lastTimestamp": stamp,
                "count": log.count,
                "type": type_,
                "eventTime": None,
                "reportingComponent": self.component,
                "reportingInstance": self.host,
            },
        )
