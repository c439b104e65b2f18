"""The one place that retries: connection errors, 5xx and 429 (honouring Retry-After), never
400/404/422, and never past the run's overall deadline."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Generator
from typing import Any, TypeVar, cast

import backoff

T = TypeVar("T")


class Deadline:
    """The whole run's time budget; every wait and retry draws from it."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.seconds = seconds
        self.end = clock() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - self._clock())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


class Transient(Exception):
    """A failure worth retrying; `retry_after` is the server's hint in seconds, if it gave one."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _waits(*, base: float, cap: float, deadline: Deadline) -> Generator[float | None, Any, None]:
    """Full-jitter exponential waits; a Retry-After hint replaces the computed wait. No wait
    outlasts the deadline (backoff's own cap is measured before the attempt, not after)."""
    exc: Any = yield None
    attempt = 0
    while True:
        hint = getattr(exc, "retry_after", None)
        wait = float(hint) if hint is not None else random.uniform(0, min(cap, base * 2**attempt))
        attempt += 1
        exc = yield max(0.0, min(wait, deadline.remaining()))


def call(fn: Callable[[], T], *, deadline: Deadline, base: float = 0.2, cap: float = 5.0) -> T:
    """Run `fn`, retrying `Transient` failures with backoff until the deadline runs out."""

    @backoff.on_exception(
        cast(
            "Callable[[], Generator[float, None, None]]",
            lambda: _waits(base=base, cap=cap, deadline=deadline),
        ),
        Transient,
        max_time=deadline.remaining,
        giveup=lambda _e: deadline.expired,
        jitter=None,
        raise_on_giveup=True,
        logger=None,
    )
    def attempt() -> T:
        return fn()

    return attempt()
