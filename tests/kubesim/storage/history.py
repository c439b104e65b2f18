"""How far back a watch or a list may reach: the watch cache's event window per resource type, and
etcd's history of revisions until it is compacted.

Upstream (kubernetes/kubernetes, staging/src/k8s.io/apiserver/pkg/storage):
- cacher/watch_cache_history.go: the watch cache keeps a cyclic buffer per resource type of at least
  `defaultLowerBoundCapacity` (100) events, doubling while every buffered event is younger than
  `eventFreshDuration` (cacher.go: 75 s, the 60 s bookmark frequency + 15 s) up to 100 * 1024, and
  dropping the oldest once full of older ones. `GetIntervalLocked` answers a watch from a
  resourceVersion before its oldest servable event with `errors.NewResourceExpired("too old resource
  version: %d (%d)", rv, oldest-1)`; until an event has been dropped, the oldest servable one is the
  one after the cache's initial list.
- etcd3/store.go + etcd3/errors.go: a list at an exact resourceVersion (resourceVersionMatch=Exact,
  or the legacy `limit` with a resourceVersion) and every continue token read etcd at that revision;
  once etcd has compacted it they are 410 (`expired`, `inconsistentContinue`). kube-apiserver
  compacts every `--etcd-compaction-interval` (5 min) to the revision it saw on the previous run.

kubesim approximates both by age and count: an event leaves its resource's window once more than
`Knobs.watch_cache_size` newer events of that type are buffered and it is older than
`Knobs.watch_cache_fresh` (or beyond 100 * 1024 events); a revision stays readable until the event
that superseded it is older than `Knobs.etcd_compaction_interval` (upstream: between one and two
intervals).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ApiError

if TYPE_CHECKING:
    from ..knobs import Knobs
    from .resources import Resource
    from .store import Event, Obj

UPPER_BOUND = 100 * 1024  # watch_cache_history.go defaultUpperBoundCapacity


@dataclass
class Window:
    """One resource type's watch cache history (watchCacheHistory)."""

    events: deque[Event] = field(default_factory=deque)
    removed: bool = False  # removedEventSinceRelist


class History:
    def __init__(self, knobs: Knobs, start_rv: int) -> None:
        self.knobs = knobs
        self.start_rv = start_rv  # the watch caches' initial list and etcd's first readable revision
        self.windows: dict[Resource, Window] = {}
        self.log: deque[Event] = deque()  # every event etcd still holds, oldest first
        self.compacted = start_rv  # reads at a revision below this are ErrCompacted
        self.expired: Counter[str] = Counter()  # 410s served to watches, by resource (plural)

    @staticmethod
    def now() -> float:
        return time.monotonic()

    def record(self, ev: Event) -> None:
        w = self.windows.setdefault(ev.res, Window())
        w.events.append(ev)
        size = max(1, self.knobs.watch_cache_size)
        # watchCacheHistory.updateCache/resizeCacheLocked, by count and age
        while len(w.events) > size and (
            len(w.events) > UPPER_BOUND or ev.at - w.events[0].at >= self.knobs.watch_cache_fresh
        ):
            w.events.popleft()
            w.removed = True
        self.log.append(ev)
        self.compact()

    # -- watches (the watch cache) -------------------------------------------------
    def watch_floor(self, res: Resource) -> int:
        """oldest servable - 1: a watch from a resourceVersion below it is 410 Expired."""
        w = self.windows.get(res)
        if w is None or not w.removed:
            return self.start_rv
        return w.events[0].rv - 1

    def events_since(self, res: Resource, namespace: str | None, rv: int) -> list[Event]:
        floor = self.watch_floor(res)
        if rv < floor:
            self.expired[res.plural] += 1
            raise ApiError.expired(rv, floor)
        w = self.windows.get(res)
        return [
            e
            for e in (w.events if w else ())
            if e.rv > rv and (namespace is None or e.namespace == namespace)
        ]

    # -- lists at a revision (etcd) ------------------------------------------------
    def compact(self) -> None:
        cutoff = self.now() - self.knobs.etcd_compaction_interval
        while self.log and self.log[0].at <= cutoff:
            self.compacted = self.log.popleft().rv

    def state_at(self, res: Resource, current: dict[str, Obj], rv: int) -> dict[str, Obj]:
        """The objects of `res` (by etcd key below the resource, `ns/name`) as they were at `rv`,
        undoing every later event from the current ones; raises Compacted for a revision etcd no
        longer holds."""
        self.compact()
        if rv < self.compacted:
            raise Compacted(rv)
        state = dict(current)
        for ev in reversed(self.log):
            if ev.rv <= rv:
                break
            if ev.res is not res:
                continue
            key = etcd_key(ev.obj)
            if ev.type == "ADDED":
                state.pop(key, None)
            elif ev.old is not None:
                state[key] = ev.old
        return state


class Compacted(Exception):
    """etcd's ErrCompacted ("mvcc: required revision has been compacted")."""


def etcd_key(obj: Obj) -> str:
    """The object's key below /registry/<resource>/, which orders every list."""
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else str(meta["name"])


# -- continue tokens (storage/continue.go) ---------------------------------------------
def encode_continue(start: str, rv: int) -> str:
    body = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[str, int]:
    """(start key below the listed prefix, resourceVersion); errors are the apiserver's 400s."""

    def bad(detail: str) -> ApiError:
        return ApiError.bad_request(f"invalid continue token: continue key is not valid{detail}")

    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data: Any = json.loads(raw)
    except (binascii.Error, ValueError) as e:
        raise bad(f": {e}") from None
    if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
        version = data.get("v") if isinstance(data, dict) else None
        raise ApiError.bad_request(
            "invalid continue token: continue key is not valid: server does not recognize this "
            f"encoded version {version or ''}".rstrip()
        )
    rv, start = data.get("rv"), data.get("start")
    if not isinstance(rv, int) or rv == 0:
        raise bad(": incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise bad(": encoded start key empty (version meta.k8s.io/v1)")
    return start.lstrip("/"), rv
