"""`pods/attach` over WebSocket (v4/v5 channel protocols): the client joins the running
container's own streams, as containerd's attach does: what it sends on stdin goes to the
container's stdin (`stdin: true`), and what the container writes from then on comes back.

The runtime keeps stdout and stderr in one log (runtime.py), so both come back on stdout. With
`stdinOnce`, the container's stdin is closed when the attached client closes its stdin (a v5
CLOSE signal) or goes away; the stream ends, with a Success status, when the container exits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import TYPE_CHECKING

from aiohttp import WSMsgType, web

from ..node.runtime import close_stdin
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from .pod_exec import CLOSE, ERROR, PROTOCOLS, STDERR, STDIN, STDOUT, _flag, _kubelet_refused
from .pod_log import pick_container

if TYPE_CHECKING:
    from ..cluster import Cluster
    from ..node.containers import ContainerRuntime

PODS = BY_PATH[("", "pods")]
POLL = 0.05


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


async def handle_attach(request: web.Request, cluster: Cluster, ns: str, name: str) -> web.StreamResponse:
    q = request.query
    pod = cluster.store.get(PODS, ns, name)
    container = pick_container(pod, q.get("container", ""))
    if not pod["spec"].get("nodeName"):
        raise ApiError.bad_request(f"pod {name} does not have a host assigned")
    want_in, want_out, want_err = _flag(q, "stdin"), _flag(q, "stdout"), _flag(q, "stderr")
    if not (want_in or want_out or want_err):
        raise ApiError.bad_request("you must specify at least 1 of stdin, stdout, stderr")
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise ApiError.bad_request("Upgrade request required")
    crt = cluster.container_runtime(pod, container)
    if crt is None or crt.state != "running" or crt.pid is None or not crt.log_paths:
        return await _kubelet_refused(request, f'container not found ("{container}")')
    specs = (
        (pod["spec"].get("initContainers") or [])
        + pod["spec"]["containers"]
        + (pod["spec"].get("ephemeralContainers") or [])
    )
    spec = next(c for c in specs if c["name"] == container)
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=0)
    await ws.prepare(request)
    v5 = ws.ws_protocol == "v5.channel.k8s.io"
    out_channel = STDOUT if want_out else STDERR if want_err else None
    await ws.send_bytes(bytes([out_channel if out_channel is not None else ERROR]))
    log = crt.log_paths[-1]
    offset = log.stat().st_size  # what the container writes from now on
    loop = asyncio.get_running_loop()

    def stdin_done() -> None:
        if spec.get("stdinOnce"):
            close_stdin(crt)

    async def feed() -> None:
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                payload = msg.data.encode()
            elif msg.type == WSMsgType.BINARY:
                payload = msg.data
            else:
                break
            if not payload:
                continue
            if payload[0] == STDIN and want_in and crt.stdin_fd >= 0:
                with contextlib.suppress(OSError):
                    await loop.run_in_executor(None, _write_all, crt.stdin_fd, payload[1:])
            elif payload[0] == CLOSE and v5 and payload[1:2] == bytes([STDIN]) and want_in:
                stdin_done()
        if want_in:
            stdin_done()

    feeder = loop.create_task(feed())
    try:
        offset = await _follow(cluster, pod, container, crt, ws, out_channel, offset)
    finally:
        feeder.cancel()
    if not ws.closed:
        status = {"metadata": {}, "status": "Success"}
        await ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
        await ws.close()
    return ws


async def _follow(
    cluster: Cluster,
    pod: dict,  # type: ignore[type-arg]
    container: str,
    crt: ContainerRuntime,
    ws: web.WebSocketResponse,
    channel: int | None,
    offset: int,
) -> int:
    """Send what the container writes to its log until it exits (its pump has drained the pipe),
    is replaced, or the client goes away."""
    log = crt.log_paths[-1]
    while not ws.closed:
        pump = crt.log_pump
        done = (
            pump is None
            or pump.done()
            or crt.log_paths[-1] != log
            or cluster.container_runtime(pod, container) is not crt
        )
        with log.open("rb") as f:
            f.seek(offset)
            chunk = f.read()
        offset += len(chunk)
        if chunk and channel is not None:
            await ws.send_bytes(bytes([channel]) + chunk)
        if done:
            break
        await asyncio.sleep(POLL)
    return offset
