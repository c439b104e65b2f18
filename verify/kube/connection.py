"""The connection to the API server, built in one direction as kubectl builds it: the kubeconfig
(kube.loading: which files, merged, the context's entries) -> the endpoint (kube.endpoint: server,
TLS, proxy) -> the credential (kube.credentials: token, plugin, certificate, ServiceAccount) -> the
transport (kube.transport: every socket, bounded by the run's deadline). Each step reads what the
one before gave and nothing of the steps after it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from verify.errors import KubeConfigError
from verify.kube import credentials, endpoint, loading, plugins
from verify.kube.credentials import ConfigAuth, Credentials
from verify.kube.endpoint import Endpoint
from verify.kube.transport import Transport
from verify.redact import without_userinfo

_HEADERS = {"Accept": "application/json", "User-Agent": "rollout-verify/0.1"}


@dataclass
class Connection:
    host: str  # the server's URL as messages show it: without any user:password@
    namespace: str
    endpoint: Endpoint
    credentials: Credentials
    transport: Transport  # what each exec's WebSocket is opened through
    http: httpx.Client
    # Watches get their own pool: a watch that ends (or is left once the rollout is done) takes
    # its connection with it, and the requests that follow should not pay a new TLS handshake.
    watch_http: httpx.Client
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
    """Connect as kubectl does (kube.loading: --kubeconfig, else every $KUBECONFIG file merged,
    else ~/.kube/config, and the in-cluster service account only when none yields a config),
    from `environ` (the process's own by default). KubeConfigError (exit 2) for anything wrong
    with them, before any request."""
    env = os.environ if environ is None else environ
    try:
        selection = loading.select(explicit=kubeconfig, context=context, environ=env)
        server = endpoint.resolve(selection, environ=env)
        who = credentials.resolve(selection, endpoint=server, timeout=timeout, environ=env)
        auth = ConfigAuth(who)
        link = Transport.to(server, cert_file=who.cert_file, key_file=who.key_file)
    except loading.KubeconfigInvalid as e:
        first = str(e).splitlines()[0] if str(e) else "invalid configuration"
        raise KubeConfigError(
            f"--kubeconfig/--context: {first} (VERIFY_KUBECONFIG, VERIFY_CONTEXT)"
        ) from None
    except KubeConfigError:
        raise
    except Exception as e:  # YAML, base64, PEM, missing keys: the loader raises many kinds
        raise _unloadable(e) from None
    # HTTP checks take up to `concurrency` connections; each of up to 16 workloads verified at
    # once holds one watch and makes one REST call at a time
    return Connection(
        host=without_userinfo(server.host),
        namespace=selection.namespace,
        endpoint=server,
        credentials=who,
        transport=link,
        http=link.client(auth=auth, connections=concurrency + 20, headers=_HEADERS),
        watch_http=link.client(auth=auth, connections=20, headers=_HEADERS),
        context=selection.context,
    )


def _unloadable(e: Exception) -> KubeConfigError:
    """A malformed kubeconfig (YAML, base64, PEM): name the kind of problem, never the content."""
    return KubeConfigError(
        f"--kubeconfig/--context: the kubeconfig cannot be loaded ({type(e).__name__}); "
        "check the file (VERIFY_KUBECONFIG, VERIFY_CONTEXT)"
    )
