"""The names of a few kinds' objects by namespace, kept up to date from the store's events, so
the admission plugins that read them on every create (quotas, limit ranges, priority classes)
and the disruption controller on every pod event do not scan the whole store."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from .resources import BY_PATH, Resource

if TYPE_CHECKING:
    from .store import Event, Obj, Store

TRACKED = (
    BY_PATH[("", "resourcequotas")],
    BY_PATH[("", "limitranges")],
    BY_PATH[("scheduling.k8s.io", "priorityclasses")],
    BY_PATH[("policy", "poddisruptionbudgets")],
)
_INDEXES: weakref.WeakKeyDictionary[Store, KindIndex] = weakref.WeakKeyDictionary()


class KindIndex:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.names: dict[tuple[str, str], dict[str, set[str]]] = {(r.group, r.plural): {} for r in TRACKED}
        for r in TRACKED:
            for o in store.list(r):
                self._add(r, o["metadata"].get("namespace", ""), o["metadata"]["name"])
        store.hooks.append(self._on_event)

    def _add(self, res: Resource, ns: str, name: str) -> None:
        self.names[(res.group, res.plural)].setdefault(ns, set()).add(name)

    def _on_event(self, ev: Event) -> None:
        by_ns = self.names.get((ev.res.group, ev.res.plural))
        if by_ns is None:
            return
        name = ev.obj["metadata"]["name"]
        if ev.type == "DELETED":
            by_ns.get(ev.namespace, set()).discard(name)
        else:
            self._add(ev.res, ev.namespace, name)

    def list(self, res: Resource, ns: str | None = None) -> list[Obj]:
        """The objects of a tracked kind (in one namespace, or all), in name order."""
        by_ns = self.names[(res.group, res.plural)]
        out = []
        for space in sorted(by_ns) if ns is None else [ns]:
            for name in sorted(by_ns.get(space, ())):
                obj = self.store.find(res, space, name)
                if obj is not None:
                    out.append(obj)
        return out


def index_of(store: Store) -> KindIndex:
    found = _INDEXES.get(store)
    if found is None:
        found = _INDEXES[store] = KindIndex(store)
    return found
