"""A container's log as the runtime keeps it: the output is copied to the log file as it comes,
and each line's arrival time is kept beside it (`<log>.times`: one `offset seconds` line per log
line), as the CRI log format stamps every line; pods/log reads both for `timestamps`,
`sinceSeconds` and `sinceTime`, and `follow` waits on the pump."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path


def times_path(log: Path) -> Path:
    return log.with_name(log.name + ".times")


async def pump(stream: asyncio.StreamReader, log: Path) -> None:
    """Copy `stream` to `log` until EOF, noting where each line starts and when it came."""
    offset = 0
    at_line_start = True
    with log.open("ab", buffering=0) as out, times_path(log).open("a", buffering=1) as times:
        while True:
            chunk = await stream.read(64 * 1024)
            if not chunk:
                return
            now = time.time()
            start = 0
            while start < len(chunk):
                if at_line_start:
                    times.write(f"{offset + start} {now:.9f}\n")
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    at_line_start = False
                    break
                at_line_start = True
                start = nl + 1
            out.write(chunk)
            offset += len(chunk)


def line_times(log: Path) -> list[tuple[int, float]]:
    """(offset, seconds) of each line start written so far."""
    out = []
    try:
        text = times_path(log).read_text()
    except FileNotFoundError:
        return []
    for row in text.splitlines():
        off, _, t = row.partition(" ")
        if t:
            out.append((int(off), float(t)))
    return out
