"""Protobuf request bodies, for the built-in kinds kubectl's typed commands send that way:
`kubectl create serviceaccount|role|rolebinding|token|deployment|configmap|secret generic|
namespace|job` (the workload tables are in protobuf_kinds.py), `kubectl auth can-i [--list]` and
`kubectl auth whoami`. Any other kind keeps the 415 a custom-resource endpoint answers (README:
bodies are JSON, YAML or these protobuf kinds); answers are always JSON, which these clients accept.

The envelope is the apiserver's (k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go):
the magic `k8s\\x00`, then a runtime.Unknown {typeMeta{apiVersion=1, kind=2}=1, raw=2,
contentEncoding=3, contentType=4} whose `raw` is the object. Field numbers are those of
k8s.io/api's generated.proto (core/v1, rbac/v1, authorization/v1, authentication/v1) and
k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto. The Go marshaller writes every non-pointer
field, empty or not; fields left at their zero value are dropped here, as JSON's omitempty
would, except pointer fields where an explicit false or 0 means something."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

from ..storage.errors import ApiError
from . import protobuf_cluster_kinds, protobuf_kinds

MAGIC = b"k8s\x00"

# message -> {field number: (JSON name, type, repeated)}; a type is "string", "int", "bool",
# "time" (meta/v1 Time), "map" (map<string, string>) or another message's name
_S, _I, _B = "string", "int", "bool"
SCHEMAS: dict[str, dict[int, tuple[str, str, bool]]] = {
    "Unknown": {1: ("typeMeta", "TypeMeta", False), 2: ("raw", "bytes", False)},
    "TypeMeta": {1: ("apiVersion", _S, False), 2: ("kind", _S, False)},
    "Time": {1: ("seconds", _I, False), 2: ("nanos", _I, False)},
    "MapEntry": {1: ("key", _S, False), 2: ("value", _S, False)},
    "BytesEntry": {1: ("key", _S, False), 2: ("value", "bytes", False)},
    "QuantityEntry": {1: ("key", _S, False), 2: ("value", "Quantity", False)},
    "Quantity": {1: ("string", _S, False)},
    "ObjectMeta": {
        1: ("name", _S, False),
        2: ("generateName", _S, False),
        3: ("namespace", _S, False),
        5: ("uid", _S, False),
        6: ("resourceVersion", _S, False),
        7: ("generation", _I, False),
        8: ("creationTimestamp", "time", False),
        11: ("labels", "map", False),
        12: ("annotations", "map", False),
        13: ("ownerReferences", "OwnerReference", True),
        14: ("finalizers", _S, True),
    },
    "OwnerReference": {
        1: ("kind", _S, False),
        3: ("name", _S, False),
        4: ("uid", _S, False),
        5: ("apiVersion", _S, False),
        6: ("controller", _B, False),
        7: ("blockOwnerDeletion", _B, False),
    },
    "ObjectReference": {
        1: ("kind", _S, False),
        2: ("namespace", _S, False),
        3: ("name", _S, False),
        4: ("uid", _S, False),
        5: ("apiVersion", _S, False),
    },
    "LocalObjectReference": {1: ("name", _S, False)},
    # core/v1
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta", False),
        2: ("secrets", "ObjectReference", True),
        3: ("imagePullSecrets", "LocalObjectReference", True),
        4: ("automountServiceAccountToken", _B, False),
    },
    # rbac/v1
    "PolicyRule": {
        1: ("verbs", _S, True),
        2: ("apiGroups", _S, True),
        3: ("resources", _S, True),
        4: ("resourceNames", _S, True),
        5: ("nonResourceURLs", _S, True),
    },
    "Role": {1: ("metadata", "ObjectMeta", False), 2: ("rules", "PolicyRule", True)},
    # ClusterRole's 3 (aggregationRule) is not read: `kubectl create clusterrole --aggregation-rule`
    "ClusterRole": {1: ("metadata", "ObjectMeta", False), 2: ("rules", "PolicyRule", True)},
    "Subject": {
        1: ("kind", _S, False),
        2: ("apiGroup", _S, False),
        3: ("name", _S, False),
        4: ("namespace", _S, False),
    },
    "RoleRef": {1: ("apiGroup", _S, False), 2: ("kind", _S, False), 3: ("name", _S, False)},
    "RoleBinding": {
        1: ("metadata", "ObjectMeta", False),
        2: ("subjects", "Subject", True),
        3: ("roleRef", "RoleRef", False),
    },
    "ClusterRoleBinding": {
        1: ("metadata", "ObjectMeta", False),
        2: ("subjects", "Subject", True),
        3: ("roleRef", "RoleRef", False),
    },
    # authorization/v1 (a request's status is the server's to fill: not read)
    "SelfSubjectAccessReview": {
        1: ("metadata", "ObjectMeta", False),
        2: ("spec", "SelfSubjectAccessReviewSpec", False),
    },
    "SelfSubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes", False),
        2: ("nonResourceAttributes", "NonResourceAttributes", False),
    },
    "ResourceAttributes": {
        1: ("namespace", _S, False),
        2: ("verb", _S, False),
        3: ("group", _S, False),
        4: ("version", _S, False),
        5: ("resource", _S, False),
        6: ("subresource", _S, False),
        7: ("name", _S, False),
        8: ("fieldSelector", "SelectorAttributes", False),
        9: ("labelSelector", "SelectorAttributes", False),
    },
    "SelectorAttributes": {1: ("rawSelector", _S, False), 2: ("requirements", "SelectorRequirement", True)},
    "SelectorRequirement": {1: ("key", _S, False), 2: ("operator", _S, False), 3: ("values", _S, True)},
    "NonResourceAttributes": {1: ("path", _S, False), 2: ("verb", _S, False)},
    "SelfSubjectRulesReview": {
        1: ("metadata", "ObjectMeta", False),
        2: ("spec", "SelfSubjectRulesReviewSpec", False),
    },
    "SelfSubjectRulesReviewSpec": {1: ("namespace", _S, False)},
    # authentication/v1
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta", False)},
    "TokenRequest": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "TokenRequestSpec", False)},
    "TokenRequestSpec": {
        1: ("audiences", _S, True),
        3: ("boundObjectRef", "BoundObjectReference", False),
        4: ("expirationSeconds", _I, False),
    },
    "BoundObjectReference": {
        1: ("kind", _S, False),
        2: ("apiVersion", _S, False),
        3: ("name", _S, False),
        4: ("uid", _S, False),
    },
}
KINDS = {
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "SelfSubjectAccessReview",
    "SelfSubjectRulesReview",
    "SelfSubjectReview",
    "TokenRequest",
}
SCHEMAS.update(protobuf_kinds.SCHEMAS)
KINDS |= protobuf_kinds.KINDS
SCHEMAS.update(protobuf_cluster_kinds.SCHEMAS)
KINDS |= protobuf_cluster_kinds.KINDS
# pointer fields: present only when the client set them, so a false or 0 is kept
_KEEP_ZERO = {
    "automountServiceAccountToken",
    "controller",
    "blockOwnerDeletion",
    "expirationSeconds",
} | protobuf_kinds.KEEP_ZERO | protobuf_cluster_kinds.KEEP_ZERO

UNSUPPORTED = ApiError(
    415,
    "UnsupportedMediaType",
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json, application/yaml",
)


def decode(raw: bytes) -> dict[str, Any]:
    """The object of a protobuf body, as its JSON form; 415 for any other kind (or a bad body)."""
    if not raw.startswith(MAGIC):
        raise UNSUPPORTED
    try:
        unknown = _message(raw[len(MAGIC) :], "Unknown")
        type_meta = unknown.get("typeMeta") or {}
        kind = type_meta.get("kind", "")
        if kind not in KINDS:
            raise UNSUPPORTED
        obj = _message(unknown.get("raw", b""), kind)
    except (IndexError, ValueError, UnicodeDecodeError):
        raise UNSUPPORTED from None
    return {"apiVersion": type_meta.get("apiVersion", ""), "kind": kind, **obj}


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) in order: an int for varints, bytes for length-delimited fields."""
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((number, value))
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise ValueError("truncated field")
            out.append((number, data[i : i + size]))
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    return out


def _message(data: bytes, name: str) -> dict[str, Any]:
    schema = SCHEMAS[name]
    out: dict[str, Any] = {}
    for number, value in _fields(data):
        if number not in schema:
            continue  # a field kubesim does not read
        key, kind, repeated = schema[number]
        decoded = _value(value, kind)
        if not key:  # an embedded struct: its fields sit beside the others in JSON
            out.update(decoded)
        elif repeated:
            out.setdefault(key, []).append(decoded)
        elif kind.startswith("map"):
            out.setdefault(key, {}).update(decoded)
        else:
            out[key] = decoded
    return {k: v for k, v in out.items() if k in _KEEP_ZERO or v not in ("", 0, False, None, {}, [])}


def _value(value: int | bytes, kind: str) -> Any:
    if kind == _I:
        assert isinstance(value, int)
        return value - (1 << 64) if value >= 1 << 63 else value
    if kind == _B:
        return bool(value)
    if not isinstance(value, bytes):
        raise ValueError(f"{kind} field is not length-delimited")
    if kind == _S:
        return value.decode()
    if kind == "bytes":
        return value
    if kind == "map":
        entry = _message(value, "MapEntry")
        return {entry.get("key", ""): entry.get("value", "")}
    if kind == "map:bytes":  # map<string, bytes>: base64 in JSON, as Secret.data shows it
        entry = _message(value, "BytesEntry")
        return {entry.get("key", ""): base64.b64encode(entry.get("value", b"")).decode()}
    if kind == "map:Quantity":  # map<string, resource.Quantity{string = 1}>
        entry = _message(value, "QuantityEntry")
        return {entry.get("key", ""): (entry.get("value") or {}).get("string", "")}
    if kind == "intstr":  # intstr.IntOrString {type = 1 (0 int, 1 string), intVal = 2, strVal = 3}
        raw = {n: v for n, v in _fields(value)}
        if raw.get(1, 0) == 1:
            strval = raw.get(3, b"")
            return strval.decode() if isinstance(strval, bytes) else ""
        return _value(raw.get(2, 0), _I)
    if kind == "time":
        seconds = _message(value, "Time").get("seconds", 0)
        if not seconds:
            return None  # the zero time: null in JSON
        return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _message(value, kind)
