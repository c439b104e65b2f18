"""What a Secrets Store CSI volume must show, derived from its SecretProviderClass. Pure.

The driver (kubernetes-sigs/secrets-store-csi-driver) mounts one file per object the class lists
(named by `objectAlias`, else `objectName`) and syncs the objects `secretObjects` maps into a
Kubernetes Secret. So each listed object must exist at its path, and one that is synced must
hash like the synced Secret's key (the digest is never shown: the file is Secret-backed).
Providers list their objects in `spec.parameters.objects` as YAML (`array:` of entries, each a
YAML mapping in a string: azure, the e2e provider); others (AWS, GCP, Vault) use other shapes:
their files are not derived."""

from __future__ import annotations

import base64
import hashlib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from verify.findings import ExpectedFile, Source
from verify.kube.objects import mapping, maps, text

DRIVER = "secrets-store.csi.k8s.io"
GROUP_VERSION = "secrets-store.csi.x-k8s.io/v1"
MANAGED_LABEL = "secrets-store.csi.k8s.io/managed"

Classes = Mapping[str, Mapping[str, Any] | None]  # class name -> the live class (None: absent)


@dataclass(frozen=True)
class ClassObject:
    """One object a class lists: the file it becomes and where it is synced to."""

    file: str
    object_name: str
    synced: tuple[tuple[str, str], ...] = ()  # (secret name, key) it is synced to


def class_name(volume: Mapping[str, Any]) -> str:
    """The SecretProviderClass of a secrets-store CSI volume ("" for any other volume)."""
    csi = mapping(volume, "csi")
    if text(csi, "driver") != DRIVER:
        return ""
    return text(mapping(csi, "volumeAttributes"), "secretProviderClass")


def classes_of(pod_spec: Mapping[str, Any]) -> set[str]:
    return {n for v in maps(pod_spec, "volumes") if (n := class_name(v))}


def class_objects(spc: Mapping[str, Any]) -> list[ClassObject]:
    """The objects `spc` lists, with the Secrets its `secretObjects` sync them to."""
    raw = mapping(spc, "spec", "parameters").get("objects")
    try:
        doc = yaml.safe_load(raw) if isinstance(raw, str) else None
        entries = doc.get("array") if isinstance(doc, dict) else None
        parsed = [yaml.safe_load(e) if isinstance(e, str) else e for e in entries or []]
    except yaml.YAMLError:
        return []
    synced: dict[str, list[tuple[str, str]]] = {}
    for so in maps(mapping(spc, "spec"), "secretObjects"):
        for item in maps(so, "data"):
            synced.setdefault(text(item, "objectName"), []).append(
                (text(so, "secretName").strip(), text(item, "key"))
            )
    out = []
    for e in parsed:
        if not isinstance(e, dict) or not str(e.get("objectName") or ""):
            continue
        name = str(e["objectName"])
        file = str(e.get("objectAlias") or name)
        out.append(ClassObject(file, name, tuple(synced.get(file, ()))))
    return out


def synced_secrets(spc: Mapping[str, Any]) -> set[str]:
    """The Secrets a class's `secretObjects` create."""
    return {n for so in maps(mapping(spc, "spec"), "secretObjects") if (n := text(so, "secretName").strip())}


def _secret_value(secret: Mapping[str, Any] | None, key: str) -> bytes | None:
    data = mapping(secret or {}, "data")
    return base64.b64decode(data[key]) if key in data else None


def csi_files(
    container: Mapping[str, Any],
    pod_spec: Mapping[str, Any],
    classes: Classes,
    secrets: Mapping[tuple[str, str], Mapping[str, Any] | None],
) -> list[ExpectedFile]:
    """Every file the container's secrets-store mounts must hold: presence (sha256 "") for an
    object no Secret is synced from, the synced Secret's digest for one that is."""
    volumes = {text(v, "name"): v for v in maps(pod_spec, "volumes")}
    out: list[ExpectedFile] = []
    for vm in maps(container, "volumeMounts"):
        name = class_name(volumes.get(text(vm, "name")) or {})
        spc = classes.get(name) if name else None
        if spc is None or vm.get("subPath") or vm.get("subPathExpr"):
            continue
        for obj in class_objects(spc):
            path = posixpath.join(text(vm, "mountPath"), obj.file)
            digest, origin, source = "", f"secretproviderclass {name}/{obj.object_name}", None
            for secret_name, key in obj.synced:
                secret = secrets.get(("secret", secret_name))
                value = _secret_value(secret, key)
                if secret is not None and value is not None:
                    digest = hashlib.sha256(value).hexdigest()
                    meta = mapping(secret, "metadata")
                    origin = f"secret {secret_name}/{key} (synced by secretproviderclass {name})"
                    source = Source(
                        "secret", secret_name, uid=text(meta, "uid"), created=text(meta, "creationTimestamp")
                    )
                    break
            out.append(
                ExpectedFile(
                    path=path, sha256=digest, origin=origin, secret=True, source=source, provider_class=name
                )
            )
    return out
