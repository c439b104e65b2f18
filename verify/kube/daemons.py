"""Daemon threads for calls that may never return (an exec's WebSocket has no socket
timeout): the caller waits with a limit and gives up."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class _Box(Generic[T]):
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


class Daemons:
    """A given-up call keeps its thread and a new one is started when none is idle, so the pool
    never shrinks, and exit never waits for a stuck thread. Threads are reused: starting one per
    call costs ~0.3 ms of CPU."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], _Box[Any]]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def run(self, fn: Callable[[], T], *, timeout: float) -> T | None:
        """`fn()`, or None once `timeout` seconds have passed; its exceptions are raised here."""
        box: _Box[T] = _Box()
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        if spawn:
            threading.Thread(target=self._work, name="rollout-verify exec", daemon=True).start()
        self._queue.put((fn, box))
        if not box.done.wait(timeout):
            return None
        if box.error is not None:
            raise box.error
        return box.value

    def _work(self) -> None:
        while True:
            fn, box = self._queue.get()
            try:
                box.value = fn()
            except BaseException as e:  # handed to the caller, raised there
                box.error = e
            with self._lock:
                self._idle += 1
            box.done.set()
