"""A container's memory limit, as its cgroup's OOM killer enforces it on a real node, emulated
cheaply: kubesim runs no cgroups, so a watcher sums the resident memory (RSS) of the container's
process tree every `PERIOD` seconds and, once it exceeds `resources.limits.memory`, SIGKILLs the
container's processes; the kubelet then reports `OOMKilled` with exit code 137, as the runtime
does after the kernel's kill. A process that grows and shrinks between two polls is not caught,
and page cache and kernel memory are not counted (a cgroup counts both)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from ..storage.quantity import BadQuantity, whole
from ..storage.store import Obj

PERIOD = 0.1
_PAGE = os.sysconf("SC_PAGE_SIZE")


def memory_limit(c: Obj) -> int | None:
    """The container's `resources.limits.memory` in bytes (None: unlimited)."""
    value = ((c.get("resources") or {}).get("limits") or {}).get("memory")
    if value is None:
        return None
    try:
        return whole(value) or None
    except BadQuantity:
        return None


def _children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(x) for x in f.read().split())
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += _rss(p)
        todo.extend(_children(p))
    return total


async def watch_memory(proc: asyncio.subprocess.Process, limit: int) -> bool:
    """Poll until the process ends; True if it went over `limit` and was killed for it."""
    while proc.returncode is None:
        if tree_rss(proc.pid) > limit:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            return True
        await asyncio.sleep(PERIOD)
    return False
