"""kube-proxy's part for the `kubernetes` Service: inside every pod, 10.96.0.1:443 (the Service's
ClusterIP, the KUBERNETES_SERVICE_HOST/PORT the kubelet sets) reaches the API server, so an
in-cluster client (client-go's rest.InClusterConfig, the Python client's load_incluster_config,
kubectl in a pod) works as in a real cluster.

A real node DNATs the ClusterIP to the apiserver's endpoint (pkg/proxy/iptables/proxier.go). Here
the pod's network namespace holds 10.96.0.1 on `lo` (sandbox.py) and a listening socket bound
there, created from inside the namespace (a socket keeps the namespace it was created in);
each connection is relayed byte for byte to the API server on the host's loopback, so TLS is end
to end: the client checks the serving certificate (which names 10.96.0.1) against the mounted
ca.crt and authenticates with its own token."""

from __future__ import annotations

import asyncio
import contextlib
import socket

from .dial import socket_in_netns

SERVICE_IP, SERVICE_PORT = "10.96.0.1", 443


async def open_relay(netns: str, apiserver_port: int) -> asyncio.AbstractServer:
    """Listen on 10.96.0.1:443 inside `netns`; every connection is piped to 127.0.0.1:apiserver_port."""
    sock = socket_in_netns(netns)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((SERVICE_IP, SERVICE_PORT))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", apiserver_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer), return_exceptions=True)
        for w in (up_writer, writer):
            with contextlib.suppress(OSError, RuntimeError):
                w.close()

    return await asyncio.start_server(serve, sock=sock)


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    except (OSError, asyncio.CancelledError):
        pass
    finally:  # a half-close goes through: the other direction may still be answering
        with contextlib.suppress(OSError, RuntimeError):
            if dst.can_write_eof():
                dst.write_eof()


async def close_relay(server: asyncio.AbstractServer | None) -> None:
    if server is not None:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), timeout=1)
