"""Dialing into a pod's network namespace, as the API server (pods/proxy, services/proxy) and the
kubelet's probes reach a pod: by its IP, from a thread that entered the pod's namespace for the
socket() call. One blocking HTTP exchange (run it in a worker thread), with Go's net error texts."""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import os
import socket
import ssl
from dataclasses import dataclass

CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int, nstype: int) -> None:
    if _libc.setns(fd, nstype) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def socket_in_netns(netns: str) -> socket.socket:
    """A TCP socket created inside `netns` (a socket keeps the namespace it was created in).

    The calling thread enters the namespace only for the socket() call and goes back at once."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(netns, os.O_RDONLY)
    except OSError:
        os.close(own)
        raise
    try:
        _setns(target, CLONE_NEWNET)
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            _setns(own, CLONE_NEWNET)
    finally:
        os.close(target)
        os.close(own)


class DialError(Exception):
    """The backend could not be reached; the message is Go's net error text."""


@dataclass
class Upstream:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


def _go_error(op: str, ip: str, port: int, e: BaseException, sock: socket.socket | None = None) -> str:
    """Go's net.OpError text for a failed dial/read, e.g. `dial tcp 10.244.0.5:8080: connect: connection refused`."""
    if isinstance(e, TimeoutError | socket.timeout):
        return f"{op} tcp {ip}:{port}: i/o timeout"
    if isinstance(e, http.client.RemoteDisconnected | http.client.IncompleteRead):
        return "EOF"
    errno_text = {
        111: "connection refused",
        113: "no route to host",
        101: "network is unreachable",
        104: "connection reset by peer",
        110: "connection timed out",
    }
    text = errno_text.get(getattr(e, "errno", None) or 0, str(getattr(e, "strerror", None) or e).lower())
    if op == "dial":
        return f"dial tcp {ip}:{port}: connect: {text}"
    local = ""
    if sock is not None:
        with contextlib.suppress(OSError):
            la = sock.getsockname()
            local = f"{la[0]}:{la[1]}->"
    return f"read tcp {local}{ip}:{port}: read: {text}"


def exchange(
    netns: str | None,
    ip: str,
    port: int,
    scheme: str,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    timeout: float,
) -> Upstream:
    """One HTTP request to ip:port inside `netns` (blocking; run it in a worker thread)."""
    if netns is None:
        raise DialError(_go_error("dial", ip, port, OSError(113, "no route to host")))
    try:
        sock = socket_in_netns(netns)
    except OSError as e:
        raise DialError(_go_error("dial", ip, port, OSError(113, "no route to host"))) from e
    try:
        sock.settimeout(timeout)
        try:
            sock.connect((ip, port))
        except OSError as e:
            raise DialError(_go_error("dial", ip, port, e)) from e
        conn: http.client.HTTPConnection
        if scheme == "https":
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            try:
                wrapped = ctx.wrap_socket(sock)
            except (OSError, ssl.SSLError) as e:
                raise DialError(f"remote error: tls: {e}") from e
            conn = http.client.HTTPSConnection(ip, port, timeout=timeout, context=ctx)
            conn.sock = wrapped
        else:
            conn = http.client.HTTPConnection(ip, port, timeout=timeout)
            conn.sock = sock
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                conn.putheader(k, v)
            conn.endheaders(body if body or method in ("POST", "PUT", "PATCH") else None)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise DialError(_go_error("read", ip, port, e, sock)) from e
        finally:
            conn.close()
        return Upstream(resp.status, resp.reason, list(resp.getheaders()), data)
    finally:
        with contextlib.suppress(OSError):
            sock.close()


def tcp_probe(netns: str, ip: str, port: int, timeout: float) -> bool:
    """A tcpSocket probe: can a connection to ip:port be opened inside `netns`?"""
    try:
        sock = socket_in_netns(netns)
    except OSError:
        return False
    try:
        sock.settimeout(timeout)
        sock.connect((ip, port))
        return True
    except OSError:
        return False
    finally:
        sock.close()
