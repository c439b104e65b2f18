"""A loopback HTTP CONNECT proxy that counts its tunnels: what a kubeconfig's `proxy-url` (or
HTTPS_PROXY) points a client at. Only loopback targets are tunnelled (`vm` is 127.0.0.1 in
/etc/hosts, a name through which Go does not skip the proxy as it does for loopback IPs)."""

from __future__ import annotations

import select
import socket
import socketserver
import threading


class _Tunnel(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 65536:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.partition(" ")[0]
        host, _, port = target.rpartition(":")
        if method != "CONNECT" or host not in ("127.0.0.1", "localhost", "vm") or not port.isdigit():
            self.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        with self.server.lock:
            self.server.connects.append(target)
        upstream = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        leftover = head.split(b"\r\n\r\n", 1)[1]
        if leftover:
            upstream.sendall(leftover)
        pair = {self.request: upstream, upstream: self.request}
        try:
            while True:
                ready, _, _ = select.select(list(pair), [], [], 60)
                if not ready:
                    return
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    pair[sock].sendall(data)
        except OSError:
            return
        finally:
            upstream.close()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.lock = threading.Lock()
        self.connects: list[str] = []


class ConnectProxy:
    def __init__(self) -> None:
        self._server = _Server()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def connects(self) -> list[str]:
        with self._server.lock:
            return list(self._server.connects)

    def __enter__(self) -> ConnectProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
