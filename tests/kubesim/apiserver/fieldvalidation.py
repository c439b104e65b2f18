"""Server-side field validation (`fieldValidation=Strict|Warn|Ignore`): unknown and duplicate
fields found while decoding a body, checked against kubesim's schema table (openapi_schema.py).

As the apiserver's handlers do (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go,
update.go, patch.go, rest.go): Strict refuses the body with 400 `... strict decoding error:
unknown field "spec.foo"`; Warn (the server's default when the parameter is absent) accepts it
with one `Warning: 299 - "unknown field \"spec.foo\""` header per field; Ignore accepts it
silently. Unknown fields are dropped from what is stored, as decoding into the Go type drops them.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..storage.crds import CustomResource
from ..storage.errors import ApiError
from ..storage.resources import Resource
from .customresources import prune as custom_prune
from .decoding import json_error
from .openapi_schema import Shape, kind_def, shape

DIRECTIVES = ("Ignore", "Warn", "Strict")


class _Decoded(dict):  # type: ignore[type-arg]
    """A JSON object as decoded, remembering keys that appeared more than once."""

    dups: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> _Decoded:
    out = _Decoded()
    out.dups = []
    for k, v in pairs:
        if k in out and k not in out.dups:
            out.dups.append(k)
        out[k] = v
    return out


def loads(raw: bytes) -> Any:
    """json.loads that keeps each object's duplicated keys (read by strict_errors)."""
    return json.loads(raw, object_pairs_hook=_pairs)


def directive(request: web.Request) -> str:
    d = request.query.get("fieldValidation", "") or "Warn"
    if d not in DIRECTIVES:
        raise ApiError.bad_request(
            f'invalid field validation directive: {d}, should be one of: "Ignore", "Warn", "Strict"'
        )
    return d


def _walk(value: Any, sh: Shape, path: str, errors: list[str], prune: bool) -> None:
    join = (lambda k: f"{path}.{k}") if path else (lambda k: k)
    if isinstance(value, dict):
        for k in list(value):
            if sh.kind == "struct" and sh.definition is not None:
                prop = sh.definition.props.get(k)
                if prop is None:
                    if not sh.definition.open:
                        errors.append(f'unknown field "{join(k)}"')
                        if prune:
                            del value[k]
                    continue
                child = shape(prop.type, prop.ann)
            elif sh.kind == "map":
                child = shape(sh.elem)
            else:
                child = Shape("open")
            _walk(value[k], child, join(k), errors, prune)
        errors.extend(f'duplicate field "{join(k)}"' for k in getattr(value, "dups", ()))
    elif isinstance(value, list):
        child = shape(sh.elem) if sh.kind == "list" else Shape("open")
        for i, item in enumerate(value):
            _walk(item, child, f"{path}[{i}]", errors, prune)


def strict_errors(res: Resource, obj: Any, *, prune: bool = True) -> list[str]:
    """The strict decoding errors of `obj` as `res`'s kind, unknown fields removed (`prune`)."""
    if isinstance(res, CustomResource):  # a CRD's structural schema (customresources.py)
        return custom_prune(res, obj)
    d = kind_def(res.group, res.version, res.kind)
    errors: list[str] = []
    _walk(obj, Shape("struct", definition=d) if d else Shape("open"), "", errors, prune)
    return errors


def plain(value: Any) -> Any:
    """`value` with plain dicts (no duplicate bookkeeping)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def undecodable(res: Resource, obj: Any, text: str) -> ApiError:
    """transformDecodeError's 400: a create or update body that did not decode names the kind
    and version it claims, or summarises itself."""
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind:
        version = str(obj.get("apiVersion", "")).rpartition("/")[2]
        return ApiError.bad_request(f'{kind} in version "{version}" cannot be handled as a {res.kind}: {text}')
    summary = json.dumps(plain(obj))
    summary = summary[:30] + " ..." if len(summary) > 30 else summary
    return ApiError.bad_request(f"the object provided is unrecognized (must be of type {res.kind}): {text} ({summary})")


def validate(request: web.Request, res: Resource, obj: Any, *, decode_error: bool) -> list[str]:
    """Apply the request's directive to `obj` (pruned in place); the warnings to send. A create
    or update body with a value of the wrong type is a 400 whatever the directive (decoding.py);
    under Strict, an unknown or duplicate field is a 400 too: a create or update names the kind
    and version the body claims (transformDecodeError), a patch only the strict decoding error."""
    mode = directive(request)
    wrong = json_error(res, obj) if decode_error else None
    if wrong is not None:
        raise undecodable(res, obj, wrong)
    errors = strict_errors(res, obj)
    if not errors or mode == "Ignore":
        return []
    if mode == "Warn":
        return errors
    text = "strict decoding error: " + ", ".join(errors)
    if decode_error:
        raise undecodable(res, obj, text)
    raise ApiError.bad_request(text)


def with_warnings(response: web.Response, warnings: list[str]) -> web.Response:
    """One `Warning: 299 - "text"` header per warning, as the apiserver's warning recorder writes."""
    for w in warnings:
        response.headers.add("Warning", "299 - " + json.dumps(w))
    return response
