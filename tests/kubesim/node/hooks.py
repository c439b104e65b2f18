"""Container lifecycle hooks as the kubelet runs them (pkg/kubelet/lifecycle/handlers.go
handlerRunner.Run; kuberuntime_container.go startContainer and executePreStopHook): postStart
right after the container starts, its status not `running` until the hook returns; preStop
before the kubelet signals a container it stops, within the grace period. Exec hooks run in the
container (ExecSync: a non-zero exit fails them), httpGet hooks GET the pod's IP (only a
transport error fails them, as upstream: the status code is not judged). The failure text is
upstream's; the events say only `PostStartHook failed` / `PreStopHook failed` (the kubelet keeps
hook output out of events, which may hold secrets)."""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor

from ..storage.store import Obj
from .containers import ContainerRuntime, PodRuntime, container_port
from .dial import DialError, exchange
from .probes import exec_sync


def _pod(rt: PodRuntime) -> str:
    """format.Pod: `name_namespace(uid)`."""
    return f"{rt.name}_{rt.namespace}({rt.uid})"


async def run_handler(
    rt: PodRuntime, c: Obj, crt: ContainerRuntime, handler: Obj, *, pool: Executor, timeout: float
) -> str:
    """Run one LifecycleHandler: "" when it succeeded, else the handler runner's message."""
    if "exec" in handler:
        argv = [str(a) for a in (handler["exec"] or {}).get("command") or []]
        code, out = await exec_sync(crt, argv, timeout)
        if code == 0:
            return ""
        err = out if code is None else f"command '{' '.join(argv)}' exited with {code}: "
        output = "" if code is None else out
        return (
            f'Exec lifecycle hook ([{" ".join(argv)}]) for Container "{c["name"]}" in Pod "{_pod(rt)}" '
            f'failed - error: {err}, message: "{_go_quote(output)}"'
        )
    if "sleep" in handler:
        await asyncio.sleep(min(float((handler["sleep"] or {}).get("seconds") or 0), timeout))
        return ""
    http = handler.get("httpGet")
    if http is None:
        return f"Cannot run handler: invalid handler: {handler}"
    err = await _http_get(rt, c, http, pool=pool, timeout=timeout)
    if not err:
        return ""
    return (
        f'HTTP lifecycle hook ({http.get("path", "")}) for Container "{c["name"]}" in Pod "{_pod(rt)}" '
        f"failed - error: {err}"
    )


async def _http_get(rt: PodRuntime, c: Obj, http: Obj, *, pool: Executor, timeout: float) -> str:
    """NewRequestForHTTPGetAction + Do: "" on any HTTP answer, else Go's error text."""
    sandbox = rt.sandbox
    port = container_port(c, http.get("port")) or 80
    host = http.get("host") or (sandbox.ip if sandbox is not None else rt.ip)
    scheme = str(http.get("scheme", "HTTP")).lower()
    path = str(http.get("path") or "/")
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{host}:{port}{path}"
    if sandbox is None or not sandbox.alive:
        return f'Get "{url}": dial tcp {host}:{port}: connect: connection refused'
    headers = [("Host", f"{host}:{port}"), ("User-Agent", "kube-lifecycle/1.32"), ("Accept", "*/*")]
    headers += [(h["name"], h.get("value", "")) for h in http.get("httpHeaders") or []]
    headers.append(("Connection", "close"))
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(
            pool, exchange, sandbox.netns, host, port, scheme, "GET", path, headers, b"", timeout
        )
    except DialError as e:
        return f'Get "{url}": {e}'
    return ""


def _go_quote(text: str) -> str:
    """Go's %q body: backslashes, quotes and newlines escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
