"""What the API server says about the custom kinds CRDs add (storage/crds.py): their discovery
documents, their OpenAPI v3 documents (`kubectl explain`, kubectl's fieldValidation check),
their table columns (`additionalPrinterColumns`) and the structural schema applied to what is
written (unknown fields pruned and reported as fieldValidation does; wrong types refused).

Upstream: apiextensions-apiserver pkg/apiserver/customresource_discovery_controller.go,
pkg/controller/openapi/builder/builder.go (definition names are the group reversed, as
`io.x-k8s.csi.secrets-store.v1.SecretProviderClass`), pkg/registry/customresource/tableconvertor
(a CRD without columns prints Name and Age), apiserver/schema/pruning and validation."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from ..storage.crds import Column, CustomKinds, CustomResource
from ..storage.errors import ApiError
from ..storage.resources import VERBS
from .openapi_schema import schemas, write_operations

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_AGE = Column("Age", "date", ".metadata.creationTimestamp")


# -- discovery ------------------------------------------------------------------------
def _version_key(v: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA > beta > alpha, then by number (version.CompareKubeAwareVersionStrings)."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (-1, 0, 0)
    level = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    return (level, int(m.group(1)), int(m.group(3) or 0))


def groups(kinds: CustomKinds) -> list[dict[str, Any]]:
    """The APIGroup entries of the custom groups, preferred version first."""
    versions: dict[str, set[str]] = {}
    for r in kinds.all():
        versions.setdefault(r.group, set()).update(v for v, _ in r.served)
    out = []
    for group, vs in sorted(versions.items()):
        ordered = sorted(vs, key=_version_key, reverse=True)
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered]
        out.append({"name": group, "versions": gvs, "preferredVersion": gvs[0]})
    return out


def resource_list(kinds: CustomKinds, group: str, version: str) -> dict[str, Any] | None:
    items: list[dict[str, Any]] = []
    for r in kinds.all():
        if r.group != group or version not in [v for v, _ in r.served]:
            continue
        items.append(
            {
                "name": r.plural,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": VERBS,
                **({"shortNames": list(r.short)} if r.short else {}),
                **({"categories": list(r.categories)} if r.categories else {}),
                "storageVersionHash": hashlib.sha256(f"{group}/{r.version}/{r.kind}".encode()).hexdigest()[
                    :11
                ],
            }
        )
        for sub in r.subresources:
            items.append(
                {
                    "name": f"{r.plural}/{sub}",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": "Scale" if sub == "scale" else r.kind,
                    "verbs": ["get", "patch", "update"],
                    **({"group": "autoscaling", "version": "v1"} if sub == "scale" else {}),
                }
            )
    if not items:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}",
        "resources": items,
    }


def served_version(res: CustomResource, version: str) -> bool:
    return version in [v for v, _ in res.served]


# -- OpenAPI v3 ------------------------------------------------------------------------
def definition_name(res: CustomResource, version: str) -> str:
    return ".".join(reversed(res.group.split("."))) + f".{version}.{res.kind}"


def _kind_schema(res: CustomResource, version: str) -> dict[str, Any]:
    schema = res.schema
    props = dict(schema.get("properties") or {})
    props["metadata"] = {
        "allOf": [{"$ref": f"#/components/schemas/{OBJECT_META}"}],
        "description": "Standard object's metadata. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    }
    gvk = [{"group": res.group, "kind": res.kind, "version": version}]
    return {**schema, "type": "object", "properties": props, "x-kubernetes-group-version-kind": gvk}


def openapi_doc(kinds: CustomKinds, group: str, version: str) -> dict[str, Any] | None:
    """/openapi/v3/apis/GROUP/VERSION for a custom group: paths with the write parameters
    kubectl looks for, and each kind's schema (ObjectMeta and what it refers to included)."""
    paths: dict[str, Any] = {}
    comps: dict[str, Any] = {}
    for r in kinds.all():
        if r.group != group or not served_version(r, version):
            continue
        write_operations(
            paths,
            base=f"/apis/{group}/{version}",
            plural=r.plural,
            namespaced=r.namespaced,
            kind=r.kind,
            gvk={"group": group, "version": version, "kind": r.kind},
        )
        comps[definition_name(r, version)] = _kind_schema(r, version)
    if not paths:
        return None
    comps.update(schemas(["meta.ObjectMeta"], v3=True))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": comps},
    }


def openapi_index_paths(kinds: CustomKinds) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in groups(kinds):
        for gv in g["versions"]:
            doc = openapi_doc(kinds, g["name"], gv["version"])
            h = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
            key = f"apis/{gv['groupVersion']}"
            out[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={h}"}
    return out


# -- tables ------------------------------------------------------------------------------
def _json_path(obj: Any, path: str) -> Any:
    """The simple JSONPath forms printer columns use: `.a.b`, `.a[0].b`, `.a['x.y']`."""
    cur = obj
    for m in re.finditer(r"\.([^.\[]+)|\[(\d+)\]|\['([^']*)'\]", path):
        key, idx, quoted = m.groups()
        if idx is not None:
            cur = cur[int(idx)] if isinstance(cur, list) and int(idx) < len(cur) else None
        else:
            k = key if key is not None else quoted
            cur = cur.get(k) if isinstance(cur, dict) else None
        if cur is None:
            return None
    return cur


def columns(res: CustomResource, age: Callable[[str], str]) -> tuple[list[dict[str, Any]], Any]:
    """(columnDefinitions, row function) for `res`: Name, then its printer columns (Age when
    it declares none); `age` prints a date column as the table printer does."""
    cols = list(res.columns) or [_AGE]
    defs = [{"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0}]
    defs += [
        {
            "name": c.name,
            "type": c.type,
            "format": c.format,
            "description": c.description,
            "priority": c.priority,
        }
        for c in cols
    ]

    def row(o: dict[str, Any]) -> list[Any]:
        cells: list[Any] = [o["metadata"]["name"]]
        for c in cols:
            v = _json_path(o, c.json_path)
            if c.type == "date" and isinstance(v, str):
                v = age(v)
            elif isinstance(v, (dict, list)):
                v = json.dumps(v)
            cells.append(v)
        return cells

    return defs, row


# -- structural schema: pruning and types -------------------------------------------------
_TYPES = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "object": (dict,),
    "array": (list,),
}


def _type_ok(value: Any, typ: str) -> bool:
    want = _TYPES.get(typ)
    if want is None or value is None:
        return True
    return isinstance(value, want) and not (typ in ("integer", "number") and isinstance(value, bool))


def _walk(
    value: Any, schema: dict[str, Any], path: str, unknown: list[str], bad: list[tuple[str, Any, str]]
) -> None:
    typ = schema.get("type", "")
    if typ and not _type_ok(value, typ):
        bad.append((path, value, typ))
        return
    if isinstance(value, dict) and not schema.get("x-kubernetes-preserve-unknown-fields"):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for k in list(value):
            sub = f"{path}.{k}" if path else k
            if props is not None and k in props:
                _walk(value[k], props[k], sub, unknown, bad)
            elif isinstance(extra, dict):
                _walk(value[k], extra, sub, unknown, bad)
            elif props is not None or extra is False or typ == "object":
                if extra is True:
                    continue
                unknown.append(sub)
                del value[k]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _walk(item, schema["items"], f"{path}[{i}]", unknown, bad)


def prune(res: CustomResource, obj: Any) -> list[str]:
    """Drop the fields `res`'s schema does not describe (metadata is ObjectMeta's); returns
    their paths, for fieldValidation's warnings or its Strict error."""
    if not isinstance(obj, dict):
        return []
    schema = res.schema
    if not schema:
        return []
    unknown: list[str] = []
    for k in list(obj):
        if k in ("apiVersion", "kind", "metadata"):
            continue
        props = schema.get("properties") or {}
        if k in props:
            _walk(obj[k], props[k], k, unknown, [])
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            unknown.append(k)
            del obj[k]
    return [f'unknown field "{p}"' for p in unknown]


def check_types(res: CustomResource, obj: dict[str, Any]) -> None:
    """The 422 a value of the wrong type gets: `spec.provider: Invalid value: "integer":
    spec.provider in body must be of type string: "integer"`."""
    schema = res.schema
    bad: list[tuple[str, Any, str]] = []
    for k, sub in (schema.get("properties") or {}).items():
        if k not in ("apiVersion", "kind", "metadata") and k in obj:
            _walk(obj[k], sub, k, [], bad)
    if not bad:
        return
    name = (obj.get("metadata") or {}).get("name", "")
    causes = []
    for p, v, typ in bad:
        got = _go_type(v)
        causes.append(f'{p}: Invalid value: "{got}": {p} in body must be of type {typ}: "{got}"')
    message = f'{res.kind}.{res.group} "{name}" is invalid: ' + (
        causes[0] if len(causes) == 1 else "[" + ", ".join(causes) + "]"
    )
    details = {
        "name": name,
        "group": res.group,
        "kind": res.kind,
        "causes": [
            {"reason": "FieldValueTypeInvalid", "message": c.partition(": ")[2], "field": p}
            for c, (p, _, _) in zip(causes, bad, strict=True)
        ],
    }
    raise ApiError(422, "Invalid", message, details)


def _go_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"
