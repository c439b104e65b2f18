"""One exec's WebSocket: the Kubernetes channel protocol (v5.channel.k8s.io, else v4) over
websocket-client, as the official client's `kubernetes.stream.ws_client` speaks it, over a socket
kube.transport opens (the run's one TLS context, the proxy's CONNECT, the exec's budget).

Written here rather than imported: that module's package `__init__` imports every generated API
and model class (~0.4 s of CPU), and its `create_websocket` builds a TLS context and reads the CA
file again for every exec. What it sends is the same: the `Authorization` header, the two
subprotocols, stdin as binary frames on channel 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import websocket

from verify.kube.transport import ProxyRefused

STDIN, STDOUT, STDERR, ERROR = 0, 1, 2, 3
_V5 = "v5.channel.k8s.io"
_CLOSE_CHANNEL = 255  # v5: [255, N] says the peer closed channel N
_PROTOCOLS = f"sec-websocket-protocol: {_V5},v4.channel.k8s.io"


class HandshakeFailed(Exception):
    """The exec was not opened: websocket-client's text (`Handshake status 403 Forbidden -+-+- ...`
    for a refused upgrade; kube.refusal classifies it), or a connection or TLS failure (a proxy that
    refuses the tunnel is transport.ProxyRefused)."""


class Unanswered(HandshakeFailed):
    """The exec's budget ran out before the upgrade was answered (a server that never answers, or
    trickles its answer)."""


def websocket_url(url: str) -> str:
    """`ws_client.get_websocket_url`: https -> wss, http -> ws."""
    if url.startswith("https://"):
        return "wss://" + url[len("https://") :]
    if url.startswith("http://"):
        return "ws://" + url[len("http://") :]
    return url


class ExecStream:
    """An open exec: stdin written, the channels read until the server closes the stream."""

    def __init__(self, *, connected: Callable[[], Any], url: str, authorization: str | None) -> None:
        """Open the stream over the socket `connected()` gives (kube.transport opens it, TLS and
        proxy included, every operation bounded by the exec's budget)."""
        header = [_PROTOCOLS]
        if authorization:
            header.insert(0, f"authorization: {authorization}")
        self.sock = websocket.WebSocket(skip_utf8_validation=True)
        try:
            sock = connected()
            self.sock.connect(websocket_url(url), header=header, socket=sock)  # type: ignore[no-untyped-call]
        except ProxyRefused:
            raise
        except (TimeoutError, websocket.WebSocketTimeoutException):
            self.sock.shutdown()  # type: ignore[no-untyped-call]
            raise Unanswered("the upgrade was not answered in time") from None
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
