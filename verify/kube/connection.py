"""Building the clients from the kubeconfig (or the in-cluster service account): httpx for REST
and watches, and the `Endpoint` (kube.endpoint) the exec transport reads."""

from __future__ import annotations

import base64
import datetime as dt
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from verify.errors import KubeConfigError
from verify.kube import endpoint, loading, plugins, proxies, tls
from verify.kube.credentials import BearerToken, ConfigAuth
from verify.kube.endpoint import Endpoint
from verify.kube.names import SERVICE_ACCOUNT_TOKEN
from verify.redact import looks_like_content, one_line, shown_path, without_userinfo


@dataclass
class Connection:
    host: str  # the server's URL as messages show it: without any user:password@
    namespace: str
    configuration: Endpoint  # for exec
    http: httpx.Client
    token: BearerToken
    # Watches get their own pool: a watch that ends (or is left once the rollout is done) takes
    # its connection with it, and the requests that follow should not pay a new TLS handshake.
    watch_http: httpx.Client
    # what gave the credential, for the line a 401 ends the run with: "an EKS token minted ..."
    credential: str = ""
    context: str = ""  # the kubeconfig context in use ("" in-cluster), for the report

    def close(self) -> None:
        self.http.close()
        self.watch_http.close()


def connect(
    *,
    kubeconfig: str | None,
    context: str | None,
    concurrency: int = 32,
    environ: Mapping[str, str] | None = None,
    timeout: float = plugins.PER_CALL,
) -> Connection:
    """Load credentials as kubectl does (kube.loading: --kubeconfig, else every $KUBECONFIG file
    merged, else ~/.kube/config, and the in-cluster service account only when none yields a
    config), from `environ` (the process's own by default)."""
    env = os.environ if environ is None else environ
    cfg: Endpoint
    files = loading.chain(explicit=kubeconfig, environ=env)
    plugin: _Plugin | None = None
    try:
        if files.files:
            merged = loading.merge(files.files, named_by=files.named_by)
            plugin = _run_plugin(merged, context=context, timeout=timeout, environ=env)
            cfg = endpoint.from_kubeconfig(merged, context=context)
            kubeconfig_proxy = _proxy_url(merged, context)
            namespace = loading.context_namespace(merged, context)
            context_name = context or str(merged.get("current-context") or "")
        elif kubeconfig is None and context is None and loading.in_cluster(env):
            cfg = endpoint.in_cluster(env)
            kubeconfig_proxy = None
            namespace = loading.in_cluster_namespace(env)
            context_name = ""
        else:
            path = files.wanted[0]
            hint = (
                "it holds content, not a path: give the content in VERIFY_KUBECONFIG_DATA"
                if looks_like_content(path)
                else "check the path you passed, or give the content in VERIFY_KUBECONFIG_DATA"
                if kubeconfig is not None  # it was passed: do not tell them to pass it
                else "pass --kubeconfig (VERIFY_KUBECONFIG), set KUBECONFIG, or give the "
                "content in VERIFY_KUBECONFIG_DATA"
            )
            what = (
                f"file {shown_path(path)} does not exist"
                if len(files.wanted) == 1
                else f"none of its {len(files.wanted)} files exists"
            )
            if kubeconfig is None and context is None and loading.pod_without_token(env):
                hint += (
                    f"; or, in this pod, mount its ServiceAccount's token ({SERVICE_ACCOUNT_TOKEN} is "
                    "missing: automountServiceAccountToken is false on the pod or its ServiceAccount)"
                )
            raise KubeConfigError(f"{files.named_by}: {what}; {hint}")
    except endpoint.KubeconfigInvalid as e:
        first = str(e).splitlines()[0] if str(e) else "invalid configuration"
        if context is not None and f"name {context} in kube-config/contexts" in first:
            names = [str(c.get("name")) for c in merged.get("contexts") or [] if isinstance(c, Mapping)]
            first += f"; its contexts: {', '.join(one_line(n) for n in names[:20]) or 'none'}"
        raise KubeConfigError(
            f"--kubeconfig/--context: {first} (VERIFY_KUBECONFIG, VERIFY_CONTEXT)"
        ) from None
    except KubeConfigError:
        raise
    except Exception as e:  # YAML, base64, PEM, missing keys: the loader raises many kinds
        raise _unloadable(e) from None
    headers = {"Accept": "application/json", "User-Agent": "rollout-verify/0.1"}
    try:
        verify = tls.client_context(
            verify=bool(cfg.verify_ssl),
            cafile=cfg.ssl_ca_cert or None,
            cert_file=cfg.cert_file or None,
            key_file=cfg.key_file or None,
            server_name=cfg.tls_server_name or None,
        )
    except (OSError, ValueError) as e:
        raise _unloadable(e) from None
    cfg.ssl_context = verify
    # HTTP checks take up to `concurrency` connections; each of up to 16 workloads verified at
    # once holds one watch and makes one REST call at a time
    limits = httpx.Limits(max_connections=concurrency + 20, max_keepalive_connections=concurrency + 20)
    watch_limits = httpx.Limits(max_connections=20, max_keepalive_connections=20)

    token = BearerToken(cfg)
    if plugin is not None:
        _keep_fresh(cfg, plugin, token)

    # the kubeconfig's `proxy-url` (else HTTPS_PROXY/NO_PROXY from the environment, as kubectl) and
    # `tls-server-name` (the name sent as SNI and checked against the certificate), for REST calls,
    # watches and pod-proxy checks alike; the exec WebSocket (kube.stream) reads both from `cfg`
    _set_proxy(cfg, kubeconfig_proxy, env)
    proxy = cfg.proxy or None
    if proxy and not proxy.lower().startswith(("http://", "https://")):
        # kubectl also speaks socks5; the exec WebSocket (kube.stream, as the official client's
        # stream/ws_client.py websocket_proxycare) speaks HTTP CONNECT only, so a SOCKS
        # proxy would carry the REST calls and fail every pod: refuse before any request
        scheme = proxy.split("://", 1)[0] if "://" in proxy else proxy
        raise KubeConfigError(
            f"kubeconfig cluster proxy-url: the {one_line(scheme)!r} scheme is not supported (the pod "
            "exec client speaks only HTTP CONNECT proxies); use an http:// or https:// proxy"
        )

    def rest_client(limits: httpx.Limits) -> httpx.Client:
        return httpx.Client(
            auth=ConfigAuth(cfg, token),
            base_url=cfg.host,
            headers=headers,
            verify=verify,
            limits=limits,
            proxy=proxy,
            trust_env=False,  # the proxy is decided above, as kubectl decides it
            timeout=httpx.Timeout(30.0),
        )

    return Connection(
        host=without_userinfo(cfg.host),
        namespace=namespace,
        configuration=cfg,
        http=rest_client(limits),
        token=token,
        watch_http=rest_client(watch_limits),
        credential=_origin(plugin),
        context=context_name,
    )


@dataclass
class _Plugin:
    """An exec plugin and the credential it last gave, for refreshing it when it expires."""

    exec_cfg: dict[str, Any]
    cluster: dict[str, Any]
    timeout: float
    environ: Mapping[str, str]
    credential: plugins.Credential


def _proxy_url(merged: dict[str, Any], context: str | None) -> str | None:
    """The selected cluster's `proxy-url` (read here: the official client reads it only from 37 on,
    which the `cloud` extra's botocore rules out through python-dateutil)."""
    chosen = loading.selected(merged, context)
    url = (chosen[0].get("cluster") or {}).get("proxy-url") if chosen else None
    return str(url) if url else None


def _set_proxy(cfg: Any, kubeconfig_proxy: str | None, environ: Mapping[str, str]) -> None:
    """`cfg.proxy` as kubectl decides it (kube.proxies), replacing what the official client's
    Configuration() took from the process's environment (HTTP_PROXY over HTTPS_PROXY, NO_PROXY
    ignored by our httpx clients). The exec WebSocket reads `cfg.no_proxy` and, when it is empty,
    the environment again: "*" keeps it direct when no proxy applies, and a name that matches
    nothing keeps an explicit proxy-url in use whatever NO_PROXY says (as client-go)."""
    chosen = proxies.normalized(kubeconfig_proxy) if kubeconfig_proxy else None
    cfg.proxy = chosen or proxies.from_environment(cfg.host, environ)
    cfg.no_proxy = "no-proxy.invalid" if cfg.proxy else "*"
    # kube.stream (as ws_client) applies `no_proxy` (and a proxy's credentials) only when proxy or
    # proxy_headers is set (create_websocket -> websocket_proxycare); its Basic header is how a proxy-url's
    # user:password reaches the exec WebSocket (httpx reads them from the URL itself)
    cfg.proxy_headers = proxies.exec_headers(cfg.proxy)
    if not cfg.proxy:
        proxies.keep_exec_direct(urlsplit(cfg.host).hostname or "")


def _origin(plugin: _Plugin | None) -> str:
    """What gave the credential, for the 401 line: a minted token says how it was minted."""
    if plugin is None:
        return ""
    name = os.path.basename(str(plugin.exec_cfg.get("command") or ""))
    return plugin.credential.origin or f"the credential exec plugin {one_line(name)!r} gave"


def _run_plugin(
    merged: dict[str, Any], *, context: str | None, timeout: float, environ: Mapping[str, str]
) -> _Plugin | None:
    """Before any request: the context's user's exec plugin, run once, its credential written into
    the merged config in place of the plugin (so the official client never runs it itself)."""
    chosen = loading.selected(merged, context)
    if chosen is None:
        return None
    cluster, user = chosen
    body = user.get("user") or {}
    exec_cfg = body.get("exec")
    if not isinstance(exec_cfg, dict):
        if body.get("auth-provider"):
            name = (body.get("auth-provider") or {}).get("name", "")
            raise KubeConfigError(
                f"kubeconfig user {one_line(str(user.get('name', '')))}: the legacy auth-provider "
                f"{one_line(str(name))!r} is not supported (kubectl dropped it too); use its exec "
                f"plugin (gke-gcloud-auth-plugin, kubelogin); {plugins.HINT}"
            )
        return None
    credential = _credential(exec_cfg, cluster=cluster.get("cluster") or {}, timeout=timeout, environ=environ)
    replaced = {k: v for k, v in body.items() if k != "exec"}
    if credential.token:
        replaced["token"] = credential.token
    if credential.client_certificate_data:

        def b64(text: str) -> str:
            return base64.b64encode(text.encode()).decode()

        replaced["client-certificate-data"] = b64(credential.client_certificate_data)
        replaced["client-key-data"] = b64(credential.client_key_data)
    for entry in merged["users"]:
        if entry.get("name") == user.get("name"):
            entry["user"] = replaced
    return _Plugin(exec_cfg, cluster.get("cluster") or {}, timeout, environ, credential)


def _credential(
    exec_cfg: dict[str, Any], *, cluster: dict[str, Any], timeout: float, environ: Mapping[str, str]
) -> plugins.Credential:
    """The plugin's credential: from the plugin when it is on PATH; else, for the cloud plugins
    kube.cloud knows (EKS, GKE, AKS), minted in-process from the standard cloud credentials, so an image
    without the CLIs still connects; else plugins.run's one "not installed" line."""
    command = str(exec_cfg.get("command") or "")
    if command and shutil.which(command, path=environ.get("PATH")) is None:
        from verify.kube import cloud  # only for a missing plugin: the minters are start-up otherwise

        mint = cloud.minter(exec_cfg)
        if mint is not None:
            return mint(timeout=timeout, environ=environ)
    return plugins.run(exec_cfg, cluster=cluster, timeout=timeout, environ=environ)


def _keep_fresh(cfg: Any, plugin: _Plugin, token: BearerToken) -> None:
    """Ask the plugin again once its credential has expired (a token lives ~15 minutes on EKS, an
    hour on GKE), and once when the cluster refuses it with a 401 (a revoked or rotated one)."""
    if not plugin.credential.token:
        return

    def ask() -> None:
        plugin.credential = _credential(
            plugin.exec_cfg, cluster=plugin.cluster, timeout=plugin.timeout, environ=plugin.environ
        )
        # the key load_kube_config writes (kube_config.py _set_config: api_key["BearerToken"])
        cfg.api_key["BearerToken"] = f"Bearer {plugin.credential.token}"

    def refresh(conf: Any) -> None:
        expires = plugin.credential.expires
        if expires is None or dt.datetime.now(dt.UTC) < expires - dt.timedelta(seconds=30):
            return
        ask()

    cfg.refresh_api_key_hook = refresh
    token.renew_hook = ask


def _unloadable(e: Exception) -> KubeConfigError:
    """A malformed kubeconfig (YAML, base64, PEM): name the kind of problem, never the content."""
    return KubeConfigError(
        f"--kubeconfig/--context: the kubeconfig cannot be loaded ({type(e).__name__}); "
        "check the file (VERIFY_KUBECONFIG, VERIFY_CONTEXT)"
    )
