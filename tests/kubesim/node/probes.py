"""The readiness prober: httpGet, tcpSocket and exec probes on the kubelet's schedule
(initialDelaySeconds, periodSeconds, success and failure thresholds)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Executor

from ..storage.store import Obj
from .containers import ContainerRuntime, PodRuntime, container_port
from .dial import DialError, exchange, tcp_probe


async def readiness(
    rt: PodRuntime,
    c: Obj,
    crt: ContainerRuntime,
    proc: asyncio.subprocess.Process,
    *,
    pool: Executor,
    publish: Callable[[PodRuntime], None],
) -> None:
    """The readiness prober: the first probe after initialDelaySeconds, then every periodSeconds;
    ready after successThreshold successes, unready after failureThreshold failures."""
    probe = c["readinessProbe"]
    period = float(probe.get("periodSeconds", 10))
    succ_needed = int(probe.get("successThreshold", 1))
    fail_needed = int(probe.get("failureThreshold", 3))
    await asyncio.sleep(float(probe.get("initialDelaySeconds", 0)))
    succ = fail = 0
    while proc.returncode is None and not rt.stopping:
        ok = await run_probe(rt, c, crt, probe, pool)
        succ, fail = (succ + 1, 0) if ok else (0, fail + 1)
        ready = True if ok and succ >= succ_needed else False if fail >= fail_needed else crt.ready
        if ready != crt.ready and proc.returncode is None:
            crt.ready = ready
            publish(rt)
        await asyncio.sleep(period)


async def run_probe(rt: PodRuntime, c: Obj, crt: ContainerRuntime, probe: Obj, pool: Executor) -> bool:
    """One httpGet / tcpSocket / exec probe (a grpc probe is not emulated: it passes)."""
    timeout = float(probe.get("timeoutSeconds", 1))
    sandbox = rt.sandbox
    if "exec" in probe:
        argv = list((probe["exec"] or {}).get("command") or [])
        if not argv or crt.pid is None:
            return False
        try:
            p = await asyncio.create_subprocess_exec(
                "/usr/bin/nsenter",
                *("-t", str(crt.pid), "-m", "-n", "-r", "-w", "--"),
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                env=dict(crt.env),
                close_fds=False,
            )
        except OSError:
            return False
        try:
            return await asyncio.wait_for(p.wait(), timeout) == 0
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                p.kill()
            await p.wait()
            return False
    spec = probe.get("httpGet") or probe.get("tcpSocket")
    if spec is None:
        return True
    port = container_port(c, spec.get("port"))
    if port is None or sandbox is None or not sandbox.alive:
        return False
    host = spec.get("host") or sandbox.ip
    loop = asyncio.get_running_loop()
    if "tcpSocket" in probe:
        return await loop.run_in_executor(pool, tcp_probe, sandbox.netns, host, port, timeout)
    headers = [("Host", f"{host}:{port}"), ("User-Agent", "kube-probe/1.32"), ("Accept", "*/*")]
    headers += [(h["name"], h.get("value", "")) for h in spec.get("httpHeaders") or []]
    try:
        up = await loop.run_in_executor(
            pool,
            exchange,
            sandbox.netns,
            host,
            port,
            str(spec.get("scheme", "HTTP")).lower(),
            "GET",
            spec.get("path") or "/",
            headers,
            b"",
            timeout,
        )
    except DialError:
        return False
    return 200 <= up.status < 400
