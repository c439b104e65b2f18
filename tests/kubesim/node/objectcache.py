"""The kubelet's ConfigMap/Secret manager, with the real immutable semantics, and what a pod
references and what an object's data decodes to."""

from __future__ import annotations

import base64
from dataclasses import dataclass

from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store

CMS = BY_PATH[("", "configmaps")]
SECRETS = BY_PATH[("", "secrets")]


# -- the ConfigMap/Secret manager (pkg/kubelet/util/manager/watch_based_manager.go) -------------


@dataclass
class CacheEntry:
    refs: int = 0
    obj: Obj | None = None
    frozen: bool = False  # immutable object seen: the reflector stopped, this copy is served forever


class ObjectCache:
    """Keyed by (kind, namespace, name) with no UID, kept alive by a refcount of pods on the node."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.entries: dict[tuple[str, str, str], CacheEntry] = {}

    def register(self, pod: Obj) -> None:
        for key in pod_object_refs(pod):
            self.entries.setdefault(key, CacheEntry()).refs += 1

    def unregister(self, pod: Obj) -> None:
        for key in pod_object_refs(pod):
            e = self.entries.get(key)
            if e is None:
                continue
            e.refs -= 1
            if e.refs <= 0:
                del self.entries[key]

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        key = (kind, namespace, name)
        e = self.entries.get(key)
        if e is not None and e.frozen:
            return e.obj
        live = self.store.find(CMS if kind == "ConfigMap" else SECRETS, namespace, name)
        if e is not None:
            e.obj = live
            if live is not None and live.get("immutable"):
                e.frozen = True
        return live


def pod_object_refs(pod: Obj) -> set[tuple[str, str, str]]:
    ns = pod["metadata"]["namespace"]
    out: set[tuple[str, str, str]] = set()
    spec = pod.get("spec") or {}
    for v in spec.get("volumes") or []:
        if "configMap" in v:
            out.add(("ConfigMap", ns, v["configMap"].get("name", "")))
        if "secret" in v:
            out.add(("Secret", ns, v["secret"].get("secretName", "")))
        for src in (v.get("projected") or {}).get("sources") or []:
            if "configMap" in src:
                out.add(("ConfigMap", ns, src["configMap"].get("name", "")))
            if "secret" in src:
                out.add(("Secret", ns, src["secret"].get("name", "")))
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for ef in c.get("envFrom") or []:
            if "configMapRef" in ef:
                out.add(("ConfigMap", ns, ef["configMapRef"].get("name", "")))
            if "secretRef" in ef:
                out.add(("Secret", ns, ef["secretRef"].get("name", "")))
        for e in c.get("env") or []:
            vf = e.get("valueFrom") or {}
            if "configMapKeyRef" in vf:
                out.add(("ConfigMap", ns, vf["configMapKeyRef"].get("name", "")))
            if "secretKeyRef" in vf:
                out.add(("Secret", ns, vf["secretKeyRef"].get("name", "")))
    return out


def object_data(obj: Obj, *, env: bool = False) -> dict[str, bytes]:
    """Decoded key → bytes of a ConfigMap (data + binaryData) or Secret (base64 data).

    Env takes only a ConfigMap's `data`, as `makeEnvironmentVariables` does."""
    if obj["kind"] == "Secret":
        return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    out = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    if env:
        return out
    out.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return out
