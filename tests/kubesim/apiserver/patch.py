"""The three patch types the apiserver accepts: JSON patch, merge patch and strategic merge patch."""

from __future__ import annotations

import copy
import json
from typing import Any

from ..storage.errors import ApiError

# Strategic-merge list keys for the fields kubesim's objects carry (from the Go struct tags).
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "conditions": "type",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "tolerations": None,
}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strategic_merge_patch(target: Any, patch: Any, field: str = "") -> Any:
    """Strategic merge patch: maps merge, keyed lists merge by their merge key, `$patch` directives."""
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: v for k, v in copy.deepcopy(patch).items() if k != "$patch"}
        if patch.get("$patch") == "delete":
            return None
        out = copy.deepcopy(target) if isinstance(target, dict) else {}
        for k, v in patch.items():
            if (
                k.startswith("$setElementOrder/")
                or k.startswith("$deleteFromPrimitiveList/")
                or k == "$retainKeys"
            ):
                continue
            if v is None:
                out.pop(k, None)
            elif isinstance(v, list) and MERGE_KEYS.get(k) and isinstance(out.get(k), list):
                # a Service's spec.ports merge on `port`; a container's ports on `containerPort`
                key = "port" if k == "ports" and field == "spec" else MERGE_KEYS[k]
                out[k] = _merge_list(out[k], v, key or "")
            else:
                merged = strategic_merge_patch(out.get(k), v, k)
                if merged is None:
                    out.pop(k, None)
                else:
                    out[k] = merged
        return out
    if isinstance(patch, list):
        return [strategic_merge_patch(None, x, field) if isinstance(x, dict) else x for x in patch]
    return copy.deepcopy(patch)


def _merge_list(target: list[Any], patch: list[Any], key: str) -> list[Any]:
    out = copy.deepcopy(target)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            out.append(copy.deepcopy(item))
            continue
        idx = next((i for i, t in enumerate(out) if isinstance(t, dict) and t.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic_merge_patch(None, item))
        else:
            out[idx] = strategic_merge_patch(out[idx], item)
    return out


def json_patch(target: Any, ops: list[dict[str, Any]]) -> Any:
    """RFC 6902 JSON patch."""
    doc = copy.deepcopy(target)
    for op in ops:
        kind = op.get("op")
        path = _pointer(op.get("path", ""))
        if kind == "add":
            doc = _put(doc, path, copy.deepcopy(op["value"]), insert=True)
        elif kind == "replace":
            _get(doc, path)
            doc = _put(doc, path, copy.deepcopy(op["value"]), insert=False)
        elif kind == "remove":
            doc = _remove(doc, path)
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise ApiError(
                    422,
                    "Invalid",
                    f"the server rejected our request due to an error in our request: testing value {op.get('path')} failed",
                )
        elif kind in ("move", "copy"):
            src = _pointer(op.get("from", ""))
            val = copy.deepcopy(_get(doc, src))
            if kind == "move":
                doc = _remove(doc, src)
            doc = _put(doc, path, val, insert=True)
        else:
            raise ApiError.bad_request(f"Unexpected kind: {kind}")
    return doc


def _pointer(p: str) -> list[str]:
    if p == "":
        return []
    if not p.startswith("/"):
        raise ApiError(
            422,
            "Invalid",
            f"the server rejected our request due to an error in our request: invalid path {p}",
        )
    return [s.replace("~1", "/").replace("~0", "~") for s in p[1:].split("/")]


def _missing(parts: list[str]) -> ApiError:
    path = "/" + "/".join(parts)
    return ApiError(
        422,
        "Invalid",
        f'the server rejected our request due to an error in our request: doc is missing path: "{path}": missing value',
    )


def _get(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for p in parts:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise _missing(parts)
    return cur


def _put(doc: Any, parts: list[str], value: Any, *, insert: bool) -> Any:
    if not parts:
        return value
    parent = _get(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            if insert:
                parent.insert(int(last), value)
            else:
                parent[int(last)] = value
        else:
            raise _missing(parts)
    else:
        raise _missing(parts)
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    parent = _get(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        parent.pop(int(last))
    else:
        raise _missing(parts)
    return doc


def apply_patch(target: dict[str, Any], body: bytes, content_type: str) -> dict[str, Any]:
    try:
        patch = json.loads(body or b"null")
    except ValueError as e:
        raise ApiError.bad_request(f"error decoding patch: {e}") from None
    ct = content_type.split(";")[0].strip()
    if ct == "application/json-patch+json":
        if not isinstance(patch, list):
            raise ApiError.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        result = json_patch(target, patch)
    elif ct == "application/merge-patch+json":
        result = merge_patch(target, patch)
    elif ct == "application/strategic-merge-patch+json":
        result = strategic_merge_patch(target, patch)
    elif ct == "application/apply-patch+yaml":
        result = merge_patch(target, patch)
    else:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
        )
    if not isinstance(result, dict):
        raise ApiError.bad_request("patch result is not an object")
    return result
