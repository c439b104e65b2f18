"""A container's environment as the kubelet makes it: envFrom and env from ConfigMaps, Secrets
and the downward API, and Kubernetes `$(VAR)` expansion."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..storage.store import Obj
from .objectcache import object_data

if TYPE_CHECKING:
    from .containers import PodRuntime
    from .objectcache import ObjectCache

ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


class ConfigError(Exception):
    """A container cannot be created: CreateContainerConfigError with the kubelet's message."""


def resolve_env(cache: ObjectCache, rt: PodRuntime, c: Obj) -> dict[str, str]:
    """`makeEnvironmentVariables`: envFrom first, then env (overrides), `$(VAR)` expansion."""
    ns = rt.namespace
    env: dict[str, str] = {}
    for ef in c.get("envFrom") or []:
        prefix = ef.get("prefix", "")
        for kind, ref_key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if ref_key not in ef:
                continue
            ref = ef[ref_key]
            obj = cache.get(kind, ns, ref.get("name", ""))
            if obj is None:
                if ref.get("optional"):
                    continue
                raise ConfigError(f'{kind.lower()} "{ref.get("name", "")}" not found')
            for k, v in object_data(obj, env=True).items():
                if ENV_NAME.match(prefix + k):
                    env[prefix + k] = v.decode(errors="replace")
    for e in c.get("env") or []:
        name = e["name"]
        if "valueFrom" not in e:
            env[name] = expand(e.get("value", ""), env)
            continue
        vf = e["valueFrom"]
        if "fieldRef" in vf:
            env[name] = field_value(rt.pod, vf["fieldRef"].get("fieldPath", ""))
            continue
        if "resourceFieldRef" in vf:
            env[name] = "0"
            continue
        for kind, ref_key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            if ref_key not in vf:
                continue
            ref = vf[ref_key]
            obj = cache.get(kind, ns, ref.get("name", ""))
            if obj is None:
                if ref.get("optional"):
                    break
                raise ConfigError(f'{kind.lower()} "{ref.get("name", "")}" not found')
            data = object_data(obj, env=True)
            if ref.get("key") not in data:
                if ref.get("optional"):
                    break
                raise ConfigError(f"couldn't find key {ref.get('key')} in {kind} {ns}/{ref.get('name')}")
            env[name] = data[ref["key"]].decode(errors="replace")
    return env


def expand(s: str, env: dict[str, str]) -> str:
    """Kubernetes `$(VAR)` expansion; `$$` escapes, unknown references stay as written."""
    out = []
    i = 0
    while i < len(s):
        if s.startswith("$$", i):
            out.append("$")
            i += 2
        elif s.startswith("$(", i):
            j = s.find(")", i + 2)
            if j == -1:
                out.append(s[i:])
                break
            name = s[i + 2 : j]
            out.append(env[name] if name in env else s[i : j + 1])
            i = j + 1
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def field_value(pod: Obj, path: str) -> str:
    meta, spec, st = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return (meta.get(m.group(1)) or {}).get(m.group(2), "")
    return {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.podIP": st.get("podIP", ""),
        "status.hostIP": st.get("hostIP", ""),
    }.get(path, "")
