"""The PersistentVolume controller and kubesim's provisioner (kubernetes/kubernetes
pkg/controller/volume/persistentvolume/pv_controller.go syncUnboundClaim, bindVolumeToClaim,
provisionClaim; sig-storage-lib-external-provisioner for the provisioner's events): a claim
binds to an Available volume that fits it, or its class's provisioner makes one (`pvc-<uid>`),
and the claim goes Pending -> Bound with the volume's capacity and access modes. The default
class `standard` (`kubesim.local/hostpath`, Immediate binding, reclaimPolicy Delete) stands
for minikube's hostpath provisioner; a volume's data lives under the cluster's root, shared by
all nodes (the kubelet mounts it, node/claims.py). A deleted claim's volume is deleted (Delete)
or Released (Retain).

A class with volumeBindingMode WaitForFirstConsumer provisions only once the scheduler has
written the first consumer's node on the claim (volume.kubernetes.io/selected-node).

Not emulated: the pvc/pv-protection finalizers, expansion, selectors, node affinity of volumes."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from ..record import Recorder, object_ref
from ..storage.quantity import BadQuantity, parse
from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store

if TYPE_CHECKING:
    from ..cluster import Cluster

PVCS = BY_PATH[("", "persistentvolumeclaims")]
PVS = BY_PATH[("", "persistentvolumes")]
CLASSES = BY_PATH[("storage.k8s.io", "storageclasses")]
PROVISIONER = "kubesim.local/hostpath"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
DEFAULT_CLASS = "standard"
PROVISIONER_ANNOTATIONS = (
    "volume.beta.kubernetes.io/storage-provisioner",
    "volume.kubernetes.io/storage-provisioner",
)


def install_default_class(store: Store) -> None:
    store.create(
        CLASSES,
        "",
        {
            "metadata": {
                "name": DEFAULT_CLASS,
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": PROVISIONER,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate",
        },
    )


def _size(q: object) -> float:
    try:
        return float(parse(q))
    except BadQuantity:
        return 0.0


def _fits(pv: Obj, pvc: Obj) -> bool:
    """findBestMatchForClaim: the same class, enough capacity, every asked access mode."""
    spec, want = pv.get("spec") or {}, pvc.get("spec") or {}
    if (pv.get("status") or {}).get("phase", "Available") != "Available" or spec.get("claimRef"):
        return False
    if (spec.get("storageClassName") or "") != (want.get("storageClassName") or ""):
        return False
    asked = ((want.get("resources") or {}).get("requests") or {}).get("storage", 0)
    if _size((spec.get("capacity") or {}).get("storage", 0)) < _size(asked):
        return False
    return set(want.get("accessModes") or []) <= set(spec.get("accessModes") or [])


class VolumeBinder:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.events = Recorder(self.store, "persistentvolume-controller")
        self.provisioner_events = Recorder(self.store, f"{PROVISIONER}_kubesim")

    def _event(self, pvc: Obj, type_: str, reason: str, message: str, *, provisioner: bool = False) -> None:
        ref = object_ref(pvc, kind="PersistentVolumeClaim", api_version="v1")
        (self.provisioner_events if provisioner else self.events).event(ref, type_, reason, message)

    def reconcile(self, ns: str, name: str) -> None:
        pvc = self.store.find(PVCS, ns, name)
        if pvc is None or pvc["metadata"].get("deletionTimestamp"):
            return
        spec = pvc.get("spec") or {}
        if spec.get("volumeName"):
            return
        pv = next((v for v in self.store.list(PVS) if _fits(v, pvc)), None)
        cls = self.store.find(CLASSES, "", spec.get("storageClassName") or "")
        waits = cls is not None and cls.get("volumeBindingMode") == "WaitForFirstConsumer"
        if pv is None and waits and SELECTED_NODE not in (pvc["metadata"].get("annotations") or {}):
            self._event(
                pvc,
                "Normal",
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding",
            )
            return
        if pv is None:
            pv = self._provision(pvc)
        if pv is not None:
            self._bind(pv, pvc)

    def _provision(self, pvc: Obj) -> Obj | None:
        spec = pvc.get("spec") or {}
        class_name = spec.get("storageClassName") or ""
        if not class_name:
            self._event(
                pvc,
                "Normal",
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set",
            )
            return None
        cls = self.store.find(CLASSES, "", class_name)
        if cls is None:
            self._event(
                pvc, "Warning", "ProvisioningFailed", f'storageclass.storage.k8s.io "{class_name}" not found'
            )
            return None
        provisioner = cls.get("provisioner", "")
        ns, name = pvc["metadata"]["namespace"], pvc["metadata"]["name"]

        def annotate(p: Obj) -> None:
            ann = p["metadata"].setdefault("annotations", {})
            for key in PROVISIONER_ANNOTATIONS:
                ann[key] = provisioner

        pvc = self.store.mutate(PVCS, ns, name, annotate) or pvc
        self._event(
            pvc,
            "Normal",
            "ExternalProvisioning",
            f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually "
            "by the system administrator. If volume creation is delayed, please verify that the volume has been created.",
        )
        if provisioner != PROVISIONER:
            return None  # nobody here runs that provisioner: the claim stays Pending
        self._event(
            pvc,
            "Normal",
            "Provisioning",
            f'External provisioner is provisioning volume for claim "{ns}/{name}"',
            provisioner=True,
        )
        pv_name = f"pvc-{pvc['metadata']['uid']}"
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        pv = self.store.create(
            PVS,
            "",
            {
                "metadata": {
                    "name": pv_name,
                    "annotations": {"pv.kubernetes.io/provisioned-by": provisioner},
                },
                "spec": {
                    "capacity": {"storage": storage},
                    "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
                    "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy") or "Delete",
                    "storageClassName": class_name,
                    "volumeMode": spec.get("volumeMode") or "Filesystem",
                    "hostPath": {"path": f"/tmp/hostpath-provisioner/{ns}/{name}", "type": ""},
                },
                "status": {"phase": "Pending"},
            },
        )
        self._event(
            pvc,
            "Normal",
            "ProvisioningSucceeded",
            f"Successfully provisioned volume {pv_name}",
            provisioner=True,
        )
        return pv

    def _bind(self, pv: Obj, pvc: Obj) -> None:
        """bindVolumeToClaim, then bindClaimToVolume, then both statuses Bound."""
        meta = pvc["metadata"]
        ref = {
            "kind": "PersistentVolumeClaim",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta["uid"],
            "apiVersion": "v1",
            "resourceVersion": meta["resourceVersion"],
        }
        pv_name = pv["metadata"]["name"]
        self.store.mutate(PVS, "", pv_name, lambda v: v["spec"].update(claimRef=ref))
        self.store.mutate(PVS, "", pv_name, lambda v: v.update(status={"phase": "Bound"}), status=True)

        def claim(p: Obj) -> None:
            p["spec"]["volumeName"] = pv_name
            ann = p["metadata"].setdefault("annotations", {})
            ann["pv.kubernetes.io/bind-completed"] = "yes"
            ann["pv.kubernetes.io/bound-by-controller"] = "yes"

        self.store.mutate(PVCS, meta["namespace"], meta["name"], claim)
        status = {
            "phase": "Bound",
            "accessModes": list(pv["spec"].get("accessModes") or []),
            "capacity": dict(pv["spec"].get("capacity") or {}),
        }
        self.store.mutate(
            PVCS, meta["namespace"], meta["name"], lambda p: p.update(status=status), status=True
        )

    def released(self, pvc: Obj) -> None:
        """A deleted claim's volume: deleted with its data (Delete) or Released (Retain)."""
        uid = pvc["metadata"].get("uid")
        for pv in self.store.list(PVS):
            if ((pv.get("spec") or {}).get("claimRef") or {}).get("uid") != uid:
                continue
            name = pv["metadata"]["name"]
            if pv["spec"].get("persistentVolumeReclaimPolicy", "Retain") == "Delete":
                self.store.remove(PVS, "", name)
                shutil.rmtree(self.cluster.root / "volumes" / name, ignore_errors=True)
            else:
                self.store.mutate(
                    PVS, "", name, lambda v: v.update(status={"phase": "Released"}), status=True
                )
