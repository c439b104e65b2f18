"""Just enough OpenAPI v3 for kubectl: it reads each PATCH operation's `fieldValidation` parameter
to decide that the server validates fields (so it needs no client-side schema)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..storage.resources import RESOURCES


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _doc(group: str, version: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for r in RESOURCES:
        if r.group != group or r.version != version:
            continue
        base = f"/{_gv_path(group, version)}"
        item = (
            f"{base}/namespaces/{{namespace}}/{r.plural}/{{name}}"
            if r.namespaced
            else f"{base}/{r.plural}/{{name}}"
        )
        gvk = {"group": group, "version": version, "kind": r.kind}
        params = [
            {
                "name": "fieldValidation",
                "in": "query",
                "schema": {"type": "string", "uniqueItems": True},
            },
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
            {
                "name": "fieldManager",
                "in": "query",
                "schema": {"type": "string", "uniqueItems": True},
            },
        ]
        op = {
            "operationId": f"patch{r.kind}",
            "parameters": params,
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
        }
        paths[item] = {
            "patch": op,
            "put": {**op, "operationId": f"replace{r.kind}", "x-kubernetes-action": "put"},
        }
        coll = item.rsplit("/", 1)[0]
        paths[coll] = {"post": {**op, "operationId": f"create{r.kind}", "x-kubernetes-action": "post"}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.4"},
        "paths": paths,
        "components": {"schemas": {}},
    }


def documents() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(the /openapi/v3 index, {relative path: document})."""
    docs: dict[str, dict[str, Any]] = {}
    for r in RESOURCES:
        key = _gv_path(r.group, r.version)
        if key not in docs:
            docs[key] = _doc(r.group, r.version)
    index = {"paths": {}}
    for key, doc in docs.items():
        h = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
        index["paths"][key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={h}"}
    return index, docs
