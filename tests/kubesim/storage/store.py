"""Object storage with resourceVersions, the history watches and exact lists read (history.py),
and change hooks.

All methods run on the cluster's event loop thread; nothing here is thread-safe by design.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .crds import CustomKinds, CustomResource
from .errors import ApiError
from .history import History, etcd_key
from .resources import Resource

if TYPE_CHECKING:
    from ..knobs import Knobs

Obj = dict[str, Any]
Key = tuple[str, str, str, str]  # group, plural, namespace, name

# Fields whose change bumps metadata.generation (spec-bearing kinds).
_GENERATION_KINDS = {
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CustomResourceDefinition",
    "CronJob",
    "HorizontalPodAutoscaler",
    "PodDisruptionBudget",
    "ReplicationController",
}
# The v1 face of DaemonSet's internal spec.templateGeneration (apps/v1 conversion).
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
# PrepareForCreate clears status; these are its fields without `omitempty`, as a fresh object shows them.
_EMPTY_STATUS = {
    "StatefulSet": {"replicas": 0, "availableReplicas": 0},
    "DaemonSet": {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    },
}


def generated_suffix() -> str:
    """names.SimpleNameGenerator's 5 characters after a generateName (utilrand.String: no vowels,
    no 0, 1 or 3, so no words)."""
    return "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Event:
    rv: int
    type: str
    res: Resource
    namespace: str
    obj: Obj
    old: Obj | None = None
    at: float = field(default_factory=time.monotonic)  # when it was stored


@dataclass
class Watcher:
    res: Resource
    namespace: str | None
    queue: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)


class Store:
    def __init__(self, knobs: Knobs) -> None:
        self.rv = 100
        self.objects: dict[Key, Obj] = {}
        # mutating admission of every create, a client's or a controller's (plugins such as
        # apiserver/serviceaccount.py): called with (resource, namespace, object) before the object
        # is named from its generateName, as the apiserver's handler admits before the registry's
        # rest.BeforeCreate; each may change the object or raise ApiError to refuse it
        self.mutating: list[Callable[[Resource, str, Obj], None]] = []
        self.history = History(knobs, self.rv)
        self.watchers: list[Watcher] = []
        self.hooks: list[Callable[[Event], None]] = []
        # admission: each checks (and may default) an object about to be written, `old` None on a
        # create; raising ApiError refuses the write. Status writes are not admitted here.
        self.admission: list[Callable[[Resource, Obj, Obj | None], None]] = []
        self.custom = CustomKinds(self)  # the kinds CRDs add (crds.py)

    # -- reads -------------------------------------------------------------
    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        obj = self.objects.get(self._key(res, namespace, name))
        if obj is None:
            raise ApiError.not_found(res, name)
        return obj

    def find(self, res: Resource, namespace: str, name: str) -> Obj | None:
        return self.objects.get(self._key(res, namespace, name))

    def list(self, res: Resource, namespace: str | None = None) -> list[Obj]:
        out = []
        for (g, p, ns, _), obj in self.objects.items():
            if g == res.group and p == res.plural and (namespace is None or ns == namespace):
                out.append(obj)
        out.sort(key=etcd_key)  # etcd's key order, as every list comes back
        return out

    def list_at(self, res: Resource, namespace: str | None, rv: int) -> list[Obj]:
        """The list as it was at resourceVersion `rv` (an etcd read at that revision); raises
        history.Compacted once etcd has compacted it."""
        current = {etcd_key(o): o for o in self.list(res, namespace)}
        state = self.history.state_at(res, current, rv)
        out = [o for o in state.values() if namespace is None or o["metadata"].get("namespace") == namespace]
        out.sort(key=etcd_key)
        return out

    # -- writes ------------------------------------------------------------
    def create(self, res: Resource, namespace: str, obj: Obj, *, uid: str | None = None) -> Obj:
        """`uid`: one the apiserver chose before storing (a Job's generated selector names it)."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        _drop_nulls(meta)
        for mutate in list(self.mutating):
            mutate(res, namespace, obj)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + generated_suffix()
        name = meta.get("name")
        if not name:
            raise ApiError.invalid(
                res.kind, "", "metadata.name", "Required value: name or generateName is required"
            )
        key = self._key(res, namespace, name)
        if key in self.objects:
            raise ApiError.already_exists(res, name)
        if res.namespaced:  # admission plugins read it (quota, limit ranges)
            meta["namespace"] = namespace
        self.admit(res, obj, None)
        if res.namespaced:
            if (
                res.plural != "namespaces"
                and self.find(_NAMESPACES, "", namespace) is None
                and namespace != "default"
            ):
                raise ApiError.not_found(_NAMESPACES, namespace)
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        obj["apiVersion"] = res.api_version
        obj["kind"] = res.kind
        meta["uid"] = uid or str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if res.kind in _GENERATION_KINDS or isinstance(res, CustomResource):
            meta["generation"] = 1
        if isinstance(res, CustomResource) and "status" in res.subresources:
            obj.pop("status", None)  # PrepareForCreate: status is written through /status only
        if res.kind in _EMPTY_STATUS:
            obj["status"] = copy.deepcopy(_EMPTY_STATUS[res.kind])
        if res.kind == "DaemonSet":
            ann = meta.setdefault("annotations", {})
            if not str(ann.get(TEMPLATE_GENERATION, "")).isdigit() or int(ann[TEMPLATE_GENERATION]) < 1:
                ann[TEMPLATE_GENERATION] = "1"
        for k in ("resourceVersion", "deletionTimestamp", "selfLink"):
            meta.pop(k, None)
        self._stamp(obj)
        self.objects[key] = obj
        self._emit("ADDED", res, namespace, obj, None)
        return obj

    def update(self, res: Resource, namespace: str, obj: Obj, *, subresource: str = "") -> Obj:
        """Replace an object; a stale resourceVersion is a 409 Conflict, as in the apiserver."""
        name = obj["metadata"]["name"]
        key = self._key(res, namespace, name)
        cur = self.objects.get(key)
        if cur is None:
            raise ApiError.not_found(res, name)
        want_rv = obj["metadata"].get("resourceVersion")
        if want_rv and str(want_rv) != cur["metadata"]["resourceVersion"]:
            raise ApiError.conflict(res, name)
        new = copy.deepcopy(obj)
        meta = new.setdefault("metadata", {})
        _drop_nulls(meta)
        # Server-owned metadata is never taken from the client.
        for k in (
            "uid",
            "creationTimestamp",
            "namespace",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ):
            if k in cur["metadata"]:
                meta[k] = cur["metadata"][k]
            else:
                meta.pop(k, None)
        new["apiVersion"] = res.api_version
        new["kind"] = res.kind
        if subresource == "status":
            status = new.get("status")
            new = copy.deepcopy(cur)
            if status is not None:
                new["status"] = status
        elif isinstance(res, CustomResource) and "status" in res.subresources:
            # customresource/strategy.go PrepareForUpdate: status is the stored one, or none
            new.pop("status", None)
            if "status" in cur:
                new["status"] = copy.deepcopy(cur["status"])
        elif "status" in cur and res.kind in _GENERATION_KINDS | {
            "Pod",
            "PersistentVolumeClaim",
            "PersistentVolume",
        }:
            # The main resource ignores status changes (status subresource semantics).
            new["status"] = copy.deepcopy(cur["status"])
        if (res.kind == "ConfigMap" or res.kind == "Secret") and cur.get("immutable"):
            for fld in ("data", "binaryData") if res.kind == "ConfigMap" else ("data",):
                if (new.get(fld) or {}) != (cur.get(fld) or {}):
                    raise ApiError.immutable(res.kind, name, fld)
            if not new.get("immutable"):
                raise ApiError.immutable(res.kind, name, "immutable")
        if subresource != "status":
            self.admit(res, new, cur)
        if isinstance(res, CustomResource):
            # customresource/strategy.go: any change but metadata (and status, with the status
            # subresource) bumps the generation
            meta["generation"] = cur["metadata"].get("generation", 1) + (
                _content(new, res) != _content(cur, res)
            )
        elif res.kind in _GENERATION_KINDS:
            gen = cur["metadata"].get("generation", 1)
            if new.get("spec") != cur.get("spec"):
                gen += 1
            meta["generation"] = gen
        if res.kind == "DaemonSet":
            # server-owned: kept from the stored object, bumped when the pod template changes
            tgen = int((cur["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION, "1"))
            if (new.get("spec") or {}).get("template") != (cur.get("spec") or {}).get("template"):
                tgen += 1
            meta.setdefault("annotations", {})[TEMPLATE_GENERATION] = str(tgen)
        if new == cur:
            return cur
        self._stamp(new)
        self.objects[key] = new
        self._emit("MODIFIED", res, namespace, new, cur)
        return new

    def replace(self, res: Resource, namespace: str, obj: Obj) -> Obj:
        """Store `obj` as given, server-owned metadata included (the apiserver's own writes, such as
        a deletionTimestamp); no admission, no conflict check."""
        key = self._key(res, namespace, obj["metadata"]["name"])
        old = self.objects.get(key)
        if old is None:
            raise ApiError.not_found(res, obj["metadata"]["name"])
        new = copy.deepcopy(obj)
        self._stamp(new)
        self.objects[key] = new
        self._emit("MODIFIED", res, namespace, new, old)
        return new

    def remove(self, res: Resource, namespace: str, name: str) -> Obj:
        key = self._key(res, namespace, name)
        cur = self.objects.pop(key, None)
        if cur is None:
            raise ApiError.not_found(res, name)
        gone = copy.deepcopy(cur)
        self._stamp(gone)
        self._emit("DELETED", res, namespace, gone, cur)
        return gone

    def mutate(
        self,
        res: Resource,
        namespace: str,
        name: str,
        fn: Callable[[Obj], None],
        *,
        status: bool = False,
    ) -> Obj | None:
        """Controller-side read-modify-write; silently skips objects that are gone."""
        cur = self.find(res, namespace, name)
        if cur is None:
            return None
        new = copy.deepcopy(cur)
        fn(new)
        if new == cur:
            return cur
        return self.update(res, namespace, new, subresource="status" if status else "")

    def admit(self, res: Resource, obj: Obj, old: Obj | None) -> None:
        """Run the admission list (a dry run calls this without storing)."""
        for check in list(self.admission):
            check(res, obj, old)

    # -- internals ---------------------------------------------------------
    @staticmethod
    def _key(res: Resource, namespace: str, name: str) -> Key:
        return (res.group, res.plural, namespace if res.namespaced else "", name)

    def _stamp(self, obj: Obj) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    def _emit(self, type_: str, res: Resource, namespace: str, obj: Obj, old: Obj | None) -> None:
        ev = Event(self.rv, type_, res, namespace if res.namespaced else "", obj, old)
        self.history.record(ev)
        for w in list(self.watchers):
            if w.res is res and (w.namespace is None or w.namespace == ev.namespace):
                w.queue.put_nowait(ev)
        for hook in list(self.hooks):
            hook(ev)

    def subscribe(self, res: Resource, namespace: str | None) -> Watcher:
        w = Watcher(res, namespace)
        self.watchers.append(w)
        return w

    def unsubscribe(self, w: Watcher) -> None:
        if w in self.watchers:
            self.watchers.remove(w)


from .resources import BY_PATH as _BY_PATH  # noqa: E402

_NAMESPACES = _BY_PATH[("", "namespaces")]


def _drop_nulls(meta: Obj) -> None:
    """`annotations:` with no value decodes to null; the apiserver stores it as absent."""
    for k in [k for k, v in meta.items() if v is None]:
        del meta[k]


def _content(obj: Obj, res: Resource) -> Obj:
    skip = ("metadata", "apiVersion", "kind", *(("status",) if "status" in res.subresources else ()))
    return {k: v for k, v in obj.items() if k not in skip}
