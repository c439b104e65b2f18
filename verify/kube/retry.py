"""The one place that retries: connection errors, 5xx, 429 (honouring Retry-After) and the
transient 403 a starting apiserver gives, never 400/404/422 or a real RBAC denial, and never past
the run's overall deadline.

What real apiservers send while they upgrade or lose a dependency (kubernetes/kubernetes, traced in
the source, not seen live):

- an authorizer that fails (a webhook authorizer timing out, with either failurePolicy) makes
  `WithAuthorization` answer 500 `Internal error occurred: ...`, never 403: a 5xx, retried;
- an admission plugin whose informers have not synced yet (NamespaceLifecycle, the admission
  webhook dispatchers, ServiceAccount, ...) refuses writes and CONNECTs (pods/exec) with 403
  `<resource> "<name>" is forbidden: not yet ready to handle request`: the one recognisable
  transient 403, retried;
- an unavailable aggregated API answers 503, a shutting-down apiserver 429 with Retry-After, and
  etcd leader changes 500: all retried;
- RBAC's own denial (`User "u" cannot <verb> resource "r" ...`, even with an `RBAC: ... not found`
  reason appended) is indistinguishable from a real missing rule and is never retried.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Generator
from typing import Any, TypeVar, cast

from verify.kube.cancel import Cancel

T = TypeVar("T")


class Deadline:
    """The whole run's time budget; every wait and retry draws from it. A cancelled run has no
    time left."""

    def __init__(
        self,
        seconds: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        cancel: Cancel | None = None,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self._clock = clock
        self.seconds = seconds
        self.end = clock() + seconds
        self.cancel = cancel
        # told when retries have gone on for RETRYING_FIRST seconds, then every RETRYING_EVERY
        self.notice = notice
        self.wall_end = time.time() + seconds

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.cancelled

    def remaining(self) -> float:
        if self.cancelled:
            return 0.0
        return max(0.0, self.end - self._clock())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


class Transient(Exception):
    """A failure worth retrying; `retry_after` is the server's hint in seconds, if it gave one.
    `cut`: the deadline ended the attempt mid-way (kube.transport cuts every read at it), so it
    saw no answer of its own and an earlier attempt's refusal stays the verdict (see `call`)."""

    def __init__(self, message: str, *, retry_after: float | None = None, cut: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.cut = cut


# 403 messages that say "not now" rather than "not you" (see the module docstring)
TRANSIENT_FORBIDDEN = ("not yet ready to handle request",)
_RBAC_DENIAL = re.compile(r"\bcannot [a-z]+ (resource|path) ")


def retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def rbac_denial(message: str) -> bool:
    """RBAC's own 403 (`User "u" cannot <verb> resource "r" ...`), as opposed to an admission
    webhook's or a warming-up apiserver's."""
    return bool(_RBAC_DENIAL.search(message))


def transient_forbidden(message: str) -> bool:
    """A 403 from an apiserver that is still warming up, never an authorization decision."""
    if rbac_denial(message):
        return False
    return any(marker in message for marker in TRANSIENT_FORBIDDEN)


def retryable(status: int, message: str = "") -> bool:
    """Whether an HTTP answer is worth asking again: 5xx, 429, or a transient 403."""
    return retryable_status(status) or (status == 403 and transient_forbidden(message))


# The shortest pause between two attempts, whatever Retry-After says: a server answering
# `Retry-After: 0` (or full jitter drawing ~0) would otherwise be asked hundreds of times a second.
# Jittered, so that the execs of one run refused together do not come back in step.
MIN_PAUSE = 0.1
MIN_PAUSE_JITTER = 0.05


def min_pause() -> float:
    return MIN_PAUSE + random.uniform(0, MIN_PAUSE_JITTER)


def _waits(*, base: float, cap: float, deadline: Deadline) -> Generator[float | None, Any, None]:
    """Full-jitter exponential waits; a Retry-After hint replaces the computed wait; none shorter
    than `min_pause()`. No wait outlasts the deadline (backoff's own cap is measured before the
    attempt, not after)."""
    exc: Any = yield None
    attempt = 0
    while True:
        hint = getattr(exc, "retry_after", None)
        wait = float(hint) if hint is not None else random.uniform(0, min(cap, base * 2**attempt))
        attempt += 1
        exc = yield max(0.0, min(max(wait, min_pause()), deadline.remaining()))


class Backoff:
    """The waits of `call` for a loop that cannot be one call (a watch resumed after each fault,
    with events in between): full jitter, Retry-After honoured, never past the deadline."""

    def __init__(self, *, deadline: Deadline, base: float = 0.2, cap: float = 5.0) -> None:
        self._deadline, self._base, self._cap = deadline, base, cap
        self.reset()

    def reset(self) -> None:
        """The loop made progress: the next fault waits the shortest again."""
        self._waits = _waits(base=self._base, cap=self._cap, deadline=self._deadline)
        next(self._waits)

    def sleep(self, exc: Transient) -> None:
        wait = self._waits.send(exc)
        if wait:
            time.sleep(wait)


class Cadence:
    """When a long wait is worth a line: first after `first` seconds, then every `every`; `restart`
    when things moved (nothing is said while they move)."""

    def __init__(self, *, first: float = 10.0, every: float = 30.0) -> None:
        self.first, self.every = first, every
        self.restart()

    def restart(self) -> None:
        self.at = time.monotonic() + self.first

    def due(self) -> bool:
        """True (once, then not for `every` seconds) when a line is due."""
        if time.monotonic() < self.at:
            return False
        self.at = time.monotonic() + self.every
        return True

    def seconds_left(self) -> float:
        return max(0.0, self.at - time.monotonic())


class _Notices:
    """One line when a call has been retrying for 10 s, then at most every 30 s: an unreachable or
    throttling API server is not a silent wait until the deadline."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.cadence = Cadence()

    def __call__(self, details: Any) -> None:
        if self.deadline.notice is None or not self.cadence.due():
            return
        until = time.strftime("%H:%M:%S", time.localtime(self.deadline.wall_end))
        exc = details.get("exception")
        what = str(exc) if isinstance(exc, Transient) else "no answer"
        self.deadline.notice(f"{what}; retrying until {until} (--timeout)")


def call(fn: Callable[[], T], *, deadline: Deadline, base: float = 0.2, cap: float = 5.0) -> T:
    """Run `fn`, retrying `Transient` failures with backoff until the deadline runs out; what it
    raises then is the last failure, except that an attempt the deadline cut (`cut`) after a
    refusal leaves that refusal the verdict: the attempt the backoff starts with what it left of
    the deadline is no server that never answered.

    The first attempt runs before backoff is imported: nearly every call succeeds at once, and
    importing backoff (it imports asyncio) was a tenth of a run's CPU before its first request. A
    failed first attempt is handed to backoff as its own first failure, so the waits, the notices
    and the give-up are backoff's, as for every later attempt."""
    asked = [time.monotonic()]
    try:
        return fn()
    except Transient as e:
        failed: list[Transient] = [e]
    import backoff

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
        on_backoff=_Notices(deadline),
    )
    def attempt() -> T:
        if first:
            raise first.pop()  # the attempt made above, as backoff's first
        if deadline.expired or time.monotonic() - asked[0] < MIN_PAUSE:
            # the wait took what was left (backoff cut it to its own max_time): no request past
            # the deadline, none sooner than the minimum pause after the last
            raise last[0]
        asked[0] = time.monotonic()
        try:
            return fn()
        except Transient as e:
            if not e.cut or last[0].cut:
                last[:] = [e]
            raise last[0] from None

    first, last = list(failed), failed
    return attempt()
