"""Discovery: /version, /api, /apis and their groups and resource lists, and /openapi/v3."""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from ..storage.crds import CustomKinds
from ..storage.errors import ApiError
from ..storage.resources import api_group_list, resource_list, served, serves
from .customresources import groups, openapi_doc, openapi_index_paths
from .customresources import resource_list as custom_list
from .openapi import documents, swagger
from .responses import json_response

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4-kubesim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def discovery_response(
    request: web.Request, path: str, *, reviews: bool = True, custom: CustomKinds | None = None
) -> web.Response | None:
    """The answer to a discovery path; None for any other path. Without `reviews`, as a server
    that does not serve authorization.k8s.io (Knobs.access_reviews). `custom`: the kinds CRDs
    add (customresources.py)."""
    found = _custom(path, custom) if custom is not None and custom.by_path else None
    if found is not None:
        return json_response(found)
    if path == "/version":
        return json_response(VERSION_INFO)
    if path == "/api":
        return json_response(
            {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": request.host}],
            }
        )
    if path == "/apis":
        listed = api_group_list(reviews)
        if custom is not None:
            listed["groups"] += groups(custom)  # type: ignore[operator]
        return json_response(listed)
    if path == "/api/v1":
        return json_response(resource_list("", "v1", reviews))
    m = re.match(r"^/apis/([^/]+)/([^/]+)$", path)
    if m and any(r.group == m.group(1) and serves(r, m.group(2)) for r in served(reviews)):
        return json_response(resource_list(m.group(1), m.group(2), reviews))
    m2 = re.match(r"^/apis/([^/]+)$", path)
    if m2:
        for g in api_group_list(reviews)["groups"]:  # type: ignore[attr-defined]
            if g["name"] == m2.group(1):
                return json_response({"kind": "APIGroup", "apiVersion": "v1", **g})
    if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
        index, docs = documents()
        if path == "/openapi/v3":
            if custom is not None and custom.by_path:
                index = {"paths": {**index["paths"], **openapi_index_paths(custom)}}
            return json_response(index)
        doc = docs.get(path[len("/openapi/v3/") :])
        if doc is not None:
            return json_response(doc)
    if path == "/openapi/v2":
        accept = request.headers.get("Accept", "")
        if accept and not any(t in accept for t in ("json", "*/*")):
            raise ApiError(
                406, "NotAcceptable", "only the following media types are accepted: application/json"
            )
        return json_response(swagger())
    if path.startswith("/openapi"):
        raise ApiError.no_route()
    return None


def _custom(path: str, custom: CustomKinds) -> dict[str, Any] | None:
    """A custom group's APIGroup, resource list or OpenAPI document; None for other paths."""
    m = re.match(r"^/apis/([^/]+)/([^/]+)$", path)
    if m:
        return custom_list(custom, m.group(1), m.group(2))
    m = re.match(r"^/apis/([^/]+)$", path)
    if m:
        for g in groups(custom):
            if g["name"] == m.group(1):
                return {"kind": "APIGroup", "apiVersion": "v1", **g}
        return None
    m = re.match(r"^/openapi/v3/apis/([^/]+)/([^/]+)$", path)
    if m:
        return openapi_doc(custom, m.group(1), m.group(2))
    return None
