"""A pod's PersistentVolumeClaim volumes as the kubelet mounts them (volumemanager: the claim's
bound PersistentVolume, else `FailedMount`). Every PersistentVolume's data is one directory
under the cluster's root, whatever its source says (hostPath, csi...): shared by all nodes, it
keeps its contents across container restarts, pod deletions and nodes, as network storage does."""

from __future__ import annotations

from pathlib import Path

from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store
from .volumes import MountError

PVCS = BY_PATH[("", "persistentvolumeclaims")]
PVS = BY_PATH[("", "persistentvolumes")]


def claim_dir(store: Store, pod: Obj, vol: Obj, root: Path) -> Path:
    """The directory holding the claim's volume (created on first mount)."""
    claim = (vol.get("persistentVolumeClaim") or {}).get("claimName", "")
    ns = pod["metadata"]["namespace"]
    pvc = store.find(PVCS, ns, claim)
    if pvc is None:
        raise MountError(f'persistentvolumeclaim "{claim}" not found')
    pv_name = (pvc.get("spec") or {}).get("volumeName")
    if not pv_name or store.find(PVS, "", pv_name) is None:
        raise MountError(f'persistentvolumeclaim "{claim}" is not bound')
    d = root / "volumes" / pv_name
    d.mkdir(parents=True, exist_ok=True)
    return d
