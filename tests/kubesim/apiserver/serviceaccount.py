"""The ServiceAccount admission plugin, for every pod the API stores (a client's or a controller's):
kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go (Admit, with the
BoundServiceAccountTokenVolume behaviour every current cluster has):

- a pod without `serviceAccountName` gets `default` (and the deprecated alias `serviceAccount`);
- the ServiceAccount must exist, else the create is refused with 403 Forbidden
  `pods "NAME" is forbidden: error looking up service account NS/SA: serviceaccount "SA" not found`
  (NAME is the generateName prefix when the pod has no name yet, as admission/errors.go
  extractResourceName takes it), which a controller records as its FailedCreate event;
- unless `automountServiceAccountToken` is false (the pod's, else the ServiceAccount's), a
  projected volume `kube-api-access-XXXXX` (TokenVolumeSource: a bound token for 3607 s, the
  `kube-root-ca.crt` ConfigMap's `ca.crt`, the pod's namespace) mounted read-only at
  /var/run/secrets/kubernetes.io/serviceaccount in every container and init container that has no
  mount there already.
"""

from __future__ import annotations

from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH, Resource
from ..storage.store import Obj, Store, generated_suffix

SERVICEACCOUNTS = BY_PATH[("", "serviceaccounts")]
DEFAULT = "default"
VOLUME_PREFIX = "kube-api-access-"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA = "kube-root-ca.crt"
DEFAULT_MIRROR = "kubernetes.io/config.mirror"  # a static pod's mirror
# serviceaccount.WarnOnlyBoundTokenExpirationSeconds: 1 h + 7 s, so the kubelet's refresh is seen
TOKEN_SECONDS = 3607


def token_volume(name: str) -> Obj:
    """TokenVolumeSource(), with the apiserver's defaults filled in (defaultMode 420)."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
                {"configMap": {"name": ROOT_CA, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
        },
    }


class ServiceAccountAdmission:
    """A mutating admission hook of the Store (`Store.mutating`): every object about to be created."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, res: Resource, namespace: str, obj: Obj) -> None:
        if res.kind != "Pod":
            return
        meta = obj.setdefault("metadata", {})
        if DEFAULT_MIRROR in (meta.get("annotations") or {}):
            return  # a mirror pod is never changed (the plugin only validates it)
        spec = obj.setdefault("spec", {})
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT
        spec["serviceAccountName"] = name
        spec["serviceAccount"] = name  # DeprecatedServiceAccount, as the v1 conversion fills it
        sa = self.store.find(SERVICEACCOUNTS, namespace, name)
        if sa is None:
            raise forbidden(
                meta.get("name") or meta.get("generateName") or "Unknown",
                f'error looking up service account {namespace}/{name}: serviceaccount "{name}" not found',
            )
        if _automount(spec, sa):
            _mount_token(spec)


def forbidden(name: str, why: str) -> ApiError:
    """admission.NewForbidden for a pod: errors.NewForbidden(pods, name, err)."""
    return ApiError(403, "Forbidden", f'pods "{name}" is forbidden: {why}', {"name": name, "kind": "pods"})


def _automount(spec: Obj, sa: Obj) -> bool:
    """shouldAutomount: the pod's preference wins, then the ServiceAccount's, else true."""
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if sa.get("automountServiceAccountToken") is not None:
        return bool(sa["automountServiceAccountToken"])
    return True


def _mount_token(spec: Obj) -> None:
    """mountServiceAccountToken: reuse a `kube-api-access-` volume the pod already has, mount it
    in every container lacking a mount at the path, add the volume only if one was mounted."""
    volumes: list[Any] = spec.get("volumes") or []
    existing = next((v["name"] for v in volumes if str(v.get("name", "")).startswith(VOLUME_PREFIX)), "")
    volume = existing or VOLUME_PREFIX + generated_suffix()
    needed = False
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        mounts = c.get("volumeMounts") or []
        if any(m.get("mountPath") == MOUNT_PATH for m in mounts):
            continue
        c["volumeMounts"] = [*mounts, {"name": volume, "readOnly": True, "mountPath": MOUNT_PATH}]
        needed = True
    if needed and not existing:
        spec["volumes"] = [*volumes, token_volume(volume)]
