"""Which kubeconfig, as kubectl decides it: client-go's loading rules
(staging/src/k8s.io/client-go/tools/clientcmd/loader.go, `ClientConfigLoadingRules`, and
`DeferredLoadingClientConfig` in merged_client_builder.go).

- `--kubeconfig` alone when given (it must exist); else every file of `$KUBECONFIG` (missing files
  skipped, duplicates once); else `~/.kube/config`.
- Merged: for clusters, users and contexts the first file to define a name wins that entry; for
  `current-context` the first file to set it wins. Relative paths in an entry are resolved against
  the directory of the file that defined it (`ResolveLocalPaths`).
- In-cluster (the mounted service account) only when none of those files yields a config.

The first step of the connection path (kube.connection): `select` gives the context's cluster and
user entries, read with the official Python client's words for a broken file
(kubernetes/config/kube_config.py `KubeConfigLoader.set_active_context`, `ConfigNode`); kube.endpoint
reads the cluster, kube.credentials the user, kube.transport connects.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from verify.config.yamlsafe import YamlRefused, load_kubeconfig
from verify.errors import KubeConfigError
from verify.kube import tempfiles
from verify.kube.names import SERVICE_ACCOUNT_NAMESPACE, SERVICE_ACCOUNT_TOKEN
from verify.redact import looks_like_content, one_line, shown_path

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
    return _merged(files, named_by=named_by)[0]


def _merged(files: Sequence[str], *, named_by: str) -> tuple[dict[str, Any], dict[str, str]]:
    """`merge`, and which file defined each user entry (said when the cluster refuses its credential)."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    merged.update({"clusters": [], "users": [], "contexts": []})
    seen: dict[str, set[str]] = {"clusters": set(), "users": set(), "contexts": set()}
    user_files: dict[str, str] = {}
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
                if key == "users":
                    user_files[entry["name"]] = path
        if not merged.get("current-context") and doc.get("current-context"):
            merged["current-context"] = doc["current-context"]
    return merged, user_files


@dataclass(frozen=True)
class Selection:
    """The cluster and user entries of the context in use (or the pod's ServiceAccount), and where
    they came from: what every later step of the connection path reads."""

    cluster: Mapping[str, Any]  # the cluster entry's body ({} in-cluster)
    user: Mapping[str, Any] | None  # the user entry's body (None: the context names none, or in-cluster)
    user_name: str
    user_file: str  # the kubeconfig file that defined the user entry
    namespace: str
    context: str  # the context's name ("" in-cluster)
    in_cluster: bool = False
    # for an https server: the CA and client certificate files (a `*-data` field decoded into a
    # private temp file), as the official loader reads them
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None


class KubeconfigInvalid(ValueError):
    """What the official loader raises as ConfigException, with its words (kube.connection shows
    them as a KubeConfigError)."""


def select(*, explicit: str | None, context: str | None, environ: Mapping[str, str]) -> Selection:
    """The kubeconfig chain merged and its context resolved, else the mounted service account, else
    the KubeConfigError that says what to give. A context or cluster that is not there, or a
    malformed entry, is KubeconfigInvalid with the official loader's words."""
    files = chain(explicit=explicit, environ=environ)
    if files.files:
        merged, user_files = _merged(files.files, named_by=files.named_by)
        return select_context(merged, context=context, user_files=user_files)
    if explicit is None and context is None and in_cluster(environ):
        return Selection(
            cluster={},
            user=None,
            user_name="",
            user_file="",
            namespace=in_cluster_namespace(environ),
            context="",
            in_cluster=True,
        )
    path = files.wanted[0]
    hint = (
        "it holds content, not a path: give the content in VERIFY_KUBECONFIG_DATA"
        if looks_like_content(path)
        else "check the path you passed, or give the content in VERIFY_KUBECONFIG_DATA"
        if explicit is not None  # it was passed: do not tell them to pass it
        else "pass --kubeconfig (VERIFY_KUBECONFIG), set KUBECONFIG, or give the "
        "content in VERIFY_KUBECONFIG_DATA"
    )
    what = (
        f"file {shown_path(path)} does not exist"
        if len(files.wanted) == 1
        else f"none of its {len(files.wanted)} files exists"
    )
    if explicit is None and context is None and pod_without_token(environ):
        hint += (
            f"; or, in this pod, mount its ServiceAccount's token ({SERVICE_ACCOUNT_TOKEN} is "
            "missing: automountServiceAccountToken is false on the pod or its ServiceAccount)"
        )
    raise KubeConfigError(f"{files.named_by}: {what}; {hint}")


def select_context(
    merged: Mapping[str, Any], *, context: str | None, user_files: Mapping[str, str] | None = None
) -> Selection:
    """The context's entries in a merged kubeconfig as `KubeConfigLoader` finds them
    (`set_active_context`, then `_load_authentication`'s user and `_load_cluster_info`'s
    cluster), with its words; `user_files` says which file defined each user."""
    name = context if context is not None else node(merged, "current-context", "kube-config")
    try:
        ctx = _with_name(node(merged, "contexts", "kube-config"), name, "kube-config/contexts")
    except KubeconfigInvalid as e:
        if context is None or "Expected object with name" not in str(e):
            raise
        names = [str(c.get("name")) for c in merged.get("contexts") or [] if isinstance(c, Mapping)]
        raise KubeconfigInvalid(
            f"{e}; its contexts: {', '.join(one_line(n) for n in names[:20]) or 'none'}"
        ) from None
    body = node(ctx, "context", f"kube-config/contexts[name={name}]")
    user: Mapping[str, Any] | None = None
    user_name = ""
    if body.get("user") and merged.get("users"):
        entry = _with_name(merged["users"], body["user"], "kube-config/users", safe=True)
        user = entry.get("user") if entry else None
        if user is not None and not isinstance(user, Mapping):
            user = None
        user_name = str(body["user"])
    where = f"kube-config/contexts[name={name}]/context"
    cluster_name = node(body, "cluster", where)
    cluster_entry = _with_name(node(merged, "clusters", "kube-config"), cluster_name, "kube-config/clusters")
    cluster = node(cluster_entry, "cluster", f"kube-config/clusters[name={cluster_name}]")
    if not isinstance(cluster, Mapping):
        raise KubeconfigInvalid("Invalid kube-config file. Expected cluster to be a mapping")
    namespace = body.get("namespace")
    https = "server" in cluster and str(cluster["server"]).rstrip("/").startswith("https")
    return Selection(
        cluster=cluster,
        user=user,
        user_name=user_name,
        user_file=(user_files or {}).get(user_name, ""),
        namespace=namespace if isinstance(namespace, str) and namespace else "default",
        context=str(name),
        ca_file=_file_or_data(cluster, "certificate-authority") if https else None,
        cert_file=_file_or_data(user, "client-certificate") if https else None,
        key_file=_file_or_data(user, "client-key") if https else None,
    )


def node(value: Any, key: str, where: str) -> Any:
    """`ConfigNode.__getitem__`: the key's value, or the loader's error when it is missing or null."""
    v = value.get(key) if isinstance(value, Mapping) else None
    if v is None:
        raise KubeconfigInvalid(f"Invalid kube-config file. Expected key {key} in {where}")
    return v


def _with_name(items: Any, name: Any, where: str, *, safe: bool = False) -> Any:
    """`ConfigNode.get_with_name`: the one entry of the list with that name."""
    if not isinstance(items, list):
        raise KubeconfigInvalid(f"Invalid kube-config file. Expected {where} to be a list")
    found = None
    for v in items:
        if not isinstance(v, Mapping) or "name" not in v:
            raise KubeconfigInvalid(
                f"Invalid kube-config file. Expected all values in {where} list to have 'name' key"
            )
        if v["name"] == name:
            if found is not None:
                raise KubeconfigInvalid(
                    f"Invalid kube-config file. Expected only one object with name {name} in {where} list"
                )
            found = v
    if found is None and not safe:
        raise KubeconfigInvalid(f"Invalid kube-config file. Expected object with name {name} in {where} list")
    return found


def _file_or_data(obj: Mapping[str, Any] | None, key: str) -> str | None:
    """`FileOrData(obj, key).as_file()`: `KEY-data` decoded into a private temp file (removed at
    exit, as the official loader's), else the `KEY` path (already absolute: resolved against its
    file's directory when merged)."""
    if not obj:
        return None
    data_key = f"{key}-data"
    if data_key in obj:
        if obj[data_key]:
            data = obj[data_key]
            return tempfiles.write(
                base64.standard_b64decode(data.encode() if isinstance(data, str) else data)
            )
        return None
    if key in obj:
        path = os.path.normpath(str(obj[key]))
        if not os.path.isfile(path):
            raise KubeconfigInvalid(f"File does not exist: {path}")
        return path
    return None
