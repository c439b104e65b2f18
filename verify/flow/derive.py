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

from verify.findings import Expectations, ExpectedEnv, ExpectedFile, Source
from verify.flow.csi import Classes, class_name, csi_files
from verify.kube.names import ENV_VAR_NAME, SHELL_NAME
from verify.kube.objects import app_containers, mapping, maps, text

Ref = tuple[str, str]  # ("configmap" | "secret", name)
Sources = Mapping[Ref, Mapping[str, Any] | None]  # the live objects read (None: not found)


def env_hmac(key: bytes, value: bytes) -> str:
    return hmac.new(key, value, hashlib.sha256).hexdigest()


def referenced_objects(*, pod_spec: Mapping[str, Any]) -> set[Ref]:
    """Every ConfigMap/Secret the template's containers and volumes name."""
    refs: set[Ref] = set()
    for v in maps(pod_spec, "volumes"):
        if "configMap" in v:
            refs.add(("configmap", text(mapping(v, "configMap"), "name")))
        if "secret" in v:
            refs.add(("secret", text(mapping(v, "secret"), "secretName")))
        for src in maps(mapping(v, "projected"), "sources"):
            if "configMap" in src:
                refs.add(("configmap", text(mapping(src, "configMap"), "name")))
            if "secret" in src:
                refs.add(("secret", text(mapping(src, "secret"), "name")))
    for c in app_containers(pod_spec):
        for ef in maps(c, "envFrom"):
            if "configMapRef" in ef:
                refs.add(("configmap", text(mapping(ef, "configMapRef"), "name")))
            if "secretRef" in ef:
                refs.add(("secret", text(mapping(ef, "secretRef"), "name")))
        for e in maps(c, "env"):
            vf = mapping(e, "valueFrom")
            if "configMapKeyRef" in vf:
                refs.add(("configmap", text(mapping(vf, "configMapKeyRef"), "name")))
            if "secretKeyRef" in vf:
                refs.add(("secret", text(mapping(vf, "secretKeyRef"), "name")))
    return {r for r in refs if r[1]}


def object_data(obj: Mapping[str, Any]) -> dict[str, bytes]:
    """Decoded key → bytes of a ConfigMap (data + binaryData) or Secret."""
    if obj.get("kind") == "Secret":
        return {k: base64.b64decode(v) for k, v in mapping(obj, "data").items()}
    out = {k: str(v).encode() for k, v in mapping(obj, "data").items()}
    out.update({k: base64.b64decode(v) for k, v in mapping(obj, "binaryData").items()})
    return out


def env_data(obj: Mapping[str, Any]) -> dict[str, bytes]:
    """What env can take from an object: a ConfigMap's `data` only (never `binaryData`)."""
    if obj.get("kind") == "Secret":
        return object_data(obj)
    return {k: str(v).encode() for k, v in mapping(obj, "data").items()}


def source_of(kind: str, obj: Mapping[str, Any]) -> Source:
    meta = mapping(obj, "metadata")
    return Source(
        kind="secret" if kind == "secret" else "configmap",
        name=text(meta, "name"),
        immutable=bool(obj.get("immutable")),
        uid=text(meta, "uid"),
        created=text(meta, "creationTimestamp"),
    )


def _env(
    container: Mapping[str, Any], sources_read: Sources, key: bytes
) -> tuple[list[str], list[ExpectedEnv], dict[str, Source]]:
    names: dict[str, None] = {}
    values: dict[str, ExpectedEnv] = {}
    sources: dict[str, Source] = {}
    for ef in maps(container, "envFrom"):
        prefix = text(ef, "prefix")
        for kind, field in (("configmap", "configMapRef"), ("secret", "secretRef")):
            if field not in ef:
                continue
            obj = sources_read.get((kind, text(mapping(ef, field), "name")))
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
    for e in maps(container, "env"):
        name = text(e, "name")
        if e.get("valueFrom") is None:
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
        vf = mapping(e, "valueFrom")
        ref = None
        for kind, field in (("configmap", "configMapKeyRef"), ("secret", "secretKeyRef")):
            if field in vf:
                ref = (kind, mapping(vf, field))
        if ref is None:  # fieldRef / resourceFieldRef: pod-specific, key only
            names[name] = None
            values.pop(name, None)
            sources.pop(name, None)
            continue
        kind, sel = ref
        obj = sources_read.get((kind, text(sel, "name")))
        data = env_data(obj) if obj is not None else {}
        key_name = text(sel, "key")
        if obj is None or key_name not in data:
            # optional and absent: the kubelet skips the entry, so an earlier envFrom value stands
            # (a required one would have stopped the container: CreateContainerConfigError)
            continue
        src = source_of(kind, obj)
        names[name] = None
        values[name] = ExpectedEnv(
            name, env_hmac(key, data[key_name]), f"{kind} {src.name}/{key_name}", kind == "secret", src
        )
        sources[name] = src
    return (
        list(names),
        [values[n] for n in names if n in values and SHELL_NAME.match(n)],
        {n: sources[n] for n in names if n in sources},
    )


def _projection(
    kind: str, src_spec: Mapping[str, Any], name: str, sources: Sources
) -> list[tuple[str, bytes, Source]]:
    obj = sources.get((kind, name))
    if obj is None:
        return []
    data = object_data(obj)
    src = source_of(kind, obj)
    selected = maps(src_spec, "items")
    if not selected:
        return [(k, v, src) for k, v in data.items()]
    return [
        (text(it, "path") or text(it, "key"), data[text(it, "key")], src)
        for it in selected
        if text(it, "key") in data
    ]


def volume_files(volume: Mapping[str, Any], sources: Sources) -> list[tuple[str, bytes, Source]]:
    """(relative path, content, source) for every key a configMap/secret/projected volume holds."""
    if "configMap" in volume:
        cm = mapping(volume, "configMap")
        return _projection("configmap", cm, text(cm, "name"), sources)
    if "secret" in volume:
        secret = mapping(volume, "secret")
        return _projection("secret", secret, text(secret, "secretName"), sources)
    out: list[tuple[str, bytes, Source]] = []
    for s in maps(mapping(volume, "projected"), "sources"):
        if "configMap" in s:
            cm = mapping(s, "configMap")
            out += _projection("configmap", cm, text(cm, "name"), sources)
        elif "secret" in s:
            secret = mapping(s, "secret")
            out += _projection("secret", secret, text(secret, "name"), sources)
    return out


def _files(container: Mapping[str, Any], pod_spec: Mapping[str, Any], sources: Sources) -> list[ExpectedFile]:
    volumes = {text(v, "name"): v for v in maps(pod_spec, "volumes")}
    out: dict[str, ExpectedFile] = {}
    for vm in maps(container, "volumeMounts"):
        vol = volumes.get(text(vm, "name"))
        if vol is None:
            continue
        if vm.get("subPathExpr"):
            continue  # expanded per pod from its env: not derivable from the template alone
        sub = text(vm, "subPath").strip("/")
        mount = text(vm, "mountPath")
        for rel, content, src in volume_files(vol, sources):
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
    objects: Sources,
    hmac_key: bytes,
    classes: Classes | None = None,
) -> dict[str, Expectations]:
    """Per container name, what the kubelet must have delivered; `objects` are the live
    ConfigMaps/Secrets the template names (None: not found) and the Secrets the `classes`
    (the live SecretProviderClasses its CSI volumes name) sync to."""
    out: dict[str, Expectations] = {}
    for c in app_containers(pod_spec):
        if containers and text(c, "name") not in containers:
            continue
        names, values, sources = _env(c, objects, hmac_key)
        out[text(c, "name")] = Expectations(
            env=tuple(names),
            files=(*_files(c, pod_spec, objects), *csi_files(c, pod_spec, classes or {}, objects)),
            env_values=tuple(values),
            env_sources=tuple(sources.items()),
            env_from=tuple(
                (kind, text(mapping(ef, field), "name"), text(ef, "prefix"))
                for ef in maps(c, "envFrom")
                for kind, field in (("configmap", "configMapRef"), ("secret", "secretRef"))
                if field in ef and (kind, text(mapping(ef, field), "name")) in objects
            ),
        )
    return out


def env_origins(*, pod_spec: Mapping[str, Any], container: str, key: str) -> list[Ref]:
    """The ConfigMaps/Secrets the container's env could have taken `key` from when it started: an
    `env` entry's valueFrom for it, else each envFrom whose prefix begins it (empty: a literal, a
    fieldRef, or no source at all: the image's or the kubelet's own)."""
    for c in app_containers(pod_spec):
        if text(c, "name") != container:
            continue
        for e in maps(c, "env"):
            if text(e, "name") == key:
                vf = mapping(e, "valueFrom")
                for kind, field in (("configmap", "configMapKeyRef"), ("secret", "secretKeyRef")):
                    if field in vf:
                        return [(kind, text(mapping(vf, field), "name"))]
                return []
        found: list[Ref] = []
        for ef in maps(c, "envFrom"):
            for kind, field in (("configmap", "configMapRef"), ("secret", "secretRef")):
                if field in ef and key.startswith(text(ef, "prefix")):
                    found.append((kind, text(mapping(ef, field), "name")))
        return found
    return []


def _secret_volume(volume: Mapping[str, Any]) -> bool:
    if "secret" in volume or class_name(volume):  # a Secrets Store CSI volume holds secrets too
        return True
    return any("secret" in s for s in maps(mapping(volume, "projected"), "sources"))


def _volume_kind(volume: Mapping[str, Any]) -> str:
    """ "secret" for any volume holding a Secret's data, "configmap" for a configMap volume or a
    projected one of configMap sources only, "other" for anything else (emptyDir, hostPath...)."""
    if _secret_volume(volume):
        return "secret"
    if "configMap" in volume:
        return "configmap"
    sources = maps(mapping(volume, "projected"), "sources")
    if sources and all("configMap" in s for s in sources):
        return "configmap"
    return "other"


def _normal(path: str) -> str:
    """A path as the kernel resolves it, lexically: normpath keeps a leading `//` (POSIX leaves
    it implementation-defined; Linux treats it as `/`)."""
    p = posixpath.normpath(path or ".")
    return "/" + p.lstrip("/") if p.startswith("/") else p


def _under(path: str, mount: str) -> bool:
    return mount != "." and (path == mount or path.startswith(mount.rstrip("/") + "/"))


def provably_configmap(resolved: str | None, mounts: Sequence[tuple[str, str]]) -> bool:
    """Whether a file whose links resolve (in the pod) to `resolved` lies in a ConfigMap volume:
    the deepest mount holding it is one, and no Secret-backed mount holds it. Unknown (None) or
    anywhere else is not proof, whatever the path the user named."""
    if not resolved:
        return False
    path = _normal(resolved)
    holding = [(m, kind) for m, kind in mounts if _under(path, m)]
    if not holding or any(kind == "secret" for _, kind in holding):
        return False
    return max(holding, key=lambda h: len(h[0]))[1] == "configmap"


def mark_secret_files(
    *, expectations: Expectations, pod_spec: Mapping[str, Any], container: str
) -> Expectations:
    """Flag expected files that live on a Secret-backed mount, however the user specified them,
    so their digests are never printed (an explicit sha256: spec would not know), and record the
    container's mounts, against which the judge checks each file's resolved path."""
    volumes = {text(v, "name"): v for v in maps(pod_spec, "volumes")}
    mounts: list[tuple[str, str]] = []
    for c in (*maps(pod_spec, "containers"), *maps(pod_spec, "initContainers")):
        if text(c, "name") != container:
            continue
        for vm in maps(c, "volumeMounts"):
            vol = volumes.get(text(vm, "name"))
            kind = "other" if vol is None else _volume_kind(vol)
            mounts.append((_normal(text(vm, "mountPath")), kind))
        break
    secret_mounts = [m for m, kind in mounts if kind == "secret"]

    def secret(path: str) -> bool:
        # `/etc//secret/pw`, `//etc/secret/pw` and `/etc/./secret/pw` are `/etc/secret/pw`
        p = _normal(path)
        return any(_under(p, m) for m in secret_mounts)

    files = tuple(dataclasses.replace(f, secret=True) if secret(f.path) else f for f in expectations.files)
    return dataclasses.replace(expectations, files=files, mounts=tuple(mounts))
