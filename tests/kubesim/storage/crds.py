"""The kinds CustomResourceDefinitions add: which custom resources are served now, registered
when a CRD is stored and dropped (with every object of the kind) when it is deleted.

Upstream: apiextensions-apiserver pkg/apiserver/customresource_handler.go (a CRD's resources are
served once it is stored; all served versions share one storage, objects carry the storage
version), pkg/controller/establish/establishing_controller.go and
pkg/controller/status/naming_controller.go (the NamesAccepted and Established conditions,
`status.acceptedNames`), pkg/controller/finalizer/crd_finalizer.go (deleting a CRD deletes its
custom resources), pkg/registry/customresource/strategy.go (generation)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from .resources import BY_PATH, Resource

Obj = dict[str, Any]

CRD_GROUP = "apiextensions.k8s.io"


@dataclass(frozen=True)
class Column:
    """One `additionalPrinterColumns` entry."""

    name: str
    type: str
    json_path: str
    description: str = ""
    priority: int = 0
    format: str = ""


@dataclass(frozen=True)
class CustomResource(Resource):
    """A served custom kind. `version` is the storage version; `served` every served version
    with its deprecation warning ("" when not deprecated)."""

    categories: tuple[str, ...] = ()
    served: tuple[tuple[str, str], ...] = ()
    columns: tuple[Column, ...] = ()
    schema_json: str = ""  # the storage version's openAPIV3Schema
    list_kind: str = ""

    @property
    def schema(self) -> dict[str, Any]:
        return dict(json.loads(self.schema_json or "{}"))

    def warning(self, version: str) -> str:
        for v, text in self.served:
            if v == version:
                return text
        return ""


def custom_resource(crd: Obj) -> CustomResource | None:
    """The kind a CRD defines, or None when it serves no version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or [] if v.get("served")]
    storage = next((v for v in spec.get("versions") or [] if v.get("storage")), None)
    if not versions or storage is None or not names.get("plural") or not names.get("kind"):
        return None
    served = []
    for v in versions:
        text = ""
        if v.get("deprecated"):
            text = v.get("deprecationWarning") or f"{spec['group']}/{v['name']} {names['kind']} is deprecated"
        served.append((str(v["name"]), str(text)))
    subs = tuple(s for s in ("status", "scale") if s in (storage.get("subresources") or {}))
    columns = tuple(
        Column(
            name=str(c.get("name", "")),
            type=str(c.get("type", "string")),
            json_path=str(c.get("jsonPath", "")),
            description=str(c.get("description", "")),
            priority=int(c.get("priority") or 0),
            format=str(c.get("format", "")),
        )
        for c in storage.get("additionalPrinterColumns") or []
    )
    schema = (storage.get("schema") or {}).get("openAPIV3Schema") or {}
    return CustomResource(
        group=str(spec["group"]),
        version=str(storage["name"]),
        plural=str(names["plural"]),
        kind=str(names["kind"]),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short=tuple(names.get("shortNames") or ()),
        subresources=subs,
        singular=str(names.get("singular") or names["kind"].lower()),
        categories=tuple(names.get("categories") or ()),
        served=tuple(served),
        columns=columns,
        schema_json=json.dumps(schema, sort_keys=True),
        list_kind=str(names.get("listKind") or f"{names['kind']}List"),
    )


class CustomKinds:
    """The custom resources one cluster serves, kept in step with its CRD objects."""

    def __init__(self, store: Any) -> None:  # the Store (store.py), which holds this
        self.store = store
        self.by_path: dict[tuple[str, str], CustomResource] = {}
        store.hooks.append(self._on_event)

    def lookup(self, group: str, plural: str) -> CustomResource | None:
        return self.by_path.get((group, plural))

    def by_kind(self, group: str, kind: str) -> CustomResource | None:
        return next((r for r in self.by_path.values() if r.group == group and r.kind == kind), None)

    def all(self) -> list[CustomResource]:
        return sorted(self.by_path.values(), key=lambda r: (r.group, r.plural))

    def _on_event(self, ev: Any) -> None:  # a store.Event
        if ev.res.group != CRD_GROUP or ev.res.plural != "customresourcedefinitions":
            return
        spec = ev.obj.get("spec") or {}
        key = (str(spec.get("group", "")), str((spec.get("names") or {}).get("plural", "")))
        if ev.type == "DELETED":
            gone = self.by_path.pop(key, None)
            if gone is not None:
                for o in list(self.store.list(gone)):
                    self.store.remove(gone, o["metadata"].get("namespace", ""), o["metadata"]["name"])
            return
        res = custom_resource(ev.obj)
        if res is None:
            self.by_path.pop(key, None)
            return
        old = self.by_path.get(key)
        if old != res:
            # the same object stays registered while nothing changes: open watches hold it
            self.by_path[key] = res
        if not _established(ev.obj):
            name = ev.obj["metadata"]["name"]
            asyncio.get_running_loop().call_soon(self._establish, name)

    def _establish(self, name: str) -> None:
        crds = BY_PATH[(CRD_GROUP, "customresourcedefinitions")]
        self.store.mutate(crds, "", name, _set_established, status=True)


def _established(crd: Obj) -> bool:
    conds = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conds)


def _set_established(crd: Obj) -> None:
    spec = crd.get("spec") or {}
    names = dict(spec.get("names") or {})
    names.setdefault("singular", str(names.get("kind", "")).lower())
    names.setdefault("listKind", f"{names.get('kind', '')}List")
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    crd["status"] = {
        "acceptedNames": names,
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "reason": "NoConflicts",
                "message": "no conflicts found",
                "lastTransitionTime": now,
            },
            {
                "type": "Established",
                "status": "True",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
                "lastTransitionTime": now,
            },
        ],
        "storedVersions": [v["name"] for v in spec.get("versions") or [] if v.get("storage")],
    }
