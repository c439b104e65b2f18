"""The one place that opens connections: to the API server, REST calls and watches (httpx), each
exec's WebSocket (a socket opened here, through the proxy's CONNECT when there is one, handed to
websocket-client) and HTTP checks through the pod proxy (the REST client); and the token
endpoints the cloud minters ask (`get`, or `within` for the cloud SDKs, whose sockets are their
own). Every byte read or written, the TCP connect, the TLS handshake and the proxy's CONNECT
answer included, ends by the end the caller set for its thread (`bounded`): a server or proxy
trickling a byte at a time can stretch no call past it, where a socket timeout alone is only the
time between two bytes.

The end comes from the run's deadline (kube.api for REST and watches, kube.exec for each exec's
budget, the HTTP checks for theirs, a plugin call's time for the minters); outside `bounded` only
the per-operation timeouts apply.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import httpcore
import httpx

from verify.kube import proxies, tls
from verify.kube.endpoint import Endpoint
from verify.redact import one_line, without_userinfo

T = TypeVar("T")

# The largest answer read from the API server (one body, one watch event, one list's pages
# together). A list of 10,000 pods is ~50 MiB; more is a server or proxy gone wrong, and reading
# it would cost the runner's memory (a 2 GiB list took 2 GiB in 6 s).
MAX_BODY = 64 * 1024 * 1024
MAX_PROXY_ANSWER = 64 * 1024  # a CONNECT answer's status line and headers
_CONNECT = 10.0  # seconds a TCP connect and TLS handshake may take, at most

_local = threading.local()


@contextlib.contextmanager
def bounded(end: float) -> Iterator[None]:
    """Every connect, handshake, read and write of this thread ends by `end` (time.monotonic),
    also within an outer `bounded` (the earlier end wins)."""
    outer: float | None = getattr(_local, "end", None)
    _local.end = end if outer is None else min(outer, end)
    try:
        yield
    finally:
        _local.end = outer


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """The timeout of one operation: the caller's, cut to what is left before the thread's end."""
    end: float | None = getattr(_local, "end", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise expired("the call's time ran out")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """httpcore's socket stream with every operation cut to the thread's end."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout))
        return _Stream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's sockets, each connect and each stream cut to the thread's end."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _BoundedTransport(httpx.HTTPTransport):
    """httpx's transport over the bounded backend. httpx builds its pool without a way to pass a
    network backend, so the pool is built here as httpx builds it (httpx/_transports/default.py),
    with the backend added: the proxy's CONNECT answer is read through it too."""

    def __init__(self, *, context: ssl.SSLContext, limits: httpx.Limits, proxy: str | None) -> None:
        common: dict[str, Any] = {
            "ssl_context": context,
            "max_connections": limits.max_connections,
            "max_keepalive_connections": limits.max_keepalive_connections,
            "keepalive_expiry": limits.keepalive_expiry,
            "network_backend": _Backend(),
        }
        if proxy is None:
            self._pool = httpcore.ConnectionPool(**common)
            return
        chosen = httpx.Proxy(url=proxy)
        self._pool = httpcore.HTTPProxy(
            proxy_url=httpcore.URL(
                scheme=chosen.url.raw_scheme,
                host=chosen.url.raw_host,
                port=chosen.url.port,
                target=chosen.url.raw_path,
            ),
            proxy_auth=chosen.raw_auth,
            proxy_headers=chosen.headers.raw,
            proxy_ssl_context=chosen.ssl_context,
            **common,
        )


class ProxyRefused(Exception):
    """The proxy answered our CONNECT with something other than 200 (`status`: its HTTP status)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def proxy_refusal(proxy: str, answer: str) -> str:
    """How a proxy's refusal to tunnel is said: its URL without any user:password, its status line,
    and what fixes a 407 (credentials the proxy wants)."""
    shown = without_userinfo(proxy)
    status = one_line(answer)[:80]
    if status.startswith("407"):
        has_user = urlsplit(proxy).username is not None
        fix = (
            "it did not accept the user and password in the proxy URL; check them"
            if has_user
            else "it wants credentials: put them in the proxy URL (http://USER:PASSWORD@host:port) "
            "of the cluster's proxy-url or of HTTPS_PROXY"
        )
        return f"the proxy {shown} refused to connect to the API server ({status}): {fix}"
    return f"the proxy {shown} refused to connect to the API server ({status})"


class Transport:
    """What every connection to one API server shares: its address, TLS context and proxy."""

    def __init__(self, *, host: str, context: ssl.SSLContext, proxy: str | None) -> None:
        self.host = host
        self.context = context
        self.proxy = proxy

    @classmethod
    def to(cls, server: Endpoint, *, cert_file: str | None, key_file: str | None) -> Transport:
        """To the endpoint, with the credential's client certificate (OSError or ValueError for an
        unreadable CA, certificate or key)."""
        context = tls.client_context(
            verify=bool(server.verify_ssl),
            cafile=server.ssl_ca_cert or None,
            cert_file=cert_file or None,
            key_file=key_file or None,
            server_name=server.tls_server_name or None,
        )
        return cls(host=server.host, context=context, proxy=server.proxy)

    def client(
        self, *, auth: httpx.Auth, connections: int, headers: dict[str, str] | None = None
    ) -> httpx.Client:
        """An httpx client for REST calls or watches, `connections` at once at most."""
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.Client(
            auth=auth,
            base_url=self.host,
            headers=headers,
            transport=_BoundedTransport(context=self.context, limits=limits, proxy=self.proxy),
            timeout=httpx.Timeout(30.0, connect=_CONNECT),
            trust_env=False,  # the proxy is the endpoint's, decided as kubectl decides it
        )

    def open_socket(self) -> BoundedSocket:
        """A connected socket to the API server, TLS set up (and tunnelled through the proxy's
        CONNECT when there is one), for websocket-client to speak the exec WebSocket over.
        OSError (`TimeoutError` when the thread's end came), ssl.SSLError or ProxyRefused."""
        parts = urlsplit(self.host)
        secure = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if secure else 80)
        if self.proxy:
            sock = _tunnel(self.proxy, host=host, port=port)
        else:
            sock = socket.create_connection((host, port), timeout=_left(_CONNECT, TimeoutError))
        try:
            if secure:
                sock.settimeout(_left(_CONNECT, TimeoutError))  # the whole handshake, not each read
                sock = self.context.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
        return BoundedSocket(sock)


def _tunnel(proxy: str, *, host: str, port: int) -> socket.socket:
    """A socket tunnelled to host:port through an HTTP(S) proxy's CONNECT, with the proxy URL's
    user and password as Basic credentials (as client-go's proxy dialer and httpx send them)."""
    parts = urlsplit(proxy)
    proxy_port = parts.port or (443 if parts.scheme == "https" else 80)
    sock = socket.create_connection((parts.hostname or "", proxy_port), timeout=_left(_CONNECT, TimeoutError))
    try:
        if parts.scheme == "https":
            sock.settimeout(_left(_CONNECT, TimeoutError))
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        request = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            request += f"Proxy-Authorization: Basic {base64.b64encode(pair).decode()}\r\n"
        sock.settimeout(_left(_CONNECT, TimeoutError))
        sock.sendall((request + "\r\n").encode("latin-1"))
        answer = bytearray()
        while b"\r\n\r\n" not in answer:
            if len(answer) > MAX_PROXY_ANSWER:
                raise ProxyRefused(proxy_refusal(proxy, "an answer without end"), status=0)
            sock.settimeout(_left(30.0, TimeoutError))
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError("the proxy closed the connection before answering CONNECT")
            answer += chunk
        status_line = bytes(answer).split(b"\r\n", 1)[0].decode("latin-1")
        _, _, rest = status_line.partition(" ")
        code = rest[:3]
        if code != "200":
            raise ProxyRefused(proxy_refusal(proxy, rest), status=int(code) if code.isdigit() else 0)
        # what came after the answer's end belongs to the tunnel: a proxy sends nothing before
        # the client speaks, so anything is a broken proxy
        if answer.index(b"\r\n\r\n") + 4 != len(answer):
            raise ConnectionError("the proxy sent data before the tunnel was used")
        return sock
    except BaseException:
        sock.close()
        raise


class BoundedSocket:
    """A socket as websocket-client uses it (recv, send, timeouts, fileno), every operation cut
    to the thread's end: its handshake reads the answer a byte at a time, each with the full
    timeout, so a trickling server would otherwise hold an exec for as long as it liked."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._timeout: float | None = None

    def settimeout(self, timeout: float | None) -> None:
        self._timeout = timeout

    def gettimeout(self) -> float | None:
        end: float | None = getattr(_local, "end", None)
        if end is None:
            return self._timeout
        left = max(0.001, end - time.monotonic())
        return left if self._timeout is None else min(self._timeout, left)

    def recv(self, size: int) -> bytes:
        self._sock.settimeout(_left(self._timeout, TimeoutError))
        return self._sock.recv(size)

    def send(self, data: bytes) -> int:
        self._sock.settimeout(_left(self._timeout, TimeoutError))
        return self._sock.send(data)

    def sendall(self, data: bytes) -> None:
        self._sock.settimeout(_left(self._timeout, TimeoutError))
        self._sock.sendall(data)

    def fileno(self) -> int:
        return self._sock.fileno()

    def setsockopt(self, *args: Any) -> None:
        self._sock.setsockopt(*args)

    def shutdown(self, how: int) -> None:
        self._sock.shutdown(how)

    def close(self) -> None:
        self._sock.close()

    @property
    def _closed(self) -> bool:
        return self._sock.fileno() == -1


def get(
    url: str,
    *,
    headers: Mapping[str, str],
    verify: ssl.SSLContext | bool,
    environ: Mapping[str, str],
    seconds: float,
) -> tuple[int, bytes]:
    """One GET of a token endpoint, within `seconds` in all, through the environment's proxy (as
    kubectl reads HTTPS_PROXY and NO_PROXY); the status and at most MAX_BODY of the body.
    httpx.HTTPError, or httpx.InvalidURL for a URL that is none."""
    context = verify if isinstance(verify, ssl.SSLContext) else ssl.create_default_context()
    if verify is False:
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    link = _BoundedTransport(
        context=context, limits=httpx.Limits(max_connections=1), proxy=proxies.from_environment(url, environ)
    )
    with (
        bounded(time.monotonic() + seconds),
        httpx.Client(transport=link, trust_env=False) as client,
        client.stream("GET", url, headers=dict(headers), timeout=seconds) as answer,
    ):
        body = bytearray()
        for chunk in answer.iter_bytes():
            body += chunk
            if len(body) > MAX_BODY:
                raise httpx.DecodingError("the answer is larger than the largest one read")
        return answer.status_code, bytes(body)


def within(seconds: float, call: Callable[[], T], *, name: str = "rollout-verify bounded call") -> T:
    """`call()` in a daemon thread, TimeoutError after `seconds`: for the cloud SDKs (botocore,
    google-auth, azure-identity), whose sockets this module does not open, the bound is the whole
    call's (the thread is left to die with the process)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as e:  # handed to the caller
            box["error"] = e

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(max(0.1, seconds))
    if thread.is_alive():
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
