"""The kubelet's probe workers for one running container (pkg/kubelet/prober/worker.go,
prober.go): startup, liveness and readiness; exec, httpGet and tcpSocket (a grpc probe is judged
by a TCP connect to its port: kubesim has no gRPC health client).

Each worker probes every periodSeconds, not before initialDelaySeconds (readiness also at once
when the container has started, liveness and startup first a period after it); a result counts once it has repeated successThreshold (success) or
failureThreshold (failure) times in a row. Liveness and readiness wait until the startup probe
has passed. A failed probe records `Unhealthy` (`Liveness probe failed: …`). Readiness sets the
container's `ready`; a startup probe's success sets `started`; a liveness or startup failure has
the kubelet kill the container (then restarted per restartPolicy)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor

from ..storage.store import Obj
from .containers import ContainerRuntime, PodRuntime, container_port, enter_command, kill_exec
from .dial import DialError, exchange, tcp_probe

KINDS = (("startup", "startupProbe"), ("liveness", "livenessProbe"), ("readiness", "readinessProbe"))


async def probe_container(
    rt: PodRuntime,
    c: Obj,
    crt: ContainerRuntime,
    proc: asyncio.subprocess.Process,
    *,
    pool: Executor,
    publish: Callable[[PodRuntime], None],
    unhealthy: Callable[[str], None],
    kill: Callable[[str], None],
) -> None:
    """Run the container's probe workers until its process ends (or the kubelet kills it).
    `unhealthy(message)` records an event; `kill(kind)` has the kubelet stop the container."""
    crt.started = not c.get("startupProbe")
    crt.ready = crt.started and not c.get("readinessProbe")
    started = asyncio.Event()
    if crt.started:
        started.set()
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    workers = [
        _worker(kind, c[key], rt, c, crt, proc, t0, started, pool, publish, unhealthy, kill)
        for kind, key in KINDS
        if c.get(key)
    ]
    if workers:
        await asyncio.gather(*workers)


async def _worker(
    kind: str,
    spec: Obj,
    rt: PodRuntime,
    c: Obj,
    crt: ContainerRuntime,
    proc: asyncio.subprocess.Process,
    t0: float,
    started: asyncio.Event,
    pool: Executor,
    publish: Callable[[PodRuntime], None],
    unhealthy: Callable[[str], None],
    kill: Callable[[str], None],
) -> None:
    loop = asyncio.get_running_loop()
    period = max(1.0, float(spec.get("periodSeconds") or 10))
    delay = float(spec.get("initialDelaySeconds") or 0)
    succ_needed = int(spec.get("successThreshold") or 1)
    fail_needed = int(spec.get("failureThreshold") or 3)
    last: bool | None = None
    run = 0

    def alive() -> bool:
        return proc.returncode is None and not rt.stopping and not crt.killing

    if kind != "startup":
        await started.wait()  # liveness and readiness probe only a started container
    if kind != "readiness":
        # the worker's ticker runs from the pod's start: the first tick comes up to a period after
        # the container's; only readiness is triggered at once (prober_manager.go UpdatePodStatus)
        await asyncio.sleep(period)
    while alive():
        if loop.time() - t0 >= delay:
            ok, output = await run_probe(rt, c, crt, spec, pool)
            if not alive():
                return
            if not ok:
                unhealthy(f"{kind.capitalize()} probe failed: {output}")
            run = run + 1 if ok == last else 1
            last = ok
            if run >= (succ_needed if ok else fail_needed):
                if kind == "readiness" and ok != crt.ready:
                    crt.ready = ok
                    publish(rt)
                elif kind == "startup" and ok:
                    crt.started = True
                    crt.ready = not c.get("readinessProbe")
                    started.set()
                    publish(rt)
                    return
                elif kind in ("startup", "liveness") and not ok:
                    kill(kind)
                    return
        await asyncio.sleep(period)


async def run_probe(
    rt: PodRuntime, c: Obj, crt: ContainerRuntime, probe: Obj, pool: Executor
) -> tuple[bool, str]:
    """One exec / httpGet / tcpSocket / grpc probe: (success, the prober's output text)."""
    timeout = float(probe.get("timeoutSeconds") or 1)
    sandbox = rt.sandbox
    if "exec" in probe:
        return await _exec_probe(crt, list((probe["exec"] or {}).get("command") or []), timeout)
    spec = probe.get("httpGet") or probe.get("tcpSocket") or probe.get("grpc")
    if spec is None:
        return False, ""
    port = container_port(c, spec.get("port"))
    if port is None or sandbox is None or not sandbox.alive:
        return False, f"dial tcp {rt.ip}:{spec.get('port')}: connect: connection refused"
    host = spec.get("host") or sandbox.ip
    loop = asyncio.get_running_loop()
    if "httpGet" not in probe:
        ok = await loop.run_in_executor(pool, tcp_probe, sandbox.netns, host, port, timeout)
        return ok, "" if ok else f"dial tcp {host}:{port}: connect: connection refused"
    scheme = str(spec.get("scheme", "HTTP")).lower()
    path = spec.get("path") or "/"
    if not path.startswith("/"):
        path = "/" + path
    headers = [("Host", f"{host}:{port}"), ("User-Agent", "kube-probe/1.32"), ("Accept", "*/*")]
    headers += [(h["name"], h.get("value", "")) for h in spec.get("httpHeaders") or []]
    headers.append(("Connection", "close"))
    url = f"{scheme}://{host}:{port}{path}"
    try:
        up = await loop.run_in_executor(
            pool, exchange, sandbox.netns, host, port, scheme, "GET", path, headers, b"", timeout
        )
    except DialError as e:
        text = str(e)
        if text.endswith("i/o timeout"):
            text = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        return False, f'Get "{url}": {text}'
    # pkg/probe/http/http.go: 200 <= status < 400 passes
    if 200 <= up.status < 400:
        return True, ""
    return False, f"HTTP probe failed with statuscode: {up.status}"


async def _exec_probe(crt: ContainerRuntime, argv: list[str], timeout: float) -> tuple[bool, str]:
    """Exec in the container; the combined output is the probe's output (pkg/probe/exec/exec.go),
    a timeout is `command "…" timed out`."""
    code, out = await exec_sync(crt, argv, timeout)
    if code is None:
        return False, out
    return code == 0, out


async def exec_sync(crt: ContainerRuntime, argv: list[str], timeout: float) -> tuple[int | None, str]:
    """The CRI's ExecSync: run `argv` in the running container, (exit code, combined output);
    (None, why) when it could not run or timed out."""
    if not argv or crt.pid is None:
        return None, ""
    try:
        p = await asyncio.create_subprocess_exec(
            *enter_command(crt),
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=dict(crt.env),
            close_fds=False,
        )
    except OSError as e:
        return None, str(e)
    try:
        out, _ = await asyncio.wait_for(p.communicate(), timeout)
    except TimeoutError:
        kill_exec(p)
        await p.wait()
        return None, f'command "{" ".join(argv)}" timed out'
    return p.returncode, out.decode(errors="replace")[:10240]
