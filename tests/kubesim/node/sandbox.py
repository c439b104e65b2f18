"""Pod sandboxes: one network namespace per pod, as a container runtime's pause container: a
process in a new network namespace with `lo` up and an `eth0` holding the pod IP; every container
of the pod joins it (so they share localhost, and two pods may both listen on 8080). Pods cannot
reach each other (there is no bridge between the namespaces); `lo` also holds 10.96.0.1, the
`kubernetes` Service, which reaches the API server (kubeproxy.py). Also each node's podCIDR and
IPAM."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import shutil
import signal
from dataclasses import dataclass

IP_BIN = shutil.which("ip") or "/usr/sbin/ip"


# -- addresses ----------------------------------------------------------------------------------


def pod_cidr(index: int) -> str:
    """Node `index` (1-based) owns a /20 of 10.244.0.0/14: room for 4000 pods per node."""
    block = index - 1
    return f"10.{244 + block // 16}.{(block % 16) * 16}.0/20"


class Ipam:
    """host-local IPAM for one node: round robin over the node's podCIDR, skipping addresses in use."""

    def __init__(self, cidr: str) -> None:
        self.net = ipaddress.ip_network(cidr)
        self.used: set[str] = set()
        self._next = 2

    def allocate(self) -> str:
        size = self.net.num_addresses
        for _ in range(size):
            off = self._next
            self._next = self._next + 1 if self._next + 1 < size - 1 else 2
            ip = str(self.net.network_address + off)
            if off & 0xFF in (0, 255) or ip in self.used:
                continue
            self.used.add(ip)
            return ip
        raise SandboxError(
            f"failed to allocate for range 0: no IP addresses available in range set: {self.net}"
        )

    def release(self, ip: str) -> None:
        self.used.discard(ip)


# -- sandboxes ---------------------------------------------------------------------------------


class SandboxError(Exception):
    """The pod's network namespace could not be set up."""


@dataclass
class Sandbox:
    """The pause process holding a pod's network namespace."""

    ip: str
    proc: asyncio.subprocess.Process

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def netns(self) -> str:
        return f"/proc/{self.proc.pid}/ns/net"

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None


async def create_sandbox(ip: str) -> Sandbox:
    """`unshare -n` a pause process; lo up, eth0 (one end of a veth pair) holds the pod IP.
    The pause process lets go of its pipes once ready, so a pod costs no file descriptor here."""
    batch = "\n".join(
        [
            "link set lo up",
            # the `kubernetes` Service's ClusterIP, where kubeproxy.py relays to the API server
            "addr add 10.96.0.1/32 dev lo",
            "link add eth0 type veth peer name kubesim0",
            f"addr add {ip}/32 dev eth0",
            "link set kubesim0 up",
            "link set eth0 up",
            "",
        ]
    )
    script = f"printf '%s' '{batch}' | {IP_BIN} -batch - && echo ready && exec /usr/bin/sleep infinity >/dev/null 2>&1"
    proc = await asyncio.create_subprocess_exec(
        "/usr/bin/unshare",
        "-n",
        "--",
        "/bin/sh",
        "-c",
        script,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        close_fds=False,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
    except TimeoutError:
        line = b""
    except BaseException:  # cancelled (the pod went away): leave no pause process behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    if line.strip() != b"ready":
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        err = b""
        with contextlib.suppress(TimeoutError):
            err = await asyncio.wait_for(proc.stderr.read(), timeout=5)
        await proc.wait()
        raise SandboxError(
            "failed to setup network for sandbox: " + (err.decode(errors="replace").strip() or "unknown")
        )
    return Sandbox(ip, proc)


async def destroy_sandbox(sb: Sandbox) -> None:
    if sb.proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sb.proc.pid, signal.SIGKILL)
    await sb.proc.wait()
