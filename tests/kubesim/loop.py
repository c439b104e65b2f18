"""kubesim's event loop: the API server, controllers and kubelets all run on one, and its
processes (containers, execs, probes, sandboxes) are its own to stop when the cluster stops."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import weakref
from typing import Any


class Loop(asyncio.SelectorEventLoop):
    """kubesim's loop: it knows every process it started, so that stopping the cluster can kill
    and reap each one, also those no kubelet knows yet (a container whose start was under way)."""

    def __init__(self) -> None:
        super().__init__()
        self.processes: weakref.WeakSet[asyncio.SubprocessTransport] = weakref.WeakSet()

    async def _make_subprocess_transport(self, *args: Any, **kwargs: Any) -> Any:
        transport = await super()._make_subprocess_transport(*args, **kwargs)  # type: ignore[misc]
        self.processes.add(transport)
        return transport


def finish(loop: Loop) -> None:
    """What asyncio.run does before it closes its loop (no task left pending), and the processes:
    each still running is killed (its process group when it leads one), reaped and its pipes closed
    while the loop runs. A process left running kept its transport's pipes open: collected after
    the loop closed, the transport raised `RuntimeError: Event loop is closed` in whatever test ran
    then, and the next cluster's child watcher warned of pending handlers."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=5))
    for transport in list(loop.processes):
        pid = transport.get_pid()
        if transport.get_returncode() is not None or pid is None:
            continue
        # unreaped, the pid (and the group it may lead) is still this process's
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGKILL)

    async def reaped() -> None:
        end = loop.time() + 5
        while any(t.get_returncode() is None for t in loop.processes) and loop.time() < end:
            await asyncio.sleep(0.01)
        for transport in list(loop.processes):
            transport.close()
        await asyncio.sleep(0)  # the pipes' connection_lost callbacks

    loop.run_until_complete(reaped())
    loop.run_until_complete(loop.shutdown_asyncgens())


def pidfd_watcher(loop: asyncio.AbstractEventLoop) -> None:
    """Reap container and exec processes via pidfd on the loop, not one waiter thread per child
    (asyncio's default), which costs more than the exec itself at hundreds of execs."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            watcher = asyncio.PidfdChildWatcher()
            watcher.attach_loop(loop)
            asyncio.get_event_loop_policy().set_child_watcher(watcher)
        except (AttributeError, OSError, NotImplementedError):
            pass  # older kernels: keep the default watcher
