"""What a failing pod says for itself, as Shopify's krane shows a doomed one: its container's last
log lines and its last warning events, one line each (every output escapes them, as it does any
text from the cluster: platforms/logs.py and the report writers). Read only for pods that already
failed; a log or event that cannot be read is left out, never the reason a run fails."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify.diagnose.doom import events_of, warning_lines
from verify.flow.lookup import Lookup

LOG_LINES = 10  # the last lines of a failing container's log
EVENT_LINES = 10  # the last warning events of a failing pod
SHOWN_PODS = 3  # failing pods whose evidence is read and shown (100 crashing pods say one thing)


def log_lines(
    lookup: Lookup, *, where: str, pod: str, container: str, previous: bool, restarted: bool
) -> list[str]:
    """`<where> log: <line>` for the container's last LOG_LINES non-blank lines (`previous`: the
    run before its last restart, which is the one that failed when it is running again). A
    container that `restarted` may have moved on between the status read and the log's: an empty
    log is then asked of its other run."""
    lines = [
        line
        for line in lookup.log_tail(pod, container, previous=previous, lines=LOG_LINES) or []
        if line.strip()
    ]
    if not lines and restarted:
        other = lookup.log_tail(pod, container, previous=not previous, lines=LOG_LINES) or []
        lines = [line for line in other if line.strip()]
    return [f"{where} log: {line}" for line in lines]


def event_lines(*, where: str, pod: Mapping[str, Any], events: list[dict[str, Any]] | None) -> list[str]:
    """`<where> event: Warning-reason (xN): message` for the pod's last EVENT_LINES warnings."""
    if not events:
        return []
    own = events_of(events, pod=pod)
    return [f"{where} event: {line}" for line in warning_lines(own, limit=EVENT_LINES)]
