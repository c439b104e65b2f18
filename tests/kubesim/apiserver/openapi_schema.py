"""Reads the schema table (openapi_meta.py, openapi_core.py) into definitions, renders them as
OpenAPI v2/v3 schemas, and answers "what type is this field" for field validation and
server-side apply (the same facts the apiserver takes from its generated OpenAPI models)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..storage.resources import RESOURCES
from .openapi_core import CORE
from .openapi_kinds import CLUSTER_KINDS, PREFIXES
from .openapi_meta import API_VERSION, APPS, KIND, META, METADATA, OTHER

PREFIX = {
    "core": "io.k8s.api.core.v1",
    "apps": "io.k8s.api.apps.v1",
    "batch": "io.k8s.api.batch.v1",
    "discovery": "io.k8s.api.discovery.v1",
    "rbac": "io.k8s.api.rbac.v1",
    "storage": "io.k8s.api.storage.v1",
    "meta": "io.k8s.apimachinery.pkg.apis.meta.v1",
}
GROUP_OF = {"core": "", "apps": "apps", "batch": "batch", "discovery": "discovery.k8s.io"}
GROUP_OF["rbac"] = "rbac.authorization.k8s.io"
GROUP_OF["storage"] = "storage.k8s.io"
for _short, (_prefix, _group) in PREFIXES.items():  # the kinds of openapi_kinds.py
    PREFIX[_short], GROUP_OF[_short] = _prefix, _group
SCALARS = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "boolean": {"type": "boolean"},
    "number": {"type": "number", "format": "double"},
    "object": {"type": "object"},
}
# apimachinery's string-shaped types, as the spec defines them
SPECIAL = {
    "IntOrString": (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        {
            "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or "
            "YAML marshalling and unmarshalling, it produces or consumes the inner type.",
            "format": "int-or-string",
            "type": "string",
        },
    ),
    "Quantity": (
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        {
            "description": "Quantity is a fixed-point representation of a number. It provides convenient "
            "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors.",
            "type": "string",
        },
    ),
    "Time": (
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        {
            "description": "Time is a wrapper around time.Time which supports correct marshaling to YAML "
            "and JSON.  Wrappers are provided for many of the factory methods that the time package offers.",
            "format": "date-time",
            "type": "string",
        },
    ),
}


@dataclass
class Prop:
    name: str
    type: str  # a token of the table's notation
    required: bool
    ann: dict[str, str]
    description: str


@dataclass
class Definition:
    short: str  # e.g. apps.Deployment
    description: str
    open: bool = False
    atomic: bool = False
    props: dict[str, Prop] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return full_name(self.short)


def full_name(token: str) -> str:
    if token in SPECIAL:
        return SPECIAL[token][0]
    prefix, _, rest = token.partition(".")
    return f"{PREFIX[prefix]}.{rest}"


def _text(s: str) -> str:
    return s.replace("{API_VERSION}", API_VERSION).replace("{KIND}", KIND).replace("{METADATA}", METADATA)


def _parse(table: str) -> dict[str, Definition]:
    out: dict[str, Definition] = {}
    cur: Definition | None = None
    for line in table.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("@"):
            words = line[1:].split(" ")
            short, rest = words[0], words[1:]
            flags = set()
            while rest and rest[0] in ("~", "+atomic"):
                flags.add(rest.pop(0))
            cur = Definition(short, _text(" ".join(rest)), "~" in flags, "+atomic" in flags)
            out[short] = cur
            continue
        assert cur is not None, line
        head, _, desc = line.partition(" | ")
        words = head.split()
        name, typ, anns = words[0], words[1], words[2:]
        ann = {a[1:].partition("=")[0]: a[1:].partition("=")[2] for a in anns}
        required = name.endswith("!")
        name = name.rstrip("!")
        cur.props[name] = Prop(name, typ, required, ann, _text(desc))
    return out


DEFS: dict[str, Definition] = {}
for _table in (META, APPS, OTHER, CORE, CLUSTER_KINDS):
    DEFS.update(_parse(_table))

# kind definitions: (group, version, kind) -> short name
KINDS: dict[tuple[str, str, str], str] = {}
for _r in RESOURCES:
    for _prefix, _group in GROUP_OF.items():
        if _group == _r.group and f"{_prefix}.{_r.kind}" in DEFS:
            KINDS[(_r.group, _r.version, _r.kind)] = f"{_prefix}.{_r.kind}"


def kind_def(group: str, version: str, kind: str) -> Definition | None:
    short = KINDS.get((group, version, kind))
    return DEFS[short] if short else None


# -- rendering ---------------------------------------------------------------
def _ref(token: str, v3: bool) -> dict[str, Any]:
    name = full_name(token)
    if v3:
        return {"allOf": [{"$ref": f"#/components/schemas/{name}"}]}
    return {"$ref": f"#/definitions/{name}"}


def _type_schema(token: str, ann: dict[str, str], v3: bool) -> dict[str, Any]:
    if token.startswith("[]"):
        out: dict[str, Any] = {"type": "array", "items": _type_schema(token[2:], {}, v3)}
        if "map" in ann:
            out["x-kubernetes-list-map-keys"] = ann["map"].split(",")
            out["x-kubernetes-list-type"] = "map"
        elif "set" in ann:
            out["x-kubernetes-list-type"] = "set"
        elif "atomic" in ann:
            out["x-kubernetes-list-type"] = "atomic"
        return out
    if token.startswith("{}"):
        out = {"type": "object", "additionalProperties": _type_schema(token[2:], {}, v3)}
        if "atomic" in ann:
            out["x-kubernetes-map-type"] = "atomic"
        return out
    if token in SCALARS:
        return dict(SCALARS[token])
    ref = _ref(token, v3)
    if v3 and token not in SPECIAL:
        ref["default"] = {}
    return ref


def _prop_schema(p: Prop, v3: bool) -> dict[str, Any]:
    out = _type_schema(p.type, p.ann, v3)
    if "$ref" in out and not v3:
        out = {"$ref": out["$ref"]}
    out["description"] = p.description
    if "smp" in p.ann:
        out["x-kubernetes-patch-merge-key"] = p.ann["smp"]
        out["x-kubernetes-patch-strategy"] = "merge"
    elif "smpm" in p.ann:
        out["x-kubernetes-patch-strategy"] = "merge"
    elif "retainkeys" in p.ann:
        out["x-kubernetes-patch-strategy"] = "retainKeys"
    return dict(sorted(out.items()))


def render(d: Definition, v3: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"description": d.description, "type": "object"}
    out["properties"] = {n: _prop_schema(p, v3) for n, p in sorted(d.props.items())}
    req = [n for n, p in sorted(d.props.items()) if p.required]
    if req:
        out["required"] = req
    gvk = [{"group": g, "kind": k, "version": v} for (g, v, k), s in KINDS.items() if s == d.short]
    if gvk:
        out["x-kubernetes-group-version-kind"] = gvk
    if d.atomic:
        out["x-kubernetes-map-type"] = "atomic"
    return out


def _refs(token: str) -> list[str]:
    while token.startswith("[]") or token.startswith("{}"):
        token = token[2:]
    return [] if token in SCALARS else [token]


def closure(roots: list[str]) -> list[str]:
    """Every definition (short names, SPECIAL names too) reachable from `roots`."""
    seen: list[str] = []
    todo = list(roots)
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.append(t)
        if t in DEFS:
            for p in DEFS[t].props.values():
                todo.extend(_refs(p.type))
    return sorted(seen, key=full_name)


def schemas(roots: list[str], v3: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in closure(roots):
        out[full_name(t)] = dict(SPECIAL[t][1]) if t in SPECIAL else render(DEFS[t], v3)
    if v3 and "IntOrString" in closure(roots):
        ios = out[SPECIAL["IntOrString"][0]]
        ios["x-kubernetes-int-or-string"] = True
        ios.pop("type", None)
    return out


# -- type questions (validation, apply) --------------------------------------
@dataclass(frozen=True)
class Shape:
    """What a value at some path is: `struct` (a definition), `map` (of elem), `list` (of elem,
    with its list type and keys), `scalar`, or `open` (anything, not described)."""

    kind: str
    definition: Definition | None = None
    elem: str = ""
    list_type: str = "atomic"
    keys: tuple[str, ...] = ()
    atomic: bool = False


def shape(token: str, ann: dict[str, str] | None = None) -> Shape:
    ann = ann or {}
    if token.startswith("[]"):
        lt = "map" if "map" in ann else "set" if "set" in ann else "atomic"
        keys = tuple(ann["map"].split(",")) if "map" in ann else ()
        return Shape("list", elem=token[2:], list_type=lt, keys=keys)
    if token.startswith("{}"):
        return Shape("map", elem=token[2:], atomic="atomic" in ann)
    if token == "object":
        return Shape("open")
    if token in SCALARS or token in SPECIAL:
        return Shape("scalar")
    d = DEFS[token]
    return Shape("struct", definition=d, atomic=d.atomic)


def write_operations(
    paths: dict[str, Any], *, base: str, plural: str, namespaced: bool, kind: str, gvk: dict[str, str]
) -> None:
    """One kind's item and collection paths with the write operations and query parameters kubectl
    looks for (its fieldValidation check reads them), for built-in and custom kinds alike."""
    item = f"{base}/namespaces/{{namespace}}/{plural}/{{name}}" if namespaced else f"{base}/{plural}/{{name}}"
    params = [
        {"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
        for n in ("fieldValidation", "dryRun", "fieldManager")
    ]
    op = {
        "operationId": f"patch{kind}",
        "parameters": params,
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": gvk,
    }
    paths[item] = {"patch": op, "put": {**op, "operationId": f"replace{kind}", "x-kubernetes-action": "put"}}
    paths[item.rsplit("/", 1)[0]] = {"post": {**op, "operationId": f"create{kind}", "x-kubernetes-action": "post"}}
