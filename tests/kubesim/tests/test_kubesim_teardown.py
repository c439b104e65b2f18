"""Stopping a cluster leaves nothing behind: a process its loop started that no kubelet had taken
charge of yet (a container whose start was under way when the test ended) used to keep running,
and its transport, collected after the loop had closed, printed `RuntimeError: Event loop is
closed` in whatever test ran next (the next cluster's child watcher also warned of pending
handlers). Both showed in a passing `make test`."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
import warnings
from typing import Any

from tests.kubesim import Cluster, Knobs


def test_stopping_a_cluster_kills_and_reaps_every_process_its_loop_started(tmp_path: Any) -> None:
    unraisable: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}")
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            cluster = Cluster(nodes=1, knobs=Knobs(), root=str(tmp_path / "one")).start()
            started: dict[str, int] = {}

            async def orphan() -> None:  # a process with an open pipe that nobody will stop
                proc = await asyncio.create_subprocess_exec("sleep", "60", stdout=asyncio.subprocess.PIPE)
                started["pid"] = proc.pid
                assert proc.stdout is not None
                await proc.stdout.read()

            assert cluster.loop is not None
            asyncio.run_coroutine_threadsafe(orphan(), cluster.loop)
            end = time.monotonic() + 30
            while "pid" not in started and time.monotonic() < end:
                time.sleep(0.01)
            cluster.stop()
            gc.collect()
            # the next cluster replaces the child watcher: the old one must have nothing pending
            Cluster(nodes=1, knobs=Knobs(), root=str(tmp_path / "two")).start().stop()
            gc.collect()
    finally:
        sys.unraisablehook = hook
    assert "pid" in started
    try:
        os.kill(started["pid"], 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, "the process outlived its cluster"
    assert unraisable == []
    assert [str(w.message) for w in warned if issubclass(w.category, RuntimeWarning)] == []
