"""The run's cancellation: SIGINT or SIGTERM (a cancelled CI job) stops every workload, and no
write is sent after it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Cancel:
    """The run's cancellation (SIGINT/SIGTERM). Every request checks it first, and a write (the
    restart) is registered under the same lock that cancelling takes: after `cancel()` returns, no
    write can start, and `writes` says whether one had already started."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self.signal = 0
        self.at = 0.0
        self.writes = 0

    def cancel(self, signum: int) -> None:
        with self._lock:
            if not self._event.is_set():
                self.signal, self.at = signum, time.monotonic()
                self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def begin_write(self) -> bool:
        """Register a write about to be sent; False (and nothing registered) once cancelled."""
        with self._lock:
            if self._event.is_set():
                return False
            self.writes += 1
            return True


def until_done_or_cancelled(
    fn: Callable[[], T], *, cancel: Cancel, grace: float, on_cancel: Callable[[], None]
) -> T | None:
    """`fn()` on a daemon thread while the calling (main) thread only waits: its result, or None
    when a signal came and `fn` did not end within `grace` seconds (its thread is left behind; the
    process exits without it). The run's work (reads, parsing, plugins) is all on that thread, so
    a signal's handler runs here between two short waits, whatever the work is doing; `on_cancel`
    runs once, here, as soon as the signal is seen."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except BaseException as e:  # raised again in the main thread (or dropped after a signal)
            box["error"] = e

    thread = threading.Thread(target=target, name="rollout-verify run", daemon=True)
    thread.start()
    told = False
    while thread.is_alive():
        thread.join(0.05)
        if cancel.cancelled and not told:
            told = True
            on_cancel()
        if cancel.cancelled and time.monotonic() - cancel.at > grace:
            return None
    if "error" in box and not cancel.cancelled:
        raise box["error"]
    result: T | None = box.get("result")
    return result
