"""OpenAPI v3 (the /openapi/v3 index and one document per group-version) and v2 (/openapi/v2):
the paths' write operations (kubectl reads each PATCH operation's `fieldValidation` parameter to
decide that the server validates fields) and the schemas of the served kinds, built from
kubesim's own table (openapi_schema.py), so `kubectl explain` works."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..storage.resources import RESOURCES, serves
from .openapi_schema import KINDS, schemas, write_operations


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _doc(group: str, version: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    roots = [s for (g, v, _), s in KINDS.items() if (g, v) == (group, version)]
    for r in RESOURCES:
        if r.group != group or not serves(r, version):
            continue
        write_operations(
            paths,
            base=f"/{_gv_path(group, version)}",
            plural=r.plural,
            namespaced=r.namespaced,
            kind=r.kind,
            gvk={"group": group, "version": version, "kind": r.kind},
        )
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.4"},
        "paths": paths,
        "components": {"schemas": schemas(roots, v3=True)},
    }


_V2: dict[str, Any] = {}


def swagger() -> dict[str, Any]:
    """/openapi/v2 (JSON; the apiserver also serves it as protobuf, kubesim does not)."""
    if not _V2:
        _V2.update(
            {
                "swagger": "2.0",
                "info": {"title": "Kubernetes", "version": "v1.32.4"},
                "paths": {},
                "definitions": schemas(sorted(KINDS.values()), v3=False),
            }
        )
    return _V2


_DOCS: list[tuple[dict[str, Any], dict[str, dict[str, Any]]]] = []


def documents() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(the /openapi/v3 index, {relative path: document}), built once."""
    if _DOCS:
        return _DOCS[0]
    docs: dict[str, dict[str, Any]] = {}
    for r in RESOURCES:
        for version in (r.version, *r.also):
            key = _gv_path(r.group, version)
            if key not in docs:
                docs[key] = _doc(r.group, version)
    index = {"paths": {}}
    for key, doc in docs.items():
        h = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
        index["paths"][key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={h}"}
    _DOCS.append((index, docs))
    return index, docs
