"""Loopback servers and proxies that misbehave on purpose, through real sockets: an API server
speaking just enough of the Kubernetes API for a run to reach its watch (plain HTTP), whose
answers a test makes hostile (trickled a byte at a time, an HTML login page, a 2 GiB list), and
proxies that refuse (407) or trickle their CONNECT answer. Each records when it saw its first
byte, the moment a deadline test measures from (a loaded machine's interpreter start-up is not
the run's budget)."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import yaml

NAME = "web"
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    # generation ahead of the status: the rollout is in progress, so the run watches it
    "metadata": {"name": NAME, "namespace": "default", "generation": 2, "resourceVersion": "7", "uid": "u-1"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": NAME}},
        "template": {"metadata": {"labels": {"app": NAME}}, "spec": {"containers": [{"name": "app"}]}},
    },
    "status": {"observedGeneration": 1},
}


@dataclass
class Request:
    method: str
    target: str  # path and query
    headers: dict[str, str]

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def watch(self) -> bool:
        return "watch=true" in self.target


@dataclass
class Answer:
    """What the server sends: a status line and headers (trickled when `head_pace` is set, one
    byte every `head_pace` seconds), then the body chunks, each after `body_pace` seconds."""

    status: str = "200 OK"
    content_type: str = "application/json"
    body: Iterable[bytes] = ()
    length: int | None = None  # Content-Length; None: the body ends with the connection
    head_pace: float | None = None
    body_pace: float = 0.0
    extra: list[str] = field(default_factory=list)

    def head(self) -> bytes:
        lines = [f"HTTP/1.1 {self.status}", f"Content-Type: {self.content_type}", *self.extra]
        lines.append(f"Content-Length: {self.length}" if self.length is not None else "Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()


def json_answer(obj: Any, *, status: str = "200 OK") -> Answer:
    body = json.dumps(obj).encode()
    return Answer(status=status, body=[body], length=len(body))


def api(request: Request) -> Answer:
    """The few answers a run needs to reach its watch: reviews allow everything, Deployment web is
    rolling out, its watch says nothing."""
    if request.method == "POST" and request.path.endswith("/selfsubjectaccessreviews"):
        return json_answer({"status": {"allowed": True}})
    if request.method == "POST" and request.path.endswith("/selfsubjectreviews"):
        return json_answer({"status": {"userInfo": {"username": "ci"}}})
    if request.path == f"/apis/apps/v1/namespaces/default/deployments/{NAME}":
        return json_answer(DEPLOYMENT)
    if request.path == "/apis/apps/v1/namespaces/default/deployments" and request.watch:
        return Answer(body=_silence(), body_pace=0.5)
    if request.path.endswith("s") and request.method == "GET":  # any other list: empty
        return json_answer({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []})
    return json_answer(
        {"kind": "Status", "status": "Failure", "code": 404, "message": "not found"}, status="404 Not Found"
    )


def _silence() -> Iterator[bytes]:
    while True:
        yield b""


def trickled(
    route: Callable[[Request], Answer], *, where: str, pace: float = 0.05
) -> Callable[[Request], Answer]:
    """`route`, with its answers' heads (`where="head"`), bodies (`"body"`) or the watch stream
    (`"watch"`) sent a byte at a time, forever."""

    def hostile(request: Request) -> Answer:
        answer = route(request)
        if where == "head":
            answer.head_pace = pace
        elif where == "body" and not request.watch:
            answer.length, answer.body, answer.body_pace = None, _forever(b'{"kind": "List", '), pace
        elif where == "watch" and request.watch:
            # an event that never ends: bytes, never the newline that would end it
            answer.body, answer.body_pace = _forever(b'{"type": "MODIFIED", "object": {'), pace
        return answer

    return hostile


def _forever(start: bytes) -> Iterator[bytes]:
    yield from (start[i : i + 1] for i in range(len(start)))
    while True:
        yield b" "


def huge_list(*, size: int, chunk: int = 1 << 20, pace: float = 0.0) -> Callable[[Request], Answer]:
    """Every list is one body of `size` bytes (it ignores `limit`: an old or broken server or
    proxy), streamed in `chunk`s, generated as it goes (the test's memory stays small)."""

    def route(request: Request) -> Answer:
        if request.method == "GET" and not request.watch and request.path.endswith("/deployments"):
            return Answer(body=_pods(size, chunk), body_pace=pace)
        return api(request)

    return route


def _pods(size: int, chunk: int) -> Iterator[bytes]:
    pod = json.dumps(
        {"metadata": {"name": "web-x", "namespace": "default", "labels": {"app": NAME}}, "spec": {}}
    ).encode()
    block = b",".join([pod] * max(1, chunk // (len(pod) + 1)))
    yield b'{"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {}, "items": ['
    sent = 0
    while sent < size:
        yield block + b","
        sent += len(block) + 1
    yield pod + b"]}"


def html(request: Request) -> Answer:
    """An SSO proxy's login page, whatever was asked."""
    page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Sign in to continue</body></html>"
    return Answer(content_type="text/html; charset=utf-8", body=[page], length=len(page))


class _Handler(socketserver.BaseRequestHandler):
    server: _TCPServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                self.server.saw_bytes()
                data += chunk
            head, _, data = data.partition(b"\r\n\r\n")
            line, *rest = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in rest)}
            length = int(headers.get("content-length", "0") or 0)
            while len(data) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                data += chunk
            data = data[length:]
            method, target, _ = [*line.split(" "), "", ""][:3]
            request = Request(method, target, headers)
            self.server.record(request)
            answer = self.server.route(request)
            try:
                if not self._send(sock, answer):
                    return
            except OSError:
                return

    def _send(self, sock: socket.socket, answer: Answer) -> bool:
        """Send one answer; False when the connection ends with it."""
        head = answer.head()
        if answer.head_pace is None:
            sock.sendall(head)
        else:
            while not self.server.stopping.is_set():
                for i in range(len(head) - 4):  # never the blank line that ends the head
                    sock.sendall(head[i : i + 1])
                    time.sleep(answer.head_pace)
                    if self.server.stopping.is_set():
                        return False
                head = b"X-Padding: " + b"x" * 1000 + b"\r\n"
            return False
        for chunk in answer.body:
            if self.server.stopping.is_set():
                return False
            if answer.body_pace:
                time.sleep(answer.body_pace)
            if chunk:
                sock.sendall(chunk)
        return answer.length is not None


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, route: Callable[[Request], Answer]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.route = route
        self.lock = threading.Lock()
        self.requests: list[Request] = []
        self.first_seen: float | None = None
        self.stopping = threading.Event()

    def saw_bytes(self) -> None:
        with self.lock:
            if self.first_seen is None:
                self.first_seen = time.monotonic()

    def record(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)


class _Serving:
    """A loopback server run on a daemon thread for the length of a `with` block."""

    _server: _TCPServer | _ProxyServer

    def _serve(self, server: _TCPServer | _ProxyServer) -> None:
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)

    @property
    def first_seen(self) -> float | None:
        return self._server.first_seen

    def since_first_byte(self) -> float:
        """Seconds from the first byte this server saw until now."""
        assert self._server.first_seen is not None, "the run sent nothing here"
        return time.monotonic() - self._server.first_seen

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()


class HostileApi(_Serving):
    """A loopback API server (plain HTTP) answering through `route`."""

    def __init__(self, route: Callable[[Request], Answer] = api) -> None:
        self._api = _TCPServer(route)
        self._serve(self._api)
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[Request]:
        with self._api.lock:
            return list(self._api.requests)

    def kubeconfig(self, path: Path, *, user: dict[str, Any] | None = None, proxy: str | None = None) -> str:
        return kubeconfig(path, server=self.url, user=user, proxy=proxy)


def kubeconfig(
    path: Path, *, server: str, user: dict[str, Any] | None = None, proxy: str | None = None
) -> str:
    """A kubeconfig for `server` (an https one is not verified: the tests that use one never reach
    it) with user `ci` (a static token unless `user` says otherwise), through `proxy` if given."""
    cluster: dict[str, Any] = {"server": server}
    if server.startswith("https://"):
        cluster["insecure-skip-tls-verify"] = True
    if proxy:
        cluster["proxy-url"] = proxy
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hostile", "cluster": cluster}],
        "users": [{"name": "ci", "user": user if user is not None else {"token": "hostile-test-token"}}],
        "contexts": [{"name": "ci", "context": {"cluster": "hostile", "user": "ci", "namespace": "default"}}],
        "current-context": "ci",
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


# an https server no test reaches: behind a proxy that never opens the tunnel
UNREACHED = "https://127.0.0.1:9"


class _ProxyHandler(socketserver.BaseRequestHandler):
    server: _ProxyServer

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            with self.server.lock:
                if self.server.first_seen is None:
                    self.server.first_seen = time.monotonic()
            head += chunk
        with self.server.lock:
            self.server.connects.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
        try:
            if self.server.pace is None:
                self.request.sendall(self.server.answer)
                return
            answer = self.server.answer
            while not self.server.stopping.is_set():  # a byte at a time, the blank line never reached
                for i in range(len(answer) - 4):
                    self.request.sendall(answer[i : i + 1])
                    time.sleep(self.server.pace)
                    if self.server.stopping.is_set():
                        return
                answer = b"X-Padding: " + b"x" * 1000 + b"\r\n"
        except OSError:
            return


class _ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, answer: bytes, pace: float | None) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.answer, self.pace = answer, pace
        self.lock = threading.Lock()
        self.connects: list[str] = []
        self.first_seen: float | None = None
        self.stopping = threading.Event()


PROXY_AUTH = (
    b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\n'
    b"Content-Length: 0\r\n\r\n"
)
PROXY_OK = b"HTTP/1.1 200 Connection established\r\nProxy-Agent: trickle\r\n\r\n"


class HostileProxy(_Serving):
    """A CONNECT proxy that answers every CONNECT with `answer`, at once or (with `pace`) a byte
    every `pace` seconds without ever ending its head."""

    def __init__(self, answer: bytes = PROXY_AUTH, *, pace: float | None = None) -> None:
        self._proxy = _ProxyServer(answer, pace)
        self._serve(self._proxy)
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def connects(self) -> list[str]:
        with self._proxy.lock:
            return list(self._proxy.connects)
