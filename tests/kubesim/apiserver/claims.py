"""A PersistentVolumeClaim as the apiserver stores it: SetDefaults_PersistentVolumeClaimSpec
(volumeMode Filesystem), the DefaultStorageClass admission plugin (no storageClassName: the
default class, kubesim's `standard`; an empty one stays empty, for static binding), status
Pending, and the validation a claim cannot do without (ValidatePersistentVolumeClaimSpec:
access modes and a storage request)."""

from __future__ import annotations

from ..storage.errors import ApiError
from ..storage.quantity import BadQuantity, parse
from ..storage.store import Obj

DEFAULT_CLASS = "standard"


def default_claim(obj: Obj) -> None:
    name = obj.get("metadata", {}).get("name", "")
    spec = obj.setdefault("spec", {})
    if not spec.get("accessModes"):
        raise ApiError.invalid(
            "PersistentVolumeClaim",
            name,
            "spec.accessModes",
            "Required value: at least 1 access mode is required",
        )
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        raise ApiError.invalid("PersistentVolumeClaim", name, "spec.resources[storage]", "Required value")
    try:
        parse(storage)
    except BadQuantity:
        raise ApiError.invalid(
            "PersistentVolumeClaim",
            name,
            "spec.resources.requests[storage]",
            f'Invalid value: "{storage}": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ) from None
    spec.setdefault("volumeMode", "Filesystem")
    if "storageClassName" not in spec:
        spec["storageClassName"] = DEFAULT_CLASS
    obj.setdefault("status", {}).setdefault("phase", "Pending")
