"""Where the API server is and how to authenticate to it, read from the merged kubeconfig (or the
mounted service account) as the official client's loaders read them, without importing that client.

The official `kubernetes` package costs ~0.4 s of CPU to import (its package `__init__` loads every
generated API and model class), more than everything else a run does before its first request.
This reads the same fields with the same rules and the same error texts
(kubernetes/config/kube_config.py `KubeConfigLoader`: `set_active_context`, `_load_authentication`,
`_load_user_token`, `_load_user_pass_token`, `_load_cluster_info`, `_set_config`, `ConfigNode`;
incluster_config.py `InClusterConfigLoader`), and keeps them in an `Endpoint`, which has the few
attributes of `kubernetes.client.Configuration` the transports read.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import datetime as dt
import os
import ssl
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from verify.kube.names import SERVICE_ACCOUNT_TOKEN

SERVICE_ACCOUNT_CA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
_TOKEN_REREAD = dt.timedelta(minutes=1)  # in-cluster: the projected token is read again after this
_temp_files: list[str] = []


class KubeconfigInvalid(ValueError):
    """What the official loader raises as ConfigException, with its words (kube.connection shows
    them as a KubeConfigError)."""


class Endpoint:
    """The server's URL, its TLS settings and the `Authorization` value of the context in use."""

    def __init__(self) -> None:
        self.host = "http://localhost"
        self.verify_ssl = True
        self.ssl_ca_cert: str | None = None
        self.cert_file: str | None = None
        self.key_file: str | None = None
        self.tls_server_name: str | None = None
        self.assert_hostname: bool | None = None
        self.proxy: str | None = None
        self.no_proxy: str | None = None
        self.proxy_headers: dict[str, str] | None = None
        # "Bearer TOKEN" or "Basic B64" under "BearerToken", as load_kube_config writes it
        self.api_key: dict[str, str] = {}
        self.refresh_api_key_hook: Callable[[Endpoint], None] | None = None
        self.username: str | None = None
        self.password: str | None = None
        # built once from the fields above (kube.tls), shared by REST calls and every exec
        self.ssl_context: ssl.SSLContext | None = None

    def get_api_key_with_prefix(self, identifier: str, alias: str | None = None) -> str | None:
        """The `Authorization` value after the refresh hook, as Configuration's method of this name."""
        if self.refresh_api_key_hook is not None:
            self.refresh_api_key_hook(self)
        key = self.api_key.get(identifier)
        if key is None and alias is not None:
            key = self.api_key.get(alias)
        return key or None

    def get_basic_auth_token(self) -> str | None:
        """Never set: the kubeconfig's username/password travel as the BearerToken value (as the
        official loader puts them)."""
        return None


def _bad(text: str) -> KubeconfigInvalid:
    return KubeconfigInvalid(text)


def _node(value: Any, key: str, where: str) -> Any:
    """`ConfigNode.__getitem__`: the key's value, or the loader's error when it is missing or null."""
    v = value.get(key) if isinstance(value, Mapping) else None
    if v is None:
        raise _bad(f"Invalid kube-config file. Expected key {key} in {where}")
    return v


def _with_name(items: Any, name: Any, where: str, *, safe: bool = False) -> Any:
    """`ConfigNode.get_with_name`: the one entry of the list with that name."""
    if not isinstance(items, list):
        raise _bad(f"Invalid kube-config file. Expected {where} to be a list")
    found = None
    for v in items:
        if not isinstance(v, Mapping) or "name" not in v:
            raise _bad(f"Invalid kube-config file. Expected all values in {where} list to have 'name' key")
        if v["name"] == name:
            if found is not None:
                raise _bad(
                    f"Invalid kube-config file. Expected only one object with name {name} in {where} list"
                )
            found = v
    if found is None and not safe:
        raise _bad(f"Invalid kube-config file. Expected object with name {name} in {where} list")
    return found


def _temp_file(content: bytes) -> str:
    """A private file holding decoded `*-data` content, removed at exit (as the official loader's)."""
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    if not _temp_files:
        atexit.register(_remove_temp_files)
    _temp_files.append(path)
    return path


def _remove_temp_files() -> None:
    for path in _temp_files:
        with contextlib.suppress(OSError):
            os.remove(path)
    _temp_files.clear()


def _as_file(obj: Mapping[str, Any] | None, key: str) -> str | None:
    """`FileOrData(obj, key).as_file()`: `KEY-data` decoded into a temp file, else the `KEY` path
    (already absolute: kube.loading resolved it against its file's directory)."""
    if not obj:
        return None
    data_key = f"{key}-data"
    if data_key in obj:
        if obj[data_key]:
            data = obj[data_key]
            return _temp_file(base64.standard_b64decode(data.encode() if isinstance(data, str) else data))
        return None
    if key in obj:
        path = os.path.normpath(str(obj[key]))
        if not os.path.isfile(path):
            raise _bad(f"File does not exist: {path}")
        return path
    return None


def _user_token(user: Mapping[str, Any]) -> str | None:
    """`FileOrData(user, 'tokenFile', 'token', base64_file_content=False).as_data()`."""
    if "token" in user:
        return str(user["token"]) if user["token"] else None
    if "tokenFile" in user:
        with open(os.path.normpath(str(user["tokenFile"])), encoding="utf-8") as fh:
            return fh.read() or None
    return None


def from_kubeconfig(merged: Mapping[str, Any], *, context: str | None) -> Endpoint:
    """The context's cluster and user as `load_kube_config_from_dict(merged, context)` sets them
    (its exec plugin already replaced by its credential, see kube.connection)."""
    name = context if context is not None else _node(merged, "current-context", "kube-config")
    ctx = _with_name(_node(merged, "contexts", "kube-config"), name, "kube-config/contexts")
    body = _node(ctx, "context", f"kube-config/contexts[name={name}]")
    user: Mapping[str, Any] | None = None
    if body.get("user") and merged.get("users"):
        entry = _with_name(merged["users"], body["user"], "kube-config/users", safe=True)
        user = entry.get("user") if entry else None
        if user is not None and not isinstance(user, Mapping):
            user = None
    where = f"kube-config/contexts[name={name}]/context"
    cluster_name = _node(body, "cluster", where)
    cluster_entry = _with_name(_node(merged, "clusters", "kube-config"), cluster_name, "kube-config/clusters")
    cluster = _node(cluster_entry, "cluster", f"kube-config/clusters[name={cluster_name}]")
    if not isinstance(cluster, Mapping):
        raise _bad("Invalid kube-config file. Expected cluster to be a mapping")
    ep = Endpoint()
    if user:
        token = _user_token(user)
        if token:
            ep.api_key["BearerToken"] = f"Bearer {token}"
        elif "username" in user and "password" in user:
            pair = f"{user['username']}:{user['password']}".encode("latin-1")
            ep.api_key["BearerToken"] = f"Basic {base64.b64encode(pair).decode()}"
    if "server" in cluster:
        ep.host = str(cluster["server"]).rstrip("/")
        if ep.host.startswith("https"):
            ep.ssl_ca_cert = _as_file(cluster, "certificate-authority")
            ep.cert_file = _as_file(user, "client-certificate")
            ep.key_file = _as_file(user, "client-key")
    if "insecure-skip-tls-verify" in cluster:
        ep.verify_ssl = not cluster["insecure-skip-tls-verify"]
    if "tls-server-name" in cluster:
        ep.tls_server_name = cluster["tls-server-name"]
    return ep


def in_cluster(environ: Mapping[str, str]) -> Endpoint:
    """The mounted service account as `load_incluster_config` sets it: the token read again once a
    minute (a projected token is rotated in place)."""
    host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT")
    if host is None or port is None:
        raise _bad("Service host/port is not set.")
    if not host or not port:
        raise _bad("Service host/port is set but empty.")
    ep = Endpoint()
    ep.host = f"https://[{host}]:{port}" if ":" in host or "%" in host else f"https://{host}:{port}"
    if not os.path.isfile(SERVICE_ACCOUNT_TOKEN):
        raise _bad("Service token file does not exist.")
    expires = [dt.datetime.min]

    def read_token() -> None:
        with open(SERVICE_ACCOUNT_TOKEN, encoding="utf-8") as fh:
            content = fh.read()
        if not content:
            raise _bad("Token file exists but empty.")
        ep.api_key["BearerToken"] = f"bearer {content}"
        expires[0] = dt.datetime.now() + _TOKEN_REREAD

    read_token()
    if not os.path.isfile(SERVICE_ACCOUNT_CA):
        raise _bad("Service certification file does not exist.")
    with open(SERVICE_ACCOUNT_CA, encoding="utf-8") as fh:
        if not fh.read():
            raise _bad("Cert file exists but empty.")
    ep.ssl_ca_cert = SERVICE_ACCOUNT_CA

    def refresh(_: Endpoint) -> None:
        if expires[0] <= dt.datetime.now():
            read_token()

    ep.refresh_api_key_hook = refresh
    return ep
