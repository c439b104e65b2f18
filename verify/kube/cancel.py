"""The run's cancellation: SIGINT or SIGTERM (a cancelled CI job) stops every workload, and no
write is sent after it."""

from __future__ import annotations

import threading
import time


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
