"""A container as the runtime sees it: its state and its pod's, images without a shell (from the
image catalogue), finding a binary inside the container's root, and resolving a named port."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..storage.store import Obj
from .images import DEFAULT_PATH, lookup
from .sandbox import Sandbox

__all__ = [
    "DEFAULT_PATH",
    "ContainerRuntime",
    "PodRuntime",
    "container_port",
    "enter_command",
    "kill_exec",
    "resolve_binary",
    "shell_less",
]


def shell_less(image: str) -> bool:
    """An image without a userland (distroless, scratch): nothing but its own programs to exec."""
    return not lookup(image).shell


def resolve_binary(name: str, root: str, path: str) -> str | None:
    """Find an executable as execve + PATH lookup would, inside `root` (a container's /proc/PID/root)."""
    if "/" in name:
        p = os.path.join(root, name.lstrip("/"))
        return name if os.path.isfile(p) and os.access(p, os.X_OK) else None
    for d in path.split(":"):
        if not d:
            continue
        p = os.path.join(root, d.lstrip("/"), name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.join(d, name)
    return None


def container_port(container: Obj, port: Any) -> int | None:
    """An IntOrString port: a number, or the containerPort of one of `container`'s named ports."""
    if isinstance(port, int):
        return port
    if isinstance(port, str) and port.isdigit():
        return int(port)
    for p in container.get("ports") or []:
        if p.get("name") == port:
            return int(p["containerPort"])
    return None


def enter_command(crt: ContainerRuntime) -> list[str]:
    """nsenter into a running container as the CRI's exec does: its mount, network and PID
    namespaces, its root and working directory, as its user and group (nsenter forks into the PID
    namespace, so the command sees the container's processes and is one of them)."""
    # setpriv inside: the bounding set is dropped while still root, then the user switched
    who = [f"--bounding-set={crt.caps}"] if crt.caps else []
    if crt.uid or crt.gid:
        who += [f"--reuid={crt.uid}", f"--regid={crt.gid}", "--clear-groups"]
    setpriv = ["/usr/bin/setpriv", *who, "--"] if who else []
    return ["/usr/bin/nsenter", "-t", str(crt.pid), "-m", "-n", "-p", "-r", "-w", "--", *setpriv]


def kill_exec(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL an exec'd command: nsenter's child in the container first (killing nsenter alone
    would leave it running there), then nsenter."""
    with contextlib.suppress(OSError), open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
        for kid in f.read().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(kid), signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


# -- runtime state ---------------------------------------------------------------------------


@dataclass
class ContainerRuntime:
    name: str
    image: str
    pid: int | None = None
    proc: asyncio.subprocess.Process | None = None
    env: dict[str, str] = field(default_factory=dict)
    state: str = "waiting"  # waiting | running | terminated
    reason: str = "ContainerCreating"
    message: str = ""
    started_at: str = ""
    restarts: int = 0
    last_exit: dict[str, Any] | None = None  # the latest termination
    prev_exit: dict[str, Any] | None = None  # the one before it (lastState while state is terminated)
    container_id: str = ""
    log_paths: list[Path] = field(default_factory=list)
    log_pump: asyncio.Task[None] | None = None  # copying the running container's output to its log
    ready: bool = False  # running and (no readinessProbe, or the probe passed)
    started: bool = False  # running and (no startupProbe, or the probe passed)
    stdin_fd: int = -1  # the write end of an open stdin (`stdin: true`), kept until the process ends
    # why the kubelet is stopping it (a failed liveness/startup probe), so its exit is not a crash
    killing: str = ""
    backoff: float = 0.0  # the kubelet's restart back-off for it now (0: none yet)
    backoff_at: float = 0.0  # when the back-off was last stepped (monotonic)
    hook_error: str = ""  # why its postStart hook failed at its last start (PostStartHookError)
    uid: int = 0  # the process's user and group (runAsUser/runAsGroup, else the image's)
    gid: int = 0
    caps: str = ""  # its capability bounding set as setpriv takes it ("": all, privileged)
    stands_in: bool = False  # runs a stand-in for an image's server (images.py), which stops on SIGTERM


@dataclass
class PodRuntime:
    uid: str
    namespace: str
    name: str
    pod: Obj
    dir: Path
    containers: dict[str, ContainerRuntime] = field(default_factory=dict)
    volumes: dict[str, Path] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    stopping: bool = False
    ip: str = ""
    sandbox: Sandbox | None = None  # the pod's network namespace (a pause process)
    relay: asyncio.AbstractServer | None = None  # 10.96.0.1:443 in its namespace (kubeproxy.py)
    initialized: bool = False  # every init container done (or, for a sidecar, started)
    init_failed: bool = False  # an init container failed under restartPolicy Never
    ephemeral_tasks: list[asyncio.Task[None]] = field(default_factory=list)  # kubectl debug's
