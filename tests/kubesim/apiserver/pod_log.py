"""pods/log (`follow`, `timestamps`, `tailLines`, `limitBytes`, `sinceSeconds`, `sinceTime`,
`previous`), and the container a pods/log or pods/exec request means."""

from __future__ import annotations

import asyncio
import bisect
import datetime as dt
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..node.logpump import line_times
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj
from .responses import flag

if TYPE_CHECKING:
    from ..cluster import Cluster


def pick_container(pod: Obj, requested: str) -> str:
    """The container a pods/log or pods/exec request means, with the apiserver's 400 texts."""
    name = pod["metadata"]["name"]
    containers = [c["name"] for c in pod["spec"].get("containers") or []]
    inits = [c["name"] for c in pod["spec"].get("initContainers") or []]
    ephemeral = [c["name"] for c in pod["spec"].get("ephemeralContainers") or []]
    if not requested:
        if len(containers) != 1:
            # pkg/registry/core/pod/strategy.go LogLocation's text
            also = f" or one of the init containers: [{' '.join(inits)}]" if inits else ""
            if ephemeral:
                also += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
            raise ApiError.bad_request(
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
                + also
            )
        return str(containers[0])
    if requested not in containers + inits + ephemeral:
        raise ApiError.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _rfc3339nano(t: float) -> str:
    """Go's time.RFC3339Nano in UTC: nanoseconds with trailing zeros trimmed."""
    whole = int(t)
    frac = f"{t - whole:.9f}"[2:].rstrip("0")
    stamp = dt.datetime.fromtimestamp(whole, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{frac}Z" if frac else f"{stamp}Z"


def _since(q: Any) -> float | None:
    if q.get("sinceSeconds"):
        return time.time() - int(q["sinceSeconds"])
    if q.get("sinceTime"):
        return dt.datetime.fromisoformat(q["sinceTime"].replace("Z", "+00:00")).timestamp()
    return None


class _Reader:
    """Lines of one container log from a byte offset, with their times (logpump.py), filtered
    and stamped as the kubelet's ReadLogs does (pkg/kubelet/kuberuntime/logs/logs.go)."""

    def __init__(self, log: Path, q: Any) -> None:
        self.log = log
        self.offset = 0
        self.since = _since(q)
        self.timestamps = flag(q.get("timestamps"))
        self.left = int(q["limitBytes"]) if q.get("limitBytes") else None
        tail = q.get("tailLines")
        if tail is not None:
            data = self._bytes()
            lines = data.splitlines(keepends=True)
            keep = lines[-int(tail) :] if int(tail) > 0 else []
            self.offset = len(data) - sum(len(x) for x in keep)

    def _bytes(self) -> bytes:
        try:
            return self.log.read_bytes()
        except FileNotFoundError:
            return b""

    def read(self, *, final: bool) -> bytes:
        """What is new since the last read: whole lines, and a partial last line when `final`."""
        data = self._bytes()
        end = len(data) if final else data.rfind(b"\n") + 1
        if end <= self.offset:
            return b""
        starts = line_times(self.log)
        out = []
        for line in data[self.offset : end].splitlines(keepends=True):
            at = self._time(starts, self.offset)
            self.offset += len(line)
            if self.since is not None and at < self.since:
                continue
            out.append((_rfc3339nano(at) + " ").encode() + line if self.timestamps else line)
        chunk = b"".join(out)
        if self.left is not None:
            chunk, self.left = chunk[: self.left], max(self.left - len(chunk), 0)
        return chunk

    def _time(self, starts: list[tuple[int, float]], offset: int) -> float:
        i = bisect.bisect_right(starts, (offset, float("inf"))) - 1
        return starts[i][1] if i >= 0 else self.log.stat().st_mtime

    @property
    def exhausted(self) -> bool:
        return self.left == 0


async def log_response(request: web.Request, cluster: Cluster, ns: str, name: str) -> web.StreamResponse:
    q = request.query
    pod = cluster.store.get(BY_PATH[("", "pods")], ns, name)
    container = pick_container(pod, q.get("container", ""))
    previous = flag(q.get("previous"))
    if cluster.container_log(ns, name, container, previous=previous) is None:
        raise ApiError.bad_request(
            f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
        )
    crt = cluster.container_runtime(pod, container)
    assert crt is not None
    log = crt.log_paths[-2] if previous else crt.log_paths[-1]
    reader = _Reader(log, q)
    if not flag(q.get("follow")) or previous:
        return web.Response(body=reader.read(final=True), content_type="text/plain")
    # follow: stream as the container writes, until it exits (its pump has drained the pipe),
    # is restarted (a new log), or its pod is gone
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    while True:
        pump = crt.log_pump
        done = (
            pump is None
            or pump.done()
            or crt.log_paths[-1] != log
            or cluster.container_runtime(pod, container) is not crt
        )
        chunk = reader.read(final=done)
        if chunk:
            await response.write(chunk)
        if done or reader.exhausted:
            break
        await asyncio.sleep(0.1)
    await response.write_eof()
    return response
