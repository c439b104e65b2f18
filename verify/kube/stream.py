"""One exec's WebSocket: the Kubernetes channel protocol (v5.channel.k8s.io, else v4) over
websocket-client, as the official client's `kubernetes.stream.ws_client` speaks it, opened with
the run's one TLS context.

Written here rather than imported: that module's package `__init__` imports every generated API
and model class (~0.4 s of CPU), and its `create_websocket` builds a TLS context and reads the CA
file again for every exec. What it sends is the same: the `Authorization` header, the two
subprotocols, stdin as binary frames on channel 0, proxies through HTTP CONNECT with the proxy's
Basic credentials (`websocket_proxycare`), the API server's host kept off any proxy otherwise.
"""

from __future__ import annotations

import base64
import ssl
import time
from typing import Any

import websocket

STDIN, STDOUT, STDERR, ERROR = 0, 1, 2, 3
_V5 = "v5.channel.k8s.io"
_CLOSE_CHANNEL = 255  # v5: [255, N] says the peer closed channel N
_PROTOCOLS = f"sec-websocket-protocol: {_V5},v4.channel.k8s.io"


class HandshakeFailed(Exception):
    """The exec was not opened: websocket-client's text (`Handshake status 403 Forbidden -+-+- ...`
    for a refused upgrade; kube.exec classifies it), or a connection or TLS failure."""


def websocket_url(url: str) -> str:
    """`ws_client.get_websocket_url`: https -> wss, http -> ws."""
    if url.startswith("https://"):
        return "wss://" + url[len("https://") :]
    if url.startswith("http://"):
        return "ws://" + url[len("http://") :]
    return url


def _proxy_options(endpoint: Any) -> dict[str, Any]:
    """`ws_client.websocket_proxycare`: the proxy as host and port, its Basic credentials, and
    `no_proxy` (kube.connection sets it so that the choice made there is the one applied)."""
    options: dict[str, Any] = {}
    if not (endpoint.proxy or endpoint.proxy_headers):
        return options
    if endpoint.no_proxy:
        options["http_no_proxy"] = endpoint.no_proxy.split(",")
    if endpoint.proxy:
        from urllib.parse import urlparse

        proxy = urlparse(endpoint.proxy)
        options.update(http_proxy_host=proxy.hostname, http_proxy_port=proxy.port)
    for key, value in (endpoint.proxy_headers or {}).items():
        if key == "proxy-authorization" and value.startswith("Basic"):
            user, _, password = base64.urlsafe_b64decode(value.split()[1]).decode().partition(":")
            options["http_proxy_auth"] = (user, password)
    return options


class ExecStream:
    """An open exec: stdin written, the channels read until the server closes the stream."""

    def __init__(
        self, *, endpoint: Any, context: ssl.SSLContext, url: str, authorization: str | None
    ) -> None:
        """Open the stream (no timeout of its own: kube.exec bounds the whole exec)."""
        header = [_PROTOCOLS]
        if authorization:
            header.insert(0, f"authorization: {authorization}")
        self.sock = websocket.WebSocket(sslopt={"context": context}, skip_utf8_validation=True)
        try:
            self.sock.connect(websocket_url(url), header=header, **_proxy_options(endpoint))  # type: ignore[no-untyped-call]
        except Exception as e:
            self.sock.shutdown()  # type: ignore[no-untyped-call]
            raise HandshakeFailed(str(e)) from None
        self.v5 = self.sock.getsubprotocol() == _V5
        self._channels: dict[int, bytearray] = {}
        self.open = True

    def write_stdin(self, data: bytes) -> None:
        self.sock.send_binary(bytes([STDIN]) + data)

    def read_until_closed(self, timeout: float) -> bool:
        """Read frames until the server closes the stream (True), or until `timeout` seconds have
        passed (False: the stream is still open). A stream that breaks raises."""
        until = time.monotonic() + timeout
        try:
            while True:
                left = until - time.monotonic()
                if left <= 0:
                    return False
                self.sock.settimeout(left)
                opcode, frame = self.sock.recv_data_frame(True)
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    self.open = False
                    return True
                if opcode not in (websocket.ABNF.OPCODE_BINARY, websocket.ABNF.OPCODE_TEXT):
                    continue
                data = frame.data
                if not data:
                    continue
                if isinstance(data, str):
                    data = data.encode("utf-8")
                if data[0] == _CLOSE_CHANNEL and self.v5:
                    continue
                self._channels.setdefault(data[0], bytearray()).extend(data[1:])
        except websocket.WebSocketTimeoutException:
            return False

    def channel(self, number: int) -> str:
        """What came on a channel, as text (decoded once, so a character split across frames
        stays whole)."""
        return bytes(self._channels.get(number, b"")).decode("utf-8", "replace")

    def close(self) -> None:
        self.sock.shutdown()  # type: ignore[no-untyped-call]
