"""The exec's thread pool: a call that never returns is given up and never holds the process."""

from __future__ import annotations

import threading
import time

import pytest

from verify.kube.daemons import Daemons


def test_a_call_that_never_returns_is_given_up_at_its_timeout() -> None:
    pool = Daemons()
    forever = threading.Event()
    t0 = time.monotonic()
    assert pool.run(forever.wait, timeout=0.2) is None
    assert 0.2 <= time.monotonic() - t0 < 1.0
    # the stuck thread is a daemon: the interpreter's exit does not wait for it
    stuck = [t for t in threading.enumerate() if t.name == "rollout-verify exec"]
    assert stuck and all(t.daemon for t in stuck)
    assert pool.run(lambda: 42, timeout=1.0) == 42  # a new thread takes the stuck one's place
    forever.set()


def test_threads_are_reused_between_calls() -> None:
    pool = Daemons()
    before = threading.active_count()
    for i in range(50):
        assert pool.run(lambda i=i: i * 2, timeout=1.0) == i * 2
    assert threading.active_count() - before <= 2


def test_a_calls_exception_is_raised_to_its_caller() -> None:
    def broken() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        Daemons().run(broken, timeout=1.0)
