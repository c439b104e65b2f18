"""The Secrets Store CSI Driver on one node, with its one provider, `azure`, backed by a vault
that tests, the demo and plain kubectl can change: the vault named by `keyvaultName` is the
Secret of that name in the namespace `kubesim-vault`, each key an object of type `secret`, the
Secret's resourceVersion every object's version.

As the driver (kubernetes-sigs/secrets-store-csi-driver, release 1.6) behaves:
- pkg/secrets-store/nodeserver.go NodePublishVolume: an inline `csi` volume of driver
  `secrets-store.csi.k8s.io` names its SecretProviderClass in `volumeAttributes`; the class is
  read at mount (a missing one fails the mount: `failed to get secretproviderclass NS/NAME,
  error: ...`), the provider writes one file per object (`objectAlias`, else `objectName`), and a
  SecretProviderClassPodStatus `POD-NS-CLASS` (owned by the pod, labelled with the node) records
  the pod, class, target path and object versions;
- controllers/secretproviderclasspodstatus_controller.go: for each `secretObjects` entry the
  Secret is created from the mounted files when it does not exist (labelled
  `secrets-store.csi.k8s.io/managed=true`) and never updated there; each pod status becomes an
  owner of it (the Secret goes when its last owner does);
- pkg/rotation/reconciler.go (`--enable-secret-rotation`, `--rotation-poll-interval`, 2 m by
  default): every interval each mounted volume is fetched again with the class as it is now,
  its files, pod status and synced Secrets updated (events SecretRotationComplete/Failed).
The kubelet's side (mount retries with back-off, FailedMount events) is in kubelet.py."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..record import Recorder, container_ref
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj
from .volumes import MountError, atomic_write

if TYPE_CHECKING:
    from .containers import PodRuntime

DRIVER = "secrets-store.csi.k8s.io"
GROUP = "secrets-store.csi.x-k8s.io"
VAULT_NAMESPACE = "kubesim-vault"
NODE_LABEL = "internal.secrets-store.csi.k8s.io/node-name"
MANAGED_LABEL = "secrets-store.csi.k8s.io/managed"
SECRETS = BY_PATH[("", "secrets")]
PODS = BY_PATH[("", "pods")]


def is_secrets_store(vol: Obj) -> bool:
    return isinstance(vol.get("csi"), dict)


def target_path(uid: str, volume: str) -> str:
    return f"/var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~csi/{volume}/mount"


def class_objects(spc: Obj) -> list[dict[str, str]]:
    """The azure provider's `parameters.objects`: a YAML `array` of YAML object entries."""
    raw = ((spc.get("spec") or {}).get("parameters") or {}).get("objects") or ""
    try:
        doc = yaml.safe_load(raw) or {}
        entries = [yaml.safe_load(e) if isinstance(e, str) else e for e in doc.get("array") or []]
    except yaml.YAMLError as e:
        raise MountError(f"failed to unmarshal objects, error: {e}") from None
    return [{k: str(v) for k, v in e.items()} for e in entries if isinstance(e, dict)]


class SecretsStore:
    """The driver's node plugin and its controllers on one node."""

    def __init__(self, kubelet: Any) -> None:  # the node's Kubelet (kubelet.py)
        self.kubelet = kubelet
        self.store = kubelet.cluster.store
        self.knobs = kubelet.cluster.knobs
        self.recorder = Recorder(self.store, "csi-secrets-store-rotation", kubelet.node)
        self.mounted: dict[tuple[str, str], tuple[PodRuntime, Obj, Path]] = {}  # (pod uid, volume)
        self._rotation: asyncio.Task[None] | None = None
        self.store.hooks.append(self._collect_garbage)

    def _kind(self, plural: str) -> Any:
        res = self.store.custom.lookup(GROUP, plural)
        if res is None:
            kind = (
                "SecretProviderClass" if plural == "secretproviderclasses" else "SecretProviderClassPodStatus"
            )
            raise MountError(f'no matches for kind "{kind}" in version "{GROUP}/v1"')
        return res

    # -- NodePublishVolume ------------------------------------------------------------
    def mount(self, rt: PodRuntime, vol: Obj, d: Path) -> None:
        """Mount `vol` into `d` now, or raise MountError with the driver's message."""
        csi = vol["csi"]
        if csi.get("driver") != DRIVER:
            raise MountError(
                f"kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name "
                f"{csi.get('driver', '')} not found in the list of registered CSI drivers"
            )
        ns, pod = rt.namespace, rt.pod
        name = (csi.get("volumeAttributes") or {}).get("secretProviderClass", "")
        if not name:
            raise MountError("rpc error: code = InvalidArgument desc = secretProviderClass is not set")
        try:
            spcs = self._kind("secretproviderclasses")
            spc = self.store.get(spcs, ns, name)
        except (ApiError, MountError) as e:
            text = e.message if isinstance(e, ApiError) else str(e)
            raise MountError(
                f"rpc error: code = Unknown desc = failed to get secretproviderclass {ns}/{name}, error: {text}"
            ) from None
        files, versions = self._fetch(spc, pod)
        atomic_write(d, files)
        self._record(rt, vol["name"], spc, versions)
        self.mounted[(rt.uid, vol["name"])] = (rt, vol, d)
        delay = self.knobs.secret_sync_delay
        if delay > 0:  # the sync controller reacts to the pod status a moment later
            asyncio.get_running_loop().call_later(delay, self._sync_secrets, rt, spc, files)
        else:
            self._sync_secrets(rt, spc, files)
        if self.knobs.secrets_store_rotation and self._rotation is None:
            self._rotation = asyncio.get_running_loop().create_task(self._rotate_loop())

    def _fetch(self, spc: Obj, pod: Obj) -> tuple[dict[str, tuple[bytes, int]], list[Obj]]:
        """The provider's Mount: the files and object versions the class names now."""
        where = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        provider = (spc.get("spec") or {}).get("provider", "")
        if provider != "azure":
            raise MountError(
                f"rpc error: code = Unknown desc = failed to mount secrets store objects for pod {where}, "
                f'err: error connecting to provider "{provider}": provider not found: provider "{provider}"'
            )
        params = (spc.get("spec") or {}).get("parameters") or {}
        vault_name = params.get("keyvaultName", "")
        vault = self.store.find(SECRETS, VAULT_NAMESPACE, vault_name) if vault_name else None
        files: dict[str, tuple[bytes, int]] = {}
        versions: list[Obj] = []
        for o in class_objects(spc):
            obj_name, obj_type = o.get("objectName", ""), o.get("objectType", "secret")
            data = (vault or {}).get("data") or {}
            if vault is None or obj_type != "secret" or obj_name not in data:
                code = "VaultNotFound" if vault is None else "SecretNotFound"
                raise MountError(
                    f"rpc error: code = Unknown desc = failed to mount secrets store objects for pod {where}, "
                    f"err: rpc error: code = Unknown desc = failed to mount objects, error: failed to get "
                    f"objectType:{obj_type}, objectName:{obj_name}, objectVersion:{o.get('objectVersion', '')}: "
                    f"RESPONSE 404: 404 Not Found, ERROR CODE: {code}"
                )
            files[o.get("objectAlias") or obj_name] = (base64.b64decode(data[obj_name]), 0o644)
            versions.append({"id": f"{obj_type}/{obj_name}", "version": vault["metadata"]["resourceVersion"]})
        return files, versions

    def _record(self, rt: PodRuntime, volume: str, spc: Obj, versions: list[Obj]) -> None:
        """The SecretProviderClassPodStatus of this mount (created or brought up to date)."""
        res = self._kind("secretproviderclasspodstatuses")
        spc_name = spc["metadata"]["name"]
        name = f"{rt.name}-{rt.namespace}-{spc_name}"
        status = {
            "podName": rt.name,
            "secretProviderClassName": spc_name,
            "mounted": True,
            "targetPath": target_path(rt.uid, volume),
            "objects": versions,
        }
        if self.store.find(res, rt.namespace, name) is None:
            owner = {"apiVersion": "v1", "kind": "Pod", "name": rt.name, "uid": rt.uid}
            body = {
                "metadata": {
                    "name": name,
                    "labels": {NODE_LABEL: self.kubelet.node},
                    "ownerReferences": [owner],
                },
                "status": status,
            }
            self.store.create(res, rt.namespace, body)
        else:
            self.store.mutate(res, rt.namespace, name, lambda o: o.__setitem__("status", status))

    # -- the secret-sync controller ------------------------------------------------------
    def _sync_secrets(
        self, rt: PodRuntime, spc: Obj, files: dict[str, tuple[bytes, int]], *, rotate: bool = False
    ) -> None:
        res = self._kind("secretproviderclasspodstatuses")
        owner_name = f"{rt.name}-{rt.namespace}-{spc['metadata']['name']}"
        owner_obj = self.store.find(res, rt.namespace, owner_name)
        for so in (spc.get("spec") or {}).get("secretObjects") or []:
            secret_name = str(so.get("secretName", "")).strip()
            data: dict[str, str] = {}
            missing = ""
            for item in so.get("data") or []:
                f = files.get(item.get("objectName", ""))
                if f is None:
                    missing = item.get("objectName", "")
                    break
                data[item.get("key", "")] = base64.b64encode(f[0]).decode()
            if missing or not secret_name:
                self._pod_event(
                    rt,
                    "Warning",
                    "FailedToCreateSecret",
                    f"failed to get data in spc {rt.namespace}/{spc['metadata']['name']} for secret "
                    f"{secret_name}, err: file matching objectName {missing} not found in the pod",
                )
                continue
            cur = self.store.find(SECRETS, rt.namespace, secret_name)
            owner = None
            if owner_obj is not None:
                owner = {
                    "apiVersion": f"{GROUP}/v1",
                    "kind": "SecretProviderClassPodStatus",
                    "name": owner_name,
                    "uid": owner_obj["metadata"]["uid"],
                }
            if cur is None:
                labels = {**(so.get("labels") or {}), MANAGED_LABEL: "true"}
                meta: Obj = {"name": secret_name, "labels": labels}
                if so.get("annotations"):
                    meta["annotations"] = dict(so["annotations"])
                if owner is not None:
                    meta["ownerReferences"] = [owner]
                body = {"metadata": meta, "type": so.get("type") or "Opaque", "data": data}
                with contextlib.suppress(ApiError):
                    self.store.create(SECRETS, rt.namespace, body)
                continue

            def patch(o: Obj, owner: Obj | None = owner, data: dict[str, str] = data) -> None:
                refs = o["metadata"].setdefault("ownerReferences", [])
                if owner is not None and all(r.get("name") != owner["name"] for r in refs):
                    refs.append(owner)
                if not refs:
                    o["metadata"].pop("ownerReferences")
                if rotate:  # only the rotation reconciler changes a synced Secret's data
                    o["data"] = {**(o.get("data") or {}), **data}

            self.store.mutate(SECRETS, rt.namespace, secret_name, patch)

    def _pod_event(self, rt: PodRuntime, type_: str, reason: str, message: str) -> None:
        self.recorder.event(container_ref(rt.pod), type_, reason, message)

    # -- rotation -----------------------------------------------------------------------
    async def _rotate_loop(self) -> None:
        while True:
            await asyncio.sleep(self.knobs.rotation_poll_interval)
            self.rotate_now()

    def rotate_now(self) -> None:
        """One pass of the rotation reconciler over every volume mounted on this node."""
        for key, (rt, vol, d) in list(self.mounted.items()):
            if rt.stopping or self.kubelet.pods.get(rt.uid) is not rt:
                self.mounted.pop(key, None)
                continue
            name = (vol["csi"].get("volumeAttributes") or {}).get("secretProviderClass", "")
            try:
                spc = self.store.get(self._kind("secretproviderclasses"), rt.namespace, name)
                files, versions = self._fetch(spc, rt.pod)
            except (ApiError, MountError) as e:
                text = e.message if isinstance(e, ApiError) else str(e)
                self._pod_event(
                    rt,
                    "Warning",
                    "SecretRotationFailed",
                    f"failed to rotate objects for pod {rt.namespace}/{rt.name}, err: {text}",
                )
                continue
            changed = atomic_write(d, files)
            self._record(rt, vol["name"], spc, versions)
            self._sync_secrets(rt, spc, files, rotate=True)
            if changed:
                self._pod_event(
                    rt,
                    "Normal",
                    "SecretRotationComplete",
                    f"successfully rotated mounted contents for spc {rt.namespace}/{name}",
                )

    def stop(self) -> None:
        if self._rotation is not None:
            self._rotation.cancel()
            self._rotation = None

    # -- garbage collection (the cluster's GC, for the driver's objects) ----------------------
    def _collect_garbage(self, ev: Any) -> None:
        """A pod's statuses go with it; a synced Secret goes with its last owning status."""
        if ev.type != "DELETED":
            return
        if ev.res is PODS and ev.obj["spec"].get("nodeName") == self.kubelet.node:
            res = self.store.custom.lookup(GROUP, "secretproviderclasspodstatuses")
            uid = ev.obj["metadata"]["uid"]
            for o in list(self.store.list(res, ev.namespace)) if res is not None else []:
                if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or []):
                    self.store.remove(res, ev.namespace, o["metadata"]["name"])
            return
        if ev.res.group == GROUP and ev.res.plural == "secretproviderclasspodstatuses":
            if (ev.obj["metadata"].get("labels") or {}).get(NODE_LABEL) != self.kubelet.node:
                return
            uid = ev.obj["metadata"]["uid"]
            for s in list(self.store.list(SECRETS, ev.namespace)):
                refs = s["metadata"].get("ownerReferences") or []
                if not any(r.get("uid") == uid for r in refs):
                    continue
                keep = [r for r in refs if r.get("uid") != uid]
                if keep:
                    self.store.mutate(SECRETS, ev.namespace, s["metadata"]["name"], _owners(keep))
                else:
                    self.store.remove(SECRETS, ev.namespace, s["metadata"]["name"])


def _owners(refs: list[Obj]) -> Any:
    def fn(o: Obj) -> None:
        o["metadata"]["ownerReferences"] = refs

    return fn
