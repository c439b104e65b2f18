"""Where the API server is, how its certificate is checked and which proxy reaches it: the second
step of the connection path (kube.loading selected the entries; kube.credentials reads the user).

Read from the context's cluster entry (or the mounted service account) as the official Python
client's loaders read them, without importing that client: the official `kubernetes` package costs
~0.4 s of CPU to import (its package `__init__` loads every generated API and model class), more
than everything else a run does before its first request. The same fields, rules and error texts
(kubernetes/config/kube_config.py `KubeConfigLoader._load_cluster_info`; incluster_config.py
`InClusterConfigLoader`); the proxy as kubectl decides it (kube.proxies).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from verify.errors import KubeConfigError
from verify.kube import proxies
from verify.kube.loading import KubeconfigInvalid, Selection
from verify.redact import one_line

SERVICE_ACCOUNT_CA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"


@dataclass
class Endpoint:
    """The server's URL, its TLS settings and the proxy to it."""

    host: str = "http://localhost"
    verify_ssl: bool = True
    ssl_ca_cert: str | None = None
    tls_server_name: str | None = None
    proxy: str | None = None
    https: bool = False  # the server's scheme (client certificates are sent to https ones only)


def resolve(selection: Selection, *, environ: Mapping[str, str]) -> Endpoint:
    """The selected cluster's (or the pod's) endpoint and its proxy: the cluster's `proxy-url`, else
    HTTPS_PROXY/NO_PROXY from the environment as kubectl reads them. A SOCKS proxy is refused
    before any request: kubectl speaks it, but the exec WebSocket (kube.transport) speaks only
    HTTP CONNECT, so it would carry the REST calls and fail every pod."""
    ep = in_cluster(environ) if selection.in_cluster else from_cluster(selection)
    ep.https = ep.host.startswith("https")
    url = selection.cluster.get("proxy-url")
    ep.proxy = proxies.normalized(str(url)) if url else proxies.from_environment(ep.host, environ)
    if ep.proxy and not ep.proxy.lower().startswith(("http://", "https://")):
        scheme = ep.proxy.split("://", 1)[0] if "://" in ep.proxy else ep.proxy
        raise KubeConfigError(
            f"kubeconfig cluster proxy-url: the {one_line(scheme)!r} scheme is not supported (the pod "
            "exec client speaks only HTTP CONNECT proxies); use an http:// or https:// proxy"
        )
    return ep


def from_cluster(selection: Selection) -> Endpoint:
    """The selected kubeconfig cluster entry as `_load_cluster_info` reads it."""
    cluster = selection.cluster
    ep = Endpoint()
    if "server" in cluster:
        ep.host = str(cluster["server"]).rstrip("/")
        ep.ssl_ca_cert = selection.ca_file
    if "insecure-skip-tls-verify" in cluster:
        ep.verify_ssl = not cluster["insecure-skip-tls-verify"]
    if "tls-server-name" in cluster:
        ep.tls_server_name = cluster["tls-server-name"]
    return ep


def in_cluster(environ: Mapping[str, str]) -> Endpoint:
    """The service's address and the mounted CA, as `load_incluster_config` reads them (the
    token is kube.credentials')."""
    host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT")
    if host is None or port is None:
        raise KubeconfigInvalid("Service host/port is not set.")
    if not host or not port:
        raise KubeconfigInvalid("Service host/port is set but empty.")
    ep = Endpoint()
    ep.host = f"https://[{host}]:{port}" if ":" in host or "%" in host else f"https://{host}:{port}"
    if not os.path.isfile(SERVICE_ACCOUNT_CA):
        raise KubeconfigInvalid("Service certification file does not exist.")
    with open(SERVICE_ACCOUNT_CA, encoding="utf-8") as fh:
        if not fh.read():
            raise KubeconfigInvalid("Cert file exists but empty.")
    ep.ssl_ca_cert = SERVICE_ACCOUNT_CA
    return ep
