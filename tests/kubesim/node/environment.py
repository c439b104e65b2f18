"""A container's environment as the kubelet and the runtime make it: envFrom and env from
ConfigMaps, Secrets and the downward API, the service-link variables, `$(VAR)` expansion; then
the runtime's HOSTNAME, the image's Env and runc's HOME; and the kubelet's /etc/hosts."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..storage.store import Obj
from .images import DEFAULT_PATH
from .objectcache import object_data

if TYPE_CHECKING:
    from .containers import PodRuntime
    from .objectcache import ObjectCache

ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


class ConfigError(Exception):
    """A container cannot be created: CreateContainerConfigError with the kubelet's message."""


def resolve_env(
    cache: ObjectCache, rt: PodRuntime, c: Obj, service_env: dict[str, str] | None = None
) -> dict[str, str]:
    """`makeEnvironmentVariables` (pkg/kubelet/kubelet_pods.go): envFrom first, then env
    (overrides), `$(VAR)` expanded against the variables so far and then the service variables;
    then every service variable the container does not set itself."""
    service_env = service_env or {}
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
            env[name] = expand(e.get("value", ""), {**service_env, **env})
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
    for k, v in service_env.items():
        env.setdefault(k, v)
    return env


# -- service links (pkg/kubelet/envvars/envvars.go, kubelet_pods.go getServiceEnvVarMap) --------


def _env_name(service: str) -> str:
    return service.upper().replace("-", "_")


def service_links(services: list[Obj]) -> dict[str, str]:
    """envvars.FromServices: `<SVC>_SERVICE_HOST`, `_SERVICE_PORT`, `_SERVICE_PORT_<NAME>` per named
    port, then the Docker-link `<SVC>_PORT`, `_PORT_<n>_<PROTO>`, `…_PROTO`, `…_PORT`, `…_ADDR`."""
    out: dict[str, str] = {}
    for svc in services:
        spec = svc.get("spec") or {}
        ip, ports = spec.get("clusterIP") or "", spec.get("ports") or []
        if ip in ("", "None") or not ports:
            continue
        prefix = _env_name(svc["metadata"]["name"])
        out[prefix + "_SERVICE_HOST"] = ip
        out[prefix + "_SERVICE_PORT"] = str(ports[0]["port"])
        for p in ports:
            if p.get("name"):
                out[prefix + "_SERVICE_PORT_" + _env_name(p["name"])] = str(p["port"])
        for i, p in enumerate(ports):
            proto = str(p.get("protocol") or "TCP")
            url = f"{proto.lower()}://{ip}:{p['port']}"
            if i == 0:
                out[prefix + "_PORT"] = url
            pp = f"{prefix}_PORT_{p['port']}_{proto.upper()}"
            out[pp] = url
            out[pp + "_PROTO"] = proto.lower()
            out[pp + "_PORT"] = str(p["port"])
            out[pp + "_ADDR"] = ip
    return out


def service_env(services: list[Obj], namespace: str, enable_links: bool) -> dict[str, str]:
    """getServiceEnvVarMap: the `kubernetes` Service of `default` always; with enableServiceLinks
    (default true), every Service of the pod's namespace (one of that namespace named `kubernetes`
    wins), those with a ClusterIP only. The kubelet reads them from its informer when it starts
    the container, so a Service created later reaches the container only at its next start.
    (Go's map order is random: here they go by name.)"""
    chosen: dict[str, Obj] = {}
    for svc in services:
        meta = svc["metadata"]
        ip = (svc.get("spec") or {}).get("clusterIP") or ""
        if ip in ("", "None"):
            continue
        if meta.get("namespace") == "default" and meta["name"] == "kubernetes":
            chosen.setdefault(meta["name"], svc)
        elif meta.get("namespace") == namespace and enable_links:
            chosen[meta["name"]] = svc
    return service_links([chosen[k] for k in sorted(chosen)])


def process_env(
    image_env: tuple[tuple[str, str], ...], hostname: str, kubelet_env: dict[str, str], home: str
) -> dict[str, str]:
    """The process's environment as containerd builds the spec (internal/cri/server/
    container_create_linux.go): the default PATH, `HOSTNAME`, the image's Env, then the kubelet's
    variables (a later one replaces an earlier in place); runc adds `HOME` when none is set."""
    env = {"PATH": DEFAULT_PATH, "HOSTNAME": hostname}
    env.update(image_env)
    env.update(kubelet_env)
    env.setdefault("HOME", home)
    return env


def pod_hostname(pod: Obj) -> tuple[str, str]:
    """(hostname, domain) as the kubelet's GeneratePodHostNameAndDomain makes them: spec.hostname
    or the pod's name (at most 63 characters); with spec.subdomain, `SUB.NS.svc.cluster.local`."""
    spec = pod.get("spec") or {}
    name = (spec.get("hostname") or pod["metadata"]["name"])[:63].rstrip("-.")
    sub = spec.get("subdomain") or ""
    domain = f"{sub}.{pod['metadata'].get('namespace', 'default')}.svc.cluster.local" if sub else ""
    return name, domain


def hosts_file(pod: Obj, ips: list[str]) -> str:
    """The kubelet's managed /etc/hosts (kubelet_pods.go managedHostsFileContent)."""
    name, domain = pod_hostname(pod)
    lines = [
        "# Kubernetes-managed hosts file.",
        "127.0.0.1\tlocalhost",
        "::1\tlocalhost ip6-localhost ip6-loopback",
        "fe00::0\tip6-localnet",
        "fe00::0\tip6-mcastprefix",
        "fe00::1\tip6-allnodes",
        "fe00::2\tip6-allrouters",
    ]
    for ip in ips:
        lines.append(f"{ip}\t{name}.{domain}\t{name}" if domain else f"{ip}\t{name}")
    aliases = (pod.get("spec") or {}).get("hostAliases") or []
    if aliases:
        lines += ["", "# Entries added by HostAliases."]
        for a in aliases:
            lines += [f"{a.get('ip', '')}\t{h}" for h in a.get("hostnames") or []]
    return "\n".join(lines) + "\n"


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
