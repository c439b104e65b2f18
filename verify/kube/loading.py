"""Which kubeconfig, as kubectl decides it: client-go's loading rules
(staging/src/k8s.io/client-go/tools/clientcmd/loader.go, `ClientConfigLoadingRules`, and
`DeferredLoadingClientConfig` in merged_client_builder.go).

- `--kubeconfig` alone when given (it must exist); else every file of `$KUBECONFIG` (missing files
  skipped, duplicates once); else `~/.kube/config`.
- Merged: for clusters, users and contexts the first file to define a name wins that entry; for
  `current-context` the first file to set it wins. Relative paths in an entry are resolved against
  the directory of the file that defined it (`ResolveLocalPaths`).
- In-cluster (the mounted service account) only when none of those files yields a config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from verify.config.yamlsafe import YamlRefused, load_kubeconfig
from verify.errors import KubeConfigError
from verify.kube.names import SERVICE_ACCOUNT_NAMESPACE, SERVICE_ACCOUNT_TOKEN
from verify.redact import shown_path

# far beyond any real kubeconfig (a few KiB, a CA bundle adds hundreds): more is another file
MAX_BYTES = 16 * 1024 * 1024

# per entry kind: the fields that hold a file path (client-go's GetClusterFileReferences /
# GetAuthInfoFileReferences)
_PATH_FIELDS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


@dataclass(frozen=True)
class Chain:
    """The kubeconfig files to merge, in precedence order, and which setting named them."""

    files: tuple[str, ...]
    named_by: str  # "--kubeconfig (VERIFY_KUBECONFIG)", "KUBECONFIG" or "the default kubeconfig"
    wanted: tuple[str, ...]  # every path asked for, existing or not (for messages)


def chain(*, explicit: str | None, environ: Mapping[str, str]) -> Chain:
    if explicit:
        return Chain(
            (explicit,) if os.path.exists(explicit) else (), "--kubeconfig (VERIFY_KUBECONFIG)", (explicit,)
        )
    listed = [p for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        wanted = tuple(dict.fromkeys(_expand(p, environ) for p in listed))
        return Chain(tuple(p for p in wanted if os.path.exists(p)), "KUBECONFIG", wanted)
    home = _expand("~/.kube/config", environ)
    return Chain((home,) if os.path.exists(home) else (), "the default kubeconfig", (home,))


def _expand(path: str, environ: Mapping[str, str]) -> str:
    if path.startswith("~") and environ.get("HOME"):
        # HOME=/ (a uid without a passwd entry, as the image's 65532): /.kube/config, not //.kube
        return (environ["HOME"].rstrip("/") or "") + path[1:]
    return os.path.expanduser(path)


def in_cluster(environ: Mapping[str, str]) -> bool:
    """A pod's mounted service account, as `rest.InClusterConfig` finds it."""
    return bool(environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(SERVICE_ACCOUNT_TOKEN)


def pod_without_token(environ: Mapping[str, str]) -> bool:
    """In a pod (the kubelet sets KUBERNETES_SERVICE_HOST) that has no service account token
    mounted: `automountServiceAccountToken: false` on the pod or its ServiceAccount."""
    return bool(environ.get("KUBERNETES_SERVICE_HOST")) and not os.path.exists(SERVICE_ACCOUNT_TOKEN)


def in_cluster_namespace(environ: Mapping[str, str]) -> str:
    """POD_NAMESPACE, else the mounted namespace file, else `default` (inClusterClientConfig)."""
    if environ.get("POD_NAMESPACE"):
        return environ["POD_NAMESPACE"]
    try:
        with open(SERVICE_ACCOUNT_NAMESPACE, encoding="utf-8") as fh:
            return fh.read().strip() or "default"
    except OSError:
        return "default"


def _resolved(entry: Mapping[str, Any], kind: str, base: str) -> dict[str, Any]:
    """A cluster/user entry with its relative file paths made absolute against `base`."""
    out = dict(entry)
    body = dict(out.get(kind) or {})
    for name in _PATH_FIELDS[kind]:
        value = body.get(name)
        if isinstance(value, str) and value and not os.path.isabs(value):
            body[name] = os.path.join(base, value)
    if kind == "user" and isinstance(body.get("exec"), Mapping):
        command = body["exec"].get("command")
        # a relative command with a separator is relative to the file; a bare name is looked up in PATH
        if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
            body["exec"] = {**body["exec"], "command": os.path.join(base, command)}
    out[kind] = body
    return out


def read(path: str) -> str:
    """A kubeconfig file's text, at most MAX_BYTES of it (ValueError beyond: a wrong file)."""
    with open(path, "rb") as fh:
        raw = fh.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise ValueError(f"is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return raw.decode("utf-8")


def _document(path: str, *, named_by: str) -> Any:
    """One file's data within the kubeconfig YAML budget (aliases counted by what they expand to,
    sizes capped): a file over it is a KubeConfigError naming the file and the line, never content."""
    where = f"{named_by}: {shown_path(path)}"
    try:
        return load_kubeconfig(read(path))
    except YamlRefused as e:
        raise KubeConfigError(f"{where}:{e.line}: {e}; fix the file") from None
    except RecursionError:
        raise KubeConfigError(f"{where}: is nested too deeply; is it the right file?") from None
    except UnicodeDecodeError:
        raise KubeConfigError(f"{where}: is not UTF-8 text; is it the right file?") from None
    except ValueError as e:  # too large
        raise KubeConfigError(f"{where}: {e}; is it the right file?") from None


def merge(files: Sequence[str], *, named_by: str = "kubeconfig") -> dict[str, Any]:
    """The files merged as client-go merges them. Raises KubeConfigError for a file over the YAML
    budget, and OSError or yaml.YAMLError for one that cannot be read or parsed (the caller names
    the kind of problem, never the content)."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    merged.update({"clusters": [], "users": [], "contexts": []})
    seen: dict[str, set[str]] = {"clusters": set(), "users": set(), "contexts": set()}
    for path in files:
        doc = _document(path, named_by=named_by) or {}
        if not isinstance(doc, Mapping):
            raise yaml.YAMLError("not a mapping")
        base = os.path.dirname(os.path.abspath(path))
        for key, kind in (("clusters", "cluster"), ("users", "user"), ("contexts", "")):
            for entry in doc.get(key) or []:
                if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                    continue
                if entry["name"] in seen[key]:
                    continue  # the first file to define a name wins that entry
                seen[key].add(entry["name"])
                merged[key].append(_resolved(entry, kind, base) if kind else dict(entry))
        if not merged.get("current-context") and doc.get("current-context"):
            merged["current-context"] = doc["current-context"]
    return merged


def context_namespace(merged: Mapping[str, Any], context: str | None) -> str:
    """The namespace of the context in use (`--context`, else current-context), else `default`."""
    ctx = _named(merged, "contexts", context or str(merged.get("current-context") or ""))
    ns = (ctx.get("context") or {}).get("namespace") if ctx is not None else None
    return ns if isinstance(ns, str) and ns else "default"


def _named(merged: Mapping[str, Any], key: str, name: str) -> dict[str, Any] | None:
    for entry in merged.get(key) or []:
        if isinstance(entry, Mapping) and entry.get("name") == name:
            return dict(entry)
    return None


def selected(merged: Mapping[str, Any], context: str | None) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(cluster, user) entries of the context in use, or None when it names what is not there."""
    ctx = _named(merged, "contexts", context or str(merged.get("current-context") or ""))
    if ctx is None:
        return None
    body = ctx.get("context") or {}
    cluster = _named(merged, "clusters", str(body.get("cluster") or ""))
    user = _named(merged, "users", str(body.get("user") or ""))
    if cluster is None or user is None:
        return None
    return cluster, user
