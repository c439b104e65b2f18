"""Building the clients: httpx for REST and watches, the official client for exec.

Errors leave this module as `KubeError` carrying only the Status `message`, never the raw
response (headers and bodies may hold tokens)."""

from __future__ import annotations

import json
import math
import os
import ssl
import threading
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from verify import retry
from verify.redact import looks_like_content, shown_path, without_userinfo

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class KubeError(Exception):
    """A request the cluster refused or could not answer; `str()` is safe to print."""

    def __init__(self, message: str, *, status: int = 0, reason: str = "", timed_out: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        # the run's --timeout ran out while this was still being retried: the verdict is the
        # timeout's (exit 4), not an unreachable server's
        self.timed_out = timed_out


class _Unreachable(retry.Transient):
    """No connection to the API server at all (refused, no route, connect timeout): when the
    deadline ends this, the server was unreachable (exit 3), not slow (exit 4)."""


class KubeConfigError(Exception):
    """The kubeconfig/in-cluster configuration cannot be loaded: bad input, exit 2."""


@dataclass
class Connection:
    host: str  # the server's URL as messages show it: without any user:password@
    namespace: str
    configuration: Any  # kubernetes.client.Configuration, for exec
    http: httpx.Client
    token: BearerToken
    # Watches get their own pool: a watch that ends (or is left once the rollout is done) takes
    # its connection with it, and the requests that follow should not pay a new TLS handshake.
    watch_http: httpx.Client

    def close(self) -> None:
        self.http.close()
        self.watch_http.close()


def connect(*, kubeconfig: str | None, context: str | None, concurrency: int = 32) -> Connection:
    """Load credentials as kubectl would: explicit file/context, else in-cluster, else $KUBECONFIG."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    cfg = client.Configuration()
    namespace = "default"
    try:
        if (
            kubeconfig is None
            and context is None
            and os.path.exists(f"{SA_DIR}/token")
            and os.environ.get("KUBERNETES_SERVICE_HOST")
        ):
            config.load_incluster_config(client_configuration=cfg)
            with open(f"{SA_DIR}/namespace") as fh:
                namespace = fh.read().strip() or "default"
        else:
            env_path = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
            path = kubeconfig or env_path or os.path.expanduser("~/.kube/config")
            if not os.path.exists(path):
                named_by = (
                    "--kubeconfig (VERIFY_KUBECONFIG)"
                    if kubeconfig
                    else "KUBECONFIG"
                    if env_path
                    else "the default kubeconfig"
                )
                hint = (
                    "it holds content, not a path: give the content in VERIFY_KUBECONFIG_DATA"
                    if looks_like_content(path)
                    else "pass --kubeconfig (VERIFY_KUBECONFIG), set KUBECONFIG, or give the "
                    "content in VERIFY_KUBECONFIG_DATA"
                )
                raise KubeConfigError(f"{named_by}: file {shown_path(path)} does not exist; {hint}")
            config.load_kube_config(config_file=path, context=context, client_configuration=cfg)
            _, active = config.list_kube_config_contexts(config_file=path)
            if context:
                contexts, _ = config.list_kube_config_contexts(config_file=path)
                active = next((c for c in contexts if c.get("name") == context), active)
            namespace = (active or {}).get("context", {}).get("namespace") or "default"
    except ConfigException as e:
        first = str(e).splitlines()[0] if str(e) else "invalid configuration"
        raise KubeConfigError(
            f"--kubeconfig/--context: {first} (VERIFY_KUBECONFIG, VERIFY_CONTEXT)"
        ) from None
    except KubeConfigError:
        raise
    except Exception as e:  # YAML, base64, PEM, missing keys: the loader raises many kinds
        raise _unloadable(e) from None
    headers = {"Accept": "application/json", "User-Agent": "rollout-verify/0.1"}
    try:
        if cfg.verify_ssl:
            verify: ssl.SSLContext = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
        else:
            verify = ssl.create_default_context()
            verify.check_hostname = False
            verify.verify_mode = ssl.CERT_NONE
        if cfg.cert_file:
            verify.load_cert_chain(cfg.cert_file, cfg.key_file)
    except (OSError, ValueError) as e:
        raise _unloadable(e) from None
    # HTTP checks take up to `concurrency` connections; each of up to 16 workloads verified at
    # once holds one watch and makes one REST call at a time
    limits = httpx.Limits(max_connections=concurrency + 20, max_keepalive_connections=concurrency + 20)
    watch_limits = httpx.Limits(max_connections=20, max_keepalive_connections=20)

    token = BearerToken(cfg)

    def rest_client(limits: httpx.Limits) -> httpx.Client:
        return httpx.Client(
            auth=_ConfigAuth(cfg, token),
            base_url=cfg.host,
            headers=headers,
            verify=verify,
            limits=limits,
            timeout=httpx.Timeout(30.0),
        )

    return Connection(
        host=without_userinfo(cfg.host),
        namespace=namespace,
        configuration=cfg,
        http=rest_client(limits),
        token=token,
        watch_http=rest_client(watch_limits),
    )


def _unloadable(e: Exception) -> KubeConfigError:
    """A malformed kubeconfig (YAML, base64, PEM): name the kind of problem, never the content."""
    return KubeConfigError(
        f"--kubeconfig/--context: the kubeconfig cannot be loaded ({type(e).__name__}); "
        "check the file (VERIFY_KUBECONFIG, VERIFY_CONTEXT)"
    )


class BearerToken:
    """The Configuration's `Authorization` value, asked for at most once per `ttl` seconds.

    Asking runs the client's refresh hook (token files are re-read, exec plugins consulted when
    expired), which costs more than an exec's own work when every one of hundreds of execs asks."""

    def __init__(self, cfg: Any, *, ttl: float = 1.0) -> None:
        self.cfg = cfg
        self.ttl = ttl
        self._lock = threading.Lock()
        self._value: str | None = None
        self._at = -math.inf

    def get(self) -> str | None:
        with self._lock:
            now = time.monotonic()
            if now - self._at >= self.ttl:
                self._value = self.cfg.get_api_key_with_prefix("BearerToken", alias="authorization") or None
                self._at = now
            return self._value


class _ConfigAuth(httpx.Auth):
    """The bearer token (or basic credentials), looked up per request (through the shared
    `BearerToken`, so a token the refresh hook renews is picked up within a second)."""

    def __init__(self, cfg: Any, token: BearerToken) -> None:
        self.cfg = cfg
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.token.get()
        if token:
            request.headers["Authorization"] = token
        elif self.cfg.username and self.cfg.password:
            request.headers["Authorization"] = self.cfg.get_basic_auth_token()
        yield request


MAX_MESSAGE = 400  # a Status message longer than this is cut: it is an error line, not a dump


def status_message(body: bytes | str, fallback: str) -> tuple[str, str]:
    """(message, reason) from a Kubernetes Status body; never the raw body, and the message as
    one printable line of at most MAX_MESSAGE characters."""
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        return fallback, ""
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        line = "".join(c if c.isprintable() else "?" for c in " ".join(data["message"].split()))
        if len(line) > MAX_MESSAGE:
            line = line[: MAX_MESSAGE - 3] + "..."
        return line, str(data.get("reason", ""))[:64]
    return fallback, ""


# what OpenSSL's text says of an untrusted server certificate, and how we say it (REST and exec)
UNTRUSTED_MARKER = "CERTIFICATE_VERIFY_FAILED"
UNTRUSTED_REASON = (
    "the server's certificate is not trusted by the kubeconfig's CA (certificate verify failed)"
)


def _tls_reason(e: Exception) -> str:
    return UNTRUSTED_REASON if UNTRUSTED_MARKER in str(e) else type(e).__name__


def _retry_after(resp: httpx.Response) -> float | None:
    v = resp.headers.get("Retry-After")
    try:
        seconds = float(v) if v is not None else None
    except ValueError:
        return None  # an HTTP date or garbage: fall back to our own backoff
    return seconds if seconds is not None and math.isfinite(seconds) and 0 <= seconds <= 600 else None


class Api:
    """REST calls with the one retry policy and the run's deadline."""

    def __init__(self, conn: Connection, deadline: retry.Deadline) -> None:
        self.conn = conn
        self.deadline = deadline

    def _once(self, method: str, path: str, **kw: Any) -> Any:
        timeout = min(30.0, max(self.deadline.remaining(), 0.1))
        try:
            resp = self.conn.http.request(method, path, timeout=timeout, **kw)
        except httpx.TransportError as e:
            if UNTRUSTED_MARKER in str(e) or isinstance(e, httpx.UnsupportedProtocol):
                # retrying cannot fix a certificate or a URL: say so at once
                raise KubeError(f"cannot connect to {self.conn.host}: {_tls_reason(e)}") from None
            fault = (
                _Unreachable if isinstance(e, httpx.ConnectError | httpx.ConnectTimeout) else retry.Transient
            )
            raise fault(f"cannot reach the API server at {self.conn.host}: {type(e).__name__}") from None
        if resp.status_code < 400:
            return resp.json()
        msg, reason = status_message(resp.content, f"HTTP {resp.status_code}")
        if retry.retryable(resp.status_code, msg):
            raise retry.Transient(f"{msg} (HTTP {resp.status_code})", retry_after=_retry_after(resp))
        raise KubeError(msg, status=resp.status_code, reason=reason)

    def request(self, method: str, path: str, **kw: Any) -> Any:
        try:
            return retry.call(lambda: self._once(method, path, **kw), deadline=self.deadline)
        except retry.Transient as e:
            if self.deadline.expired and not isinstance(e, _Unreachable):
                raise KubeError(
                    f"--timeout ran out while the API server did not answer ({e})", status=503, timed_out=True
                ) from None
            raise KubeError(f"{e} (gave up at the deadline)", status=503) from None

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None)

    def patch(self, path: str, body: Any, content_type: str) -> Any:
        return self.request("PATCH", path, content=json.dumps(body), headers={"Content-Type": content_type})

    @contextmanager
    def watch(self, path: str, **params: Any) -> Iterator[Iterator[dict[str, Any]]]:
        """A watch stream as decoded events; transport errors end it (the caller resumes)."""
        # a silent stream (no events, no bookmarks) ends at most 1 s past the deadline
        read = max(self.deadline.remaining(), 0.1) + 1
        try:
            with self.conn.watch_http.stream(
                "GET",
                path,
                params={**params, "watch": "true"},
                timeout=httpx.Timeout(30.0, read=read),
            ) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    msg, reason = status_message(resp.content, f"HTTP {resp.status_code}")
                    if retry.retryable(resp.status_code, msg):
                        raise retry.Transient(msg, retry_after=_retry_after(resp))
                    raise KubeError(msg, status=resp.status_code, reason=reason)
                yield _events(resp)
        except httpx.TransportError as e:
            raise retry.Transient(f"watch interrupted: {type(e).__name__}") from None


def _events(resp: httpx.Response) -> Iterator[dict[str, Any]]:
    try:
        for line in resp.iter_lines():
            if line.strip():
                yield json.loads(line)
    except (httpx.TransportError, httpx.StreamError):
        return
