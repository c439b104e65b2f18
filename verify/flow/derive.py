"""Expectations derived from the pod template, the way the kubelet will resolve it.

Pure: takes the template and the live ConfigMaps/Secrets it references and returns, per
container, the env keys (and HMACs of known values) and the file digests each must see.
Precedence follows the kubelet (`makeEnvironmentVariables`): envFrom in order, then `env`
entries override; keys that are not valid env names are skipped; optional refs to missing
objects or keys add nothing.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from verify.kube.names import ENV_VAR_NAME, SHELL_NAME
from verify.model import Expectations, ExpectedEnv, ExpectedFile, Source

Ref = tuple[str, str]  # ("configmap" | "secret", name)


def env_hmac(key: bytes, value: bytes) -> str:
    return hmac.new(key, value, hashlib.sha256).hexdigest()


def referenced_objects(*, pod_spec: Mapping[str, Any]) -> set[Ref]:
    """Every ConfigMap/Secret the template's containers and volumes name."""
    refs: set[Ref] = set()
    for v in pod_spec.get("volumes") or []:
        if "configMap" in v:
            refs.add(("configmap", v["configMap"].get("name", "")))
        if "secret" in v:
            refs.add(("secret", v["secret"].get("secretName", "")))
        for src in (v.get("projected") or {}).get("sources") or []:
            if "configMap" in src:
                refs.add(("configmap", src["configMap"].get("name", "")))
            if "secret" in src:
                refs.add(("secret", src["secret"].get("name", "")))
    for c in pod_spec.get("containers") or []:
        for ef in c.get("envFrom") or []:
            if "configMapRef" in ef:
                refs.add(("configmap", ef["configMapRef"].get("name", "")))
            if "secretRef" in ef:
                refs.add(("secret", ef["secretRef"].get("name", "")))
        for e in c.get("env") or []:
            vf = e.get("valueFrom") or {}
            if "configMapKeyRef" in vf:
                refs.add(("configmap", vf["configMapKeyRef"].get("name", "")))
            if "secretKeyRef" in vf:
                refs.add(("secret", vf["secretKeyRef"].get("name", "")))
    return {r for r in refs if r[1]}


def object_data(obj: Mapping[str, Any]) -> dict[str, bytes]:
    """Decoded key → bytes of a ConfigMap (data + binaryData) or Secret."""
    if obj.get("kind") == "Secret":
        return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    out = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    out.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return out


def env_data(obj: Mapping[str, Any]) -> dict[str, bytes]:
    """What env can take from an object: a ConfigMap's `data` only (never `binaryData`)."""
    if obj.get("kind") == "Secret":
        return object_data(obj)
    return {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}


def source_of(kind: str, obj: Mapping[str, Any]) -> Source:
    meta = obj.get("metadata") or {}
    return Source(
        kind="secret" if kind == "secret" else "configmap",
        name=str(meta.get("name", "")),
        immutable=bool(obj.get("immutable")),
        uid=str(meta.get("uid", "")),
        created=str(meta.get("creationTimestamp", "")),
    )


def _env(
    container: Mapping[str, Any], objects: Mapping[Ref, Mapping[str, Any] | None], key: bytes
) -> tuple[list[str], list[ExpectedEnv], dict[str, Source]]:
    names: dict[str, None] = {}
    values: dict[str, ExpectedEnv] = {}
    sources: dict[str, Source] = {}
    for ef in container.get("envFrom") or []:
        prefix = ef.get("prefix", "")
        for kind, field in (("configmap", "configMapRef"), ("secret", "secretRef")):
            if field not in ef:
                continue
            obj = objects.get((kind, ef[field].get("name", "")))
            if obj is None:
                continue  # optional and absent (a required one would have stopped the rollout)
            src = source_of(kind, obj)
            for k, v in env_data(obj).items():
                name = prefix + k
                if not ENV_VAR_NAME.match(name):
                    continue  # the kubelet skips invalid names too
                names[name] = None
                values[name] = ExpectedEnv(
                    name, env_hmac(key, v), f"{kind} {src.name}/{k}", kind == "secret", src
                )
                sources[name] = src
    for e in container.get("env") or []:
        name = e.get("name", "")
        vf = e.get("valueFrom")
        if vf is None:
            names[name] = None
            sources.pop(name, None)
            literal = str(e.get("value", ""))
            if "$(" in literal:
                values.pop(name, None)  # expanded in the pod from other vars: check the key only
            else:
                # `$$` is the escape for a literal `$`, even with nothing to expand
                values[name] = ExpectedEnv(
                    name, env_hmac(key, literal.replace("$$", "$").encode()), "the pod spec"
                )
            continue
        ref = None
        for kind, field in (("configmap", "configMapKeyRef"), ("secret", "secretKeyRef")):
            if field in vf:
                ref = (kind, vf[field])
        if ref is None:  # fieldRef / resourceFieldRef: pod-specific, key only
            names[name] = None
            values.pop(name, None)
            sources.pop(name, None)
            continue
        kind, sel = ref
        obj = objects.get((kind, sel.get("name", "")))
        data = env_data(obj) if obj is not None else {}
        if sel.get("key") not in data:
            # optional and absent: the kubelet skips the entry, so an earlier envFrom value stands
            # (a required one would have stopped the container: CreateContainerConfigError)
            continue
        src = source_of(kind, obj)  # type: ignore[arg-type]
        names[name] = None
        values[name] = ExpectedEnv(
            name, env_hmac(key, data[sel["key"]]), f"{kind} {src.name}/{sel['key']}", kind == "secret", src
        )
        sources[name] = src
    return (
        list(names),
        [values[n] for n in names if n in values and SHELL_NAME.match(n)],
        {n: sources[n] for n in names if n in sources},
    )


def _projection(
    kind: str, src_spec: Mapping[str, Any], name: str, objects: Mapping[Ref, Mapping[str, Any] | None]
) -> list[tuple[str, bytes, Source]]:
    obj = objects.get((kind, name))
    if obj is None:
        return []
    data = object_data(obj)
    src = source_of(kind, obj)
    items = src_spec.get("items")
    if not items:
        return [(k, v, src) for k, v in data.items()]
    return [(it.get("path", it["key"]), data[it["key"]], src) for it in items if it.get("key") in data]


def volume_files(
    volume: Mapping[str, Any], objects: Mapping[Ref, Mapping[str, Any] | None]
) -> list[tuple[str, bytes, Source]]:
    """(relative path, content, source) for every key a configMap/secret/projected volume holds."""
    if "configMap" in volume:
        return _projection("configmap", volume["configMap"], volume["configMap"].get("name", ""), objects)
    if "secret" in volume:
        return _projection("secret", volume["secret"], volume["secret"].get("secretName", ""), objects)
    out: list[tuple[str, bytes, Source]] = []
    for s in (volume.get("projected") or {}).get("sources") or []:
        if "configMap" in s:
            out += _projection("configmap", s["configMap"], s["configMap"].get("name", ""), objects)
        elif "secret" in s:
            out += _projection("secret", s["secret"], s["secret"].get("name", ""), objects)
    return out


def _files(
    container: Mapping[str, Any], pod_spec: Mapping[str, Any], objects: Mapping[Ref, Mapping[str, Any] | None]
) -> list[ExpectedFile]:
    volumes = {v.get("name"): v for v in pod_spec.get("volumes") or []}
    out: dict[str, ExpectedFile] = {}
    for vm in container.get("volumeMounts") or []:
        vol = volumes.get(vm.get("name"))
        if vol is None:
            continue
        if vm.get("subPathExpr"):
            continue  # expanded per pod from its env: not derivable from the template alone
        sub = (vm.get("subPath") or "").strip("/")
        mount = vm.get("mountPath", "")
        for rel, content, src in volume_files(vol, objects):
            if sub:
                if rel == sub:
                    path = mount
                elif rel.startswith(sub + "/"):
                    path = posixpath.join(mount, rel[len(sub) + 1 :])
                else:
                    continue
            else:
                path = posixpath.join(mount, rel)
            out[path] = ExpectedFile(
                path=path,
                sha256=hashlib.sha256(content).hexdigest(),
                origin=f"{src.kind} {src.name}/{rel}",
                secret=src.kind == "secret",
                source=src,
                subpath=bool(sub),
                volume=True,
            )
    return list(out.values())


def derive(
    *,
    pod_spec: Mapping[str, Any],
    containers: Sequence[str],
    objects: Mapping[Ref, Mapping[str, Any] | None],
    hmac_key: bytes,
) -> dict[str, Expectations]:
    """Per container name, what the kubelet must have delivered."""
    out: dict[str, Expectations] = {}
    for c in pod_spec.get("containers") or []:
        if containers and c.get("name") not in containers:
            continue
        names, values, sources = _env(c, objects, hmac_key)
        out[c["name"]] = Expectations(
            env=tuple(names),
            files=tuple(_files(c, pod_spec, objects)),
            env_values=tuple(values),
            env_sources=tuple(sources.items()),
        )
    return out


def _secret_volume(volume: Mapping[str, Any]) -> bool:
    if "secret" in volume:
        return True
    return any("secret" in s for s in (volume.get("projected") or {}).get("sources") or [])


def _normal(path: str) -> str:
    """A path as the kernel resolves it, lexically: normpath keeps a leading `//` (POSIX leaves
    it implementation-defined; Linux treats it as `/`)."""
    p = posixpath.normpath(path or ".")
    return "/" + p.lstrip("/") if p.startswith("/") else p


def mark_secret_files(
    *, expectations: Expectations, pod_spec: Mapping[str, Any], container: str
) -> Expectations:
    """Flag expected files that live on a Secret-backed mount, however the user specified them,
    so their digests are never printed (an explicit sha256: spec would not know)."""
    volumes = {v.get("name"): v for v in pod_spec.get("volumes") or []}
    mounts: list[str] = []
    for c in pod_spec.get("containers") or []:
        if c.get("name") != container:
            continue
        for vm in c.get("volumeMounts") or []:
            vol = volumes.get(vm.get("name"))
            if vol is not None and _secret_volume(vol):
                mounts.append(_normal(str(vm.get("mountPath", ""))))

    def secret(path: str) -> bool:
        # `/etc//secret/pw`, `//etc/secret/pw` and `/etc/./secret/pw` are `/etc/secret/pw`
        p = _normal(path)
        return any(m != "." and (p == m or p.startswith(m.rstrip("/") + "/")) for m in mounts)

    files = tuple(dataclasses.replace(f, secret=True) if secret(f.path) else f for f in expectations.files)
    return dataclasses.replace(expectations, files=files)
