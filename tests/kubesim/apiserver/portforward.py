"""`pods/portforward`: a TCP connection to a port of the pod, opened inside its network namespace
(to localhost, as containerd's port forwarding dials), carried over

- SPDY/3.1 tunneled in WebSocket binary messages (subprotocol `SPDY/3.1+portforward.k8s.io`),
  what kubectl >= 1.30 tries first: per forwarded connection the client opens an `error` and a
  `data` stream (headers `streamType`, `port`, `requestID`), each answered with SYN_REPLY;
- the kubelet's WebSocket protocol (`v4.channel.k8s.io`, `v4.base64.channel.k8s.io`,
  `channel.k8s.io`), what other clients (the official Python client) use: the ports come from the
  query, channel 2i carries port i's data and 2i+1 its errors, and the first frame on each
  channel is the port number, little-endian.

Plain SPDY (kubectl's fallback, a POST upgraded to `SPDY/3.1`) is not served: it answers 400."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import socket
from typing import TYPE_CHECKING

from aiohttp import WSMsgType, web

from ..node.dial import socket_in_netns
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from . import spdy

if TYPE_CHECKING:
    from ..cluster import Cluster
    from ..storage.store import Obj

PODS = BY_PATH[("", "pods")]
TUNNELED = "SPDY/3.1+portforward.k8s.io"
CHANNEL_PROTOCOLS = ("v4.channel.k8s.io", "v4.base64.channel.k8s.io", "channel.k8s.io")
GRACE = 1.0  # containerd waits this long for the other direction once one has finished


class PortError(Exception):
    """The port could not be reached; the message is the kubelet's."""


class Target:
    """One pod's network namespace, where forwarded connections are opened."""

    def __init__(self, cluster: Cluster, pod: Obj) -> None:
        self.cluster = cluster
        self.pod = pod
        self.sandbox_id = hashlib.sha256(pod["metadata"]["uid"].encode()).hexdigest()

    def _netns(self) -> str | None:
        kl = self.cluster.kubelets.get(self.pod["spec"].get("nodeName", ""))
        rt = kl.pods.get(self.pod["metadata"]["uid"]) if kl is not None else None
        sb = rt.sandbox if rt is not None else None
        return sb.netns if sb is not None and sb.alive else None

    async def open(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        netns = self._netns()
        where = f'failed to execute portforward in network namespace "/var/run/netns/cni-{self.pod["metadata"]["uid"]}"'
        if netns is None:
            raise PortError(self.error(port, f"{where}: no such network namespace"))
        loop = asyncio.get_running_loop()
        sock = await loop.run_in_executor(self.cluster.dial_pool, socket_in_netns, netns)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, ("127.0.0.1", port))
        except OSError as e:
            sock.close()
            text = "connection refused" if e.errno == 111 else (e.strerror or str(e)).lower()
            raise PortError(
                self.error(
                    port,
                    f'{where}: failed to connect to localhost:{port} inside namespace "{self.sandbox_id}", '
                    f"IPv4: dial tcp4 127.0.0.1:{port}: connect: {text} "
                    f"IPv6 dial tcp6 [::1]:{port}: connect: cannot assign requested address ",
                )
            ) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return await asyncio.open_connection(sock=sock)

    def error(self, port: int, cause: str) -> str:
        # the kubelet's streaming server names the pod by its sandbox id, with an empty uid
        return f"error forwarding port {port} to pod {self.sandbox_id}, uid : {cause}"


async def _copy_out(reader: asyncio.StreamReader, send: object) -> None:
    while chunk := await reader.read(64 * 1024):
        await send(chunk)  # type: ignore[operator]


async def _forward(
    target: Target,
    port: int,
    inbound: asyncio.Queue[bytes | None],
    send: object,
    fail: object,
) -> None:
    """One forwarded connection: `inbound` to the pod (None: the client closed its side), the
    pod's bytes through `send`; until one direction ends and the other has had GRACE to."""
    try:
        reader, writer = await target.open(port)
    except PortError as e:
        await fail(str(e))  # type: ignore[operator]
        return

    async def copy_in() -> None:
        while (chunk := await inbound.get()) is not None:
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    tasks = [asyncio.ensure_future(copy_in()), asyncio.ensure_future(_copy_out(reader, send))]
    try:
        _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        if pending:
            await asyncio.wait(pending, timeout=GRACE)
    finally:
        for t in tasks:
            t.cancel()
        writer.close()


def _ports(values: list[str]) -> list[int]:
    ports = [p.strip() for v in values for p in v.split(",") if p.strip()]
    if not ports:
        raise ApiError.bad_request('query parameter "port" is required')
    out = []
    for p in ports:
        if not p.isdigit() or not 0 < int(p) < 65536:
            raise ApiError.bad_request(f'unable to parse "{p}" as a port: must be between 1 and 65535')
        out.append(int(p))
    return out


async def handle_portforward(
    request: web.Request, cluster: Cluster, ns: str, name: str
) -> web.StreamResponse:
    pod = cluster.store.get(PODS, ns, name)
    if not pod["spec"].get("nodeName"):
        raise ApiError.bad_request(f"pod {name} does not have a host assigned")
    if request.headers.get("Upgrade", "").lower() != "websocket":
        # kubectl's SPDY fallback: the upgrade is not offered here
        raise ApiError.bad_request("Upgrade request required")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    target = Target(cluster, pod)
    if TUNNELED in offered:
        ws = web.WebSocketResponse(protocols=(TUNNELED,), max_msg_size=0, autoping=True)
        await ws.prepare(request)
        await _serve_spdy(ws, target)
        return ws
    ports = _ports(request.query.getall("ports", []))
    ws = web.WebSocketResponse(protocols=CHANNEL_PROTOCOLS, max_msg_size=0, autoping=True)
    await ws.prepare(request)
    await _serve_channels(ws, target, ports)
    return ws


async def _serve_spdy(ws: web.WebSocketResponse, target: Target) -> None:
    async def write(frame: bytes) -> None:
        if not ws.closed:
            await ws.send_bytes(frame)

    session = spdy.Session(write)
    pairs: dict[str, dict[str, int]] = {}  # requestID -> streamType -> stream id
    inbound: dict[int, asyncio.Queue[bytes | None]] = {}  # data stream id -> bytes for the pod
    tasks: dict[int, asyncio.Task[None]] = {}  # data stream id -> its forwarding

    async def run(data_sid: int, error_sid: int, port: int) -> None:
        async def fail(message: str) -> None:
            await session.data(error_sid, message.encode())

        with contextlib.suppress(ConnectionError):
            await _forward(target, port, inbound[data_sid], lambda b: session.data(data_sid, b), fail)
            # kubelet's portForward: both streams closed (an empty error stream: no error)
            await session.data(data_sid, b"", fin=True)
            await session.data(error_sid, b"", fin=True)

    try:
        async for msg in ws:
            if msg.type != WSMsgType.BINARY:
                continue
            try:
                frames = session.feed(msg.data)
            except (spdy.ProtocolError, ValueError, IndexError):
                break
            for f in frames:
                if f.type == spdy.SYN_STREAM:
                    kind = (f.headers.get("streamtype") or [""])[0]
                    request_id = (f.headers.get("requestid") or [str(f.stream_id)])[0]
                    port = (f.headers.get("port") or [""])[0]
                    if kind not in ("data", "error") or not port.isdigit():
                        await session.reset(f.stream_id, spdy.RST_PROTOCOL_ERROR)
                        continue
                    await session.reply(f.stream_id)
                    pair = pairs.setdefault(request_id, {})
                    pair[kind] = f.stream_id
                    if kind == "data":
                        inbound[f.stream_id] = asyncio.Queue()
                    if len(pair) == 2:
                        del pairs[request_id]
                        tasks[pair["data"]] = asyncio.ensure_future(
                            run(pair["data"], pair["error"], int(port))
                        )
                elif f.type == 0 and f.stream_id in inbound:
                    if f.data:
                        inbound[f.stream_id].put_nowait(f.data)
                    if f.fin:
                        inbound[f.stream_id].put_nowait(None)
                elif f.type == spdy.RST_STREAM and f.stream_id in tasks:
                    tasks.pop(f.stream_id).cancel()
                elif f.type == spdy.PING:
                    await session.pong(f.value)
                elif f.type == spdy.GOAWAY:
                    break
    finally:
        for t in tasks.values():
            t.cancel()


async def _serve_channels(ws: web.WebSocketResponse, target: Target, ports: list[int]) -> None:
    """The kubelet's WebSocket port forwarding (cri/streaming/portforward/websocket.go)."""
    b64 = ws.ws_protocol == "v4.base64.channel.k8s.io"

    async def send(channel: int, data: bytes) -> None:
        if ws.closed:
            return
        if b64:
            await ws.send_str(chr(ord("0") + channel) + base64.b64encode(data).decode())
        else:
            await ws.send_bytes(bytes([channel]) + data)

    inbound: list[asyncio.Queue[bytes | None]] = [asyncio.Queue() for _ in ports]
    for i, port in enumerate(ports):
        for channel in (2 * i, 2 * i + 1):
            await send(channel, port.to_bytes(2, "little"))

    def forward(i: int, port: int) -> asyncio.Future[None]:
        async def fail(message: str) -> None:
            await send(2 * i + 1, message.encode())

        async def out(data: bytes) -> None:
            await send(2 * i, data)

        return asyncio.ensure_future(_forward(target, port, inbound[i], out, fail))

    forwards = [forward(i, p) for i, p in enumerate(ports)]

    async def read() -> None:
        async for msg in ws:
            if msg.type == WSMsgType.BINARY:
                payload = msg.data
            elif msg.type == WSMsgType.TEXT:
                payload = msg.data.encode()
                if b64 and payload:
                    payload = bytes([payload[0] - ord("0")]) + base64.b64decode(payload[1:])
            else:
                break
            if not payload or payload[0] >= 2 * len(ports) or payload[0] % 2:
                continue
            inbound[payload[0] // 2].put_nowait(payload[1:])
        for q in inbound:
            q.put_nowait(None)

    reader = asyncio.ensure_future(read())
    try:
        await asyncio.gather(*forwards)
    finally:
        reader.cancel()
        for f in forwards:
            f.cancel()
    await ws.close()
