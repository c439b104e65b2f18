"""`pods/exec` over WebSocket (v4/v5 channel protocols) running the argv inside the container."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from ..node.containers import (
    DEFAULT_PATH,
    ContainerRuntime,
    enter_command,
    kill_exec,
    resolve_binary,
    shell_less,
)
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from .pod_log import pick_container

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def _flag(q: Any, name: str) -> bool:
    v = q.get(name)
    return v is not None and v.lower() not in ("0", "false")


def _oci_error(container_id: str, binary: str) -> dict[str, Any]:
    inner = (
        "error executing command in container: failed to exec in container: failed to start exec "
        f'"{container_id}": OCI runtime exec failed: exec failed: unable to start container process: '
        f'exec: "{binary}": executable file not found in $PATH: unknown'
    )
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {inner}",
        "reason": "InternalError",
        "details": {"causes": [{"message": inner}]},
        "code": 500,
    }


def _exit_status(argv: list[str], code: int) -> dict[str, Any]:
    """The error-channel Status of a finished command."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], exit code {code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


# request key: the injected fault (Fault(via="kubelet")) the kubelet answers this exec with
KUBELET_REFUSAL: web.RequestKey[Any] = web.RequestKey("kubelet_refusal", object)
# what kubernetes pkg/kubelet/cri/streaming/errors.go WriteError writes: the gRPC error's text,
# 429 with Retry-After (the streaming request cache's TTL, 1 min) for too many in-flight streams
_KUBELET_TEXT = {
    404: 'rpc error: code = NotFound desc = failed to find container "c0ffee": not found',
    429: "rpc error: code = ResourceExhausted desc = maximum number of in-flight requests exceeded",
    500: "rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: "
    'dial unix /run/containerd/containerd.sock: connect: connection refused"',
}
# a proxy in front of the API server: nginx's error pages (ngx_http_special_response.c)
_NGINX_TITLES = {
    408: "408 Request Time-out",
    502: "502 Bad Gateway",
    503: "503 Service Temporarily Unavailable",
    504: "504 Gateway Time-out",
}
SIGN_IN_PAGE = "<html><head><title>Sign in</title></head><body>Sign in to continue</body></html>"
# a 101 whose Sec-WebSocket-Accept answers no key (RFC 6455 4.1: the client must fail the
# connection), then the connection closes
BROKEN_UPGRADE = (
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Accept: bm90IHRoZSBhY2NlcHQ=\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n"
)


def proxy_page(status: int) -> web.Response:
    """A proxy's own error page for `status` (nginx's markup)."""
    title = _NGINX_TITLES.get(status, f"{status} Error")
    page = (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>"
        "\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    )
    return web.Response(status=status, text=page, content_type="text/html")


async def _kubelet_refused(
    request: web.Request, reason: str, status: int = 500, retry_after: int = 0
) -> web.StreamResponse:
    """The kubelet refusing the stream (its `streaming.WriteError`: plain text, 500 unless said).

    A client offering v5.channel.k8s.io meets an apiserver >= 1.30's StreamTranslator: the
    WebSocket is upgraded first, the kubelet's refusal then arrives on the error channel as
    `NewInternalError("unable to upgrade connection: ...")`. Otherwise (v4) the apiserver's
    proxy passes the kubelet's answer through unchanged."""
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
    if "v5.channel.k8s.io" not in offered:
        headers = {"Retry-After": str(retry_after)} if retry_after else {}
        return web.Response(status=status, text=reason, content_type="text/plain", headers=headers)
    ws = web.WebSocketResponse(protocols=("v5.channel.k8s.io",), max_msg_size=0)
    await ws.prepare(request)
    cause = f"unable to upgrade connection: {reason}"
    status = ApiError(500, "InternalError", f"Internal error occurred: {cause}").status()
    status["details"] = {"causes": [{"message": cause}]}
    await ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
    await ws.close()
    return ws


async def _runtime_attempt(crt: ContainerRuntime, env: dict[str, str]) -> None:
    """What the runtime does before it knows a program is missing: runc's exec enters the
    container's namespaces as its user (kubesim: the nsenter any exec runs through) and fails at
    execve. On a node the failure reaches the client only after that and the apiserver's round
    trip to the kubelet (apiserver pkg/util/proxy/streamtranslator.go: the WebSocket's first empty
    frame, then the SPDY exec to the kubelet, then the Status on the error channel), never in the
    same breath as the first frame. kubectl <= 1.33 starts reading frames before it has created
    its streams (client-go tools/remotecommand/websocket.go, fixed in 1.34 by waiting on
    readyChan), so a Status sent with the first frame could be discarded ("Unknown stream id 3")
    and the close end the session as "closed all streams"."""
    with contextlib.suppress(OSError):
        proc = await asyncio.create_subprocess_exec(
            *enter_command(crt), "/bin/sh", "-c", ":",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL, env=env, close_fds=False,
        )  # fmt: skip
        await proc.wait()


async def handle_exec(request: web.Request, cluster: Cluster, ns: str, name: str) -> web.StreamResponse:
    q = request.query
    cluster.exec_request_lines.append(len(f"{request.method} {request.raw_path} HTTP/1.1"))
    argv = q.getall("command", [])
    pod = cluster.store.get(PODS, ns, name)
    container = pick_container(pod, q.get("container", ""))
    if not pod["spec"].get("nodeName"):
        raise ApiError.bad_request(f"pod {name} does not have a host assigned")
    if not argv:
        raise ApiError.bad_request("you must specify at least 1 command")
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise ApiError.bad_request("Upgrade request required")
    refusal = request.get(KUBELET_REFUSAL)
    if refusal is not None:
        text = refusal.message or _KUBELET_TEXT.get(refusal.status, _KUBELET_TEXT[500])
        after = 60 if refusal.status == 429 else 0
        return await _kubelet_refused(request, text, refusal.status, after)
    crt = cluster.container_runtime(pod, container)
    if crt is None or crt.state != "running" or crt.pid is None or name in cluster.knobs.exec_not_running:
        cluster.knobs.exec_not_running.discard(name)
        return await _kubelet_refused(request, f'container not found ("{container}")')

    if name in cluster.knobs.exec_hang_upgrade:
        cluster.note_fault("exec-hang-upgrade")
        await asyncio.Event().wait()  # until the client goes away (aiohttp cancels the handler)
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=0)
    await ws.prepare(request)
    v5 = ws.ws_protocol == "v5.channel.k8s.io"
    want_in, want_out, want_err = _flag(q, "stdin"), _flag(q, "stdout"), _flag(q, "stderr")
    tty = _flag(q, "tty")
    first = STDOUT if want_out else STDERR if want_err else ERROR
    await ws.send_bytes(bytes([first]))
    if name in cluster.knobs.exec_hang:
        # upgraded, then silence until the client gives up (a wedged runtime or kubelet stream)
        cluster.note_fault("exec-hang")
        async for _ in ws:
            pass
        return ws
    # `exec_latency` (see Knobs): nothing reaches the client before it has passed
    latency = asyncio.ensure_future(asyncio.sleep(cluster.knobs.exec_latency))
    if cluster.knobs.exec_command_after_latency:
        await latency

    env = dict(crt.env)
    root = f"/proc/{crt.pid}/root"
    binary = None if shell_less(crt.image) else resolve_binary(argv[0], root, env.get("PATH", DEFAULT_PATH))
    if binary is None:
        await _runtime_attempt(crt, env)
        await latency
        await ws.send_bytes(bytes([ERROR]) + json.dumps(_oci_error(crt.container_id[13:], argv[0])).encode())
        await ws.close()
        return ws
    if name in cluster.knobs.delete_during_exec:
        # the pod is force-deleted while the command runs: the kubelet kills its containers and
        # the exec'd process with them, and the runtime reports SIGKILL's exit code
        cluster.knobs.delete_during_exec.discard(name)
        cluster.note_fault("exec-delete")
        await latency
        with contextlib.suppress(ApiError):
            cluster.delete_object(PODS, ns, name, grace=0, propagation="Background")
        await ws.send_bytes(bytes([ERROR]) + json.dumps(_exit_status(argv, 137)).encode())
        await ws.close()
        return ws
    try:
        proc = await asyncio.create_subprocess_exec(
            *enter_command(crt),
            *argv,
            stdin=asyncio.subprocess.PIPE if want_in else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if tty else asyncio.subprocess.PIPE,
            env=env,
            # no new session: lets CPython vfork/posix_spawn instead of fork()ing this big process
            close_fds=False,
        )
    except OSError as e:
        await latency
        await ws.send_bytes(bytes([ERROR]) + json.dumps(ApiError.internal(str(e)).status()).encode())
        await ws.close()
        return ws

    async def pump(stream: asyncio.StreamReader | None, ch: int, wanted: bool) -> None:
        if stream is None:
            return
        while True:
            chunk = await stream.read(32 * 1024)
            await latency
            if not chunk:
                return
            if wanted and not ws.closed:
                await ws.send_bytes(bytes([ch]) + chunk)

    async def feed() -> None:
        async for msg in ws:
            if msg.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                break
            if msg.type == WSMsgType.TEXT:
                # the official Python client writes str stdin as text frames (chr(channel) + data);
                # the apiserver reads a frame's payload whatever its opcode
                payload = msg.data.encode()
            elif msg.type == WSMsgType.BINARY:
                payload = msg.data
            else:
                continue
            if not payload:
                continue
            ch, data = payload[0], payload[1:]
            if ch == STDIN and proc.stdin is not None:
                proc.stdin.write(data)
                with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                    await proc.stdin.drain()
            elif ch == CLOSE and v5 and data[:1] == bytes([STDIN]) and proc.stdin is not None:
                proc.stdin.close()
        # the client went away: nothing will read the output any more
        if proc.returncode is None:
            kill_exec(proc)

    feeder = asyncio.get_running_loop().create_task(feed())
    try:
        await asyncio.gather(pump(proc.stdout, STDOUT, want_out), pump(proc.stderr, STDERR, want_err or tty))
        code = await proc.wait()
        await latency
    finally:
        if not latency.done():
            # RuntimeError: a handler still running at shutdown is finalized after the loop closed
            with contextlib.suppress(RuntimeError):
                latency.cancel()
        if proc.returncode is None:
            kill_exec(proc)
    if code < 0:
        code = 128 - code  # killed by a signal: the runtime reports 128 + signal, e.g. 137
    status = _exit_status(argv, code)
    if not ws.closed:
        await ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
        await ws.close()
    feeder.cancel()
    return ws
