"""Server-side printing of the storage kinds (kubernetes/kubernetes
pkg/printers/internalversion/printers.go printPersistentVolumeClaim, printPersistentVolume,
printStorageClass), so `kubectl get pvc|pv|sc` shows the real columns."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

# helper.GetAccessModesAsString: always in this order
_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes(modes: list[str] | None) -> str:
    return ",".join(short for name, short in _MODES if name in (modes or []))


def _col(name: str, priority: int = 0, fmt: str = "") -> Obj:
    return {"name": name, "type": "string", "format": fmt, "description": name, "priority": priority}


def _pvc_row(o: Obj, age: str) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else status.get("phase", "")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes(status.get("accessModes"))
        capacity = str((status.get("capacity") or {}).get("storage", ""))
    return [
        o["metadata"]["name"],
        phase,
        spec.get("volumeName", ""),
        capacity,
        modes,
        spec.get("storageClassName", ""),
        spec.get("volumeAttributesClassName") or "<unset>",
        age,
        spec.get("volumeMode") or "<unset>",
    ]


def _pv_row(o: Obj, age: str) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    return [
        o["metadata"]["name"],
        str((spec.get("capacity") or {}).get("storage", "")),
        access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", ""),
        "Terminating" if o["metadata"].get("deletionTimestamp") else status.get("phase", ""),
        claim,
        spec.get("storageClassName", ""),
        spec.get("volumeAttributesClassName") or "<unset>",
        status.get("reason", ""),
        age,
        spec.get("volumeMode") or "<unset>",
    ]


def _sc_row(o: Obj, age: str) -> list[Any]:
    annotations = o["metadata"].get("annotations") or {}
    default = "true" in (
        annotations.get("storageclass.kubernetes.io/is-default-class"),
        annotations.get("storageclass.beta.kubernetes.io/is-default-class"),
    )
    return [
        o["metadata"]["name"] + (" (default)" if default else ""),
        o.get("provisioner", ""),
        o.get("reclaimPolicy") or "Delete",
        o.get("volumeBindingMode") or "Immediate",
        bool(o.get("allowVolumeExpansion")),
        age,
    ]


STORAGE_COLUMNS: dict[str, tuple[list[Obj], Any]] = {
    "persistentvolumeclaims": (
        [
            _col("Name", fmt="name"),
            _col("Status"),
            _col("Volume"),
            _col("Capacity"),
            _col("Access Modes"),
            _col("StorageClass"),
            _col("VolumeAttributesClass"),
            _col("Age"),
            _col("VolumeMode", priority=1),
        ],
        _pvc_row,
    ),
    "persistentvolumes": (
        [
            _col("Name", fmt="name"),
            _col("Capacity"),
            _col("Access Modes"),
            _col("Reclaim Policy"),
            _col("Status"),
            _col("Claim"),
            _col("StorageClass"),
            _col("VolumeAttributesClass"),
            _col("Reason"),
            _col("Age"),
            _col("VolumeMode", priority=1),
        ],
        _pv_row,
    ),
    "storageclasses": (
        [
            _col("Name", fmt="name"),
            _col("Provisioner"),
            _col("ReclaimPolicy"),
            _col("VolumeBindingMode"),
            {**_col("AllowVolumeExpansion"), "type": "boolean"},
            _col("Age"),
        ],
        _sc_row,
    ),
}
