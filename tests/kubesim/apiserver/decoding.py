"""Decoding a body into the kind's Go type: a value of the wrong type is refused, as the apiserver
refuses what does not decode (kubesim's schema table, openapi_schema.py, stands for the Go types;
a kind or a field it does not describe decodes whatever it holds).

Two decoders, two texts:
- JSON (create, update, and the JSON and merge patches' patched document): sigs.k8s.io/json's
  copy of encoding/json, whose first `UnmarshalTypeError` reads `json: cannot unmarshal string
  into Go struct field DeploymentSpec.spec.replicas of type int32` (internal/golang/encoding/json
  decode.go: the innermost struct, the struct fields' JSON names from the root, list indices and
  map keys not among them, the Go type of the field).
- the unstructured converter (a strategic merge patch's patched map): apimachinery
  pkg/runtime/converter.go fromUnstructured, `unrecognized type: int32`, `cannot convert int64 to
  string`, `cannot restore struct from: string`.

How each is answered (staging/src/k8s.io/apiserver/pkg/endpoints/handlers): a create or update
body that does not decode is a 400 (create.go/update.go transformDecodeError, fieldvalidation.py
words it); a patch whose result does not decode is a 422 on the field `patch`, the value shown
being the patched JSON (patch.go jsonPatcher.applyPatchToCurrentObject) or the patch map as Go's
`%+v` prints it (applyPatchToObject), with no kind and no name, so kubectl prints `The request is
invalid: patch: Invalid value: ...`."""

from __future__ import annotations

import json
from typing import Any

from ..storage.crds import CustomResource
from ..storage.errors import ApiError
from ..storage.resources import Resource
from .openapi_schema import SCALARS, SPECIAL, Shape, kind_def, shape

_GO_SCALAR = {
    "string": "string",
    "integer": "int32",
    "int32": "int32",
    "int64": "int64",
    "boolean": "bool",
    "number": "float64",
}
_INT_RANGE = {"int32": 1 << 31, "int64": 1 << 63}


def _go_type(token: str) -> str:
    """The Go type a table token stands for, as reflect.Type.String() prints it."""
    if token.startswith("[]"):
        return "[]" + _go_type(token[2:])
    if token.startswith("{}"):
        return "map[string]" + _go_type(token[2:])
    if token in _GO_SCALAR:
        return _GO_SCALAR[token]
    if token == "IntOrString":
        return "intstr.IntOrString"
    if token == "Quantity":
        return "resource.Quantity"
    if token == "Time":
        return "v1.Time"
    if token == "object":
        return "interface {}"
    return "v1." + token.partition(".")[2]


def _json_kind(value: Any) -> str:
    """UnmarshalTypeError.Value: what the JSON held."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


class _Found(Exception):
    def __init__(self, text: str) -> None:
        self.text = text


def _scalar_json(value: Any, token: str, where: tuple[str, tuple[str, ...]]) -> None:
    struct, fields = where

    def fail(shown: str) -> None:
        head = f"json: cannot unmarshal {shown} into Go "
        if struct or fields:
            raise _Found(f"{head}struct field {struct}.{'.'.join(fields)} of type {_go_type(token)}")
        raise _Found(f"{head}value of type {_go_type(token)}")

    go = _GO_SCALAR.get(token)
    if value is None or go is None:
        if token == "IntOrString" and value is not None and not isinstance(value, str | int):
            # its UnmarshalJSON decodes anything but a string into its int32 (intstr.go)
            raise _Found(f"json: cannot unmarshal {_json_kind(value)} into Go value of type int32")
        return
    if go == "string" and not isinstance(value, str):
        fail(_json_kind(value))
    if go == "bool" and not isinstance(value, bool):
        fail(_json_kind(value))
    if go in ("int32", "int64", "float64") and (isinstance(value, bool) or not isinstance(value, int | float)):
        fail(_json_kind(value))
    if go in _INT_RANGE and (isinstance(value, float) or not -_INT_RANGE[go] <= value < _INT_RANGE[go]):
        fail(f"number {json.dumps(value)}")


def _walk_json(value: Any, sh: Shape, token: str, struct: str, fields: tuple[str, ...]) -> None:
    if value is None or sh.kind == "open":
        return
    if sh.kind == "scalar":
        _scalar_json(value, token, (struct, fields))
        return
    expected = dict if sh.kind in ("struct", "map") else list
    if not isinstance(value, expected):
        shown = _json_kind(value)
        raise _Found(f"json: cannot unmarshal {shown} into Go struct field {struct}.{'.'.join(fields)} of type {_go_type(token)}")
    if sh.kind == "list":
        for item in value:
            _walk_json(item, shape(sh.elem), sh.elem, struct, fields)
    elif sh.kind == "map":
        for item in value.values():
            _walk_json(item, shape(sh.elem), sh.elem, struct, fields)
    elif sh.definition is not None:
        name = sh.definition.short.partition(".")[2]
        for k, v in value.items():
            prop = sh.definition.props.get(k)
            if prop is not None:
                _walk_json(v, shape(prop.type, prop.ann), prop.type, name, (*fields, k))


def _root(res: Resource) -> tuple[Shape, str] | None:
    if isinstance(res, CustomResource):
        return None  # a CRD's structural schema judges its objects (customresources.py)
    d = kind_def(res.group, res.version, res.kind)
    return (Shape("struct", definition=d), d.short) if d else None


def json_error(res: Resource, obj: Any) -> str | None:
    """The first type error encoding/json meets decoding `obj` into `res`'s kind, or None."""
    root = _root(res)
    if root is None or not isinstance(obj, dict):
        return None
    try:
        _walk_json(obj, root[0], root[1], "", ())
    except _Found as e:
        return e.text
    return None


# -- the typed round trip --------------------------------------------------------------------
# slices without `omitempty` (the rest of the tables' maps and slices have it)
NOT_OMITTED = {("core.PodSpec", "containers"), ("rbac.Role", "rules"), ("rbac.ClusterRole", "rules")}


def _typed(value: Any, sh: Shape) -> Any:
    if sh.kind == "list" and isinstance(value, list):
        return [_typed(v, shape(sh.elem)) for v in value]
    if sh.kind == "map" and isinstance(value, dict):
        return {k: _typed(v, shape(sh.elem)) for k, v in value.items()}
    if sh.kind != "struct" or sh.definition is None or not isinstance(value, dict):
        return value
    out = {}
    for k, v in value.items():
        prop = sh.definition.props.get(k)
        if prop is None:
            out[k] = v
            continue
        if v is None:
            continue  # a null decodes to the zero value, which omitempty (or a nil pointer) drops
        empty = v in ({}, []) and prop.type[:2] in ("{}", "[]")
        if empty and (sh.definition.short, k) not in NOT_OMITTED:
            continue  # an empty map or slice with omitempty is not encoded
        out[k] = _typed(v, shape(prop.type, prop.ann))
    return out


def typed(res: Resource, obj: Any) -> Any:
    """`obj` as storing the decoded Go object encodes it: nulls and empty maps and lists (`data:
    {}`, `annotations: {}`) gone, structs kept (`resources: {}`). Custom resources are stored as
    sent."""
    root = _root(res)
    return obj if root is None else _typed(obj, root[0])


# -- the unstructured converter (a strategic merge patch) -----------------------------------
_KIND_OF = {bool: "bool", int: "int64", float: "float64", str: "string", dict: "map", list: "slice"}


def _go_kind(token: str) -> str:
    """reflect.Kind of the field's type (a pointer dereferenced): int32, string, struct, ..."""
    if token.startswith("[]"):
        return "slice"
    if token.startswith("{}"):
        return "map"
    return _GO_SCALAR.get(token, "struct")


def _walk_unstructured(value: Any, sh: Shape, token: str) -> None:
    if value is None or sh.kind == "open" or token in SPECIAL:
        return
    st = _KIND_OF.get(type(value), "map")
    dt = _go_kind(token)
    if sh.kind == "scalar" and token in SCALARS:
        if st == dt or (st in ("int64",) and dt in ("int32", "int64", "float64")):
            return
        if st == "float64" and dt in ("int32", "int64") and float(value).is_integer():
            return
        if (st, dt) in (("int64", "string"), ("float64", "int32"), ("float64", "int64")):
            raise _Found(f"cannot convert {st} to {dt}")
        raise _Found(f"unrecognized type: {dt}")
    if sh.kind == "list":
        if st != "slice":
            raise _Found(f"cannot restore slice from {st}")
        for item in value:
            _walk_unstructured(item, shape(sh.elem), sh.elem)
    elif sh.kind == "map":
        if st != "map":
            raise _Found(f"cannot restore map from {st}")
        for item in value.values():
            _walk_unstructured(item, shape(sh.elem), sh.elem)
    elif sh.definition is not None:
        if st != "map":
            raise _Found(f"cannot restore struct from: {st}")
        for k, v in value.items():
            prop = sh.definition.props.get(k)
            if prop is not None:
                _walk_unstructured(v, shape(prop.type, prop.ann), prop.type)


def unstructured_error(res: Resource, obj: Any) -> str | None:
    """The first error DefaultUnstructuredConverter.FromUnstructured meets, or None."""
    root = _root(res)
    if root is None or not isinstance(obj, dict):
        return None
    try:
        _walk_unstructured(obj, root[0], root[1])
    except _Found as e:
        return e.text
    return None


def go_value(value: Any) -> str:
    """fmt's `%+v` of a decoded JSON value: `map[spec:map[replicas:two]]`, keys sorted."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def go_json(value: Any) -> str:
    """json.Marshal of a map (what a merge or JSON patch leaves): keys sorted, HTML-escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def patch_invalid(shown: str, error: str) -> ApiError:
    """NewInvalid(schema.GroupKind{}, "", field.Invalid(field.NewPath("patch"), shown, error))."""
    body = f"Invalid value: {json.dumps(shown, ensure_ascii=False)}: {error}"
    return ApiError(
        422,
        "Invalid",
        f' "" is invalid: patch: {body}',
        {"causes": [{"reason": "FieldValueInvalid", "message": body, "field": "patch"}]},
    )


def check_patched(res: Resource, patched: Any, patch: Any, strategic: bool) -> None:
    """Raise the 422 for a patch whose result does not decode into `res`'s kind."""
    if strategic:
        error = unstructured_error(res, patched)
        if error is not None:
            raise patch_invalid(go_value(patch), error)
        return
    error = json_error(res, patched)
    if error is not None:
        raise patch_invalid(go_json(patched), error)
