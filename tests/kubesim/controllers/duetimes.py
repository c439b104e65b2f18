"""When each object a controller keeps on a clock must be synced next (a workqueue's AddAfter),
so the manager's tick enqueues only those whose time has come and an idle controller costs
nothing."""

from __future__ import annotations

import time

Key = tuple[str, str]  # namespace, name


class DueTimes:
    def __init__(self) -> None:
        self._at: dict[Key, float] = {}

    def after(self, key: Key, seconds: float) -> None:
        self._at[key] = time.monotonic() + seconds

    def cancel(self, key: Key) -> None:
        self._at.pop(key, None)

    def due(self) -> list[Key]:
        now = time.monotonic()
        return [key for key, at in self._at.items() if at <= now]
