"""HTTP checks against each pod through the API server's pod proxy.

A Service (or an ingress health check) answers from whichever pod the load balancer picks, so a
green `/health` proves nothing about the other pods. `GET /api/v1/namespaces/NS/pods/NAME:PORT/
proxy/PATH` reaches one named pod with the run's own credentials and TLS settings. Bodies are
never kept: only the status and, when asked, one JSON field.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import httpx

from verify import retry
from verify.kube import Connection, status_message
from verify.model import HttpExpectation, HttpObservation, PodTarget, Uninspectable

MAX_BODY = 1024 * 1024  # a JSON field is looked for in the first MiB only


def proxy_path(*, namespace: str, pod: str, check: HttpExpectation) -> str:
    path, _, query = check.path.partition("?")
    url = (
        f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}:{check.port}"
        f"/proxy{quote(path, safe='/%:@!$&()*+,;=-._~')}"
    )
    return f"{url}?{query}" if query else url


def _api_status(resp: httpx.Response) -> dict[str, Any] | None:
    """The API server's own Status (a proxy failure), as opposed to anything the pod sent."""
    if not resp.headers.get("content-type", "").startswith("application/json"):
        return None
    try:
        data = json.loads(resp.content[:MAX_BODY])
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("kind") == "Status" and data.get("apiVersion") == "v1":
        return data
    return None


def field_value(body: bytes, field: str) -> str | None:
    """JSON text of the value at the dotted `field` of a JSON body, None when absent."""
    try:
        node: Any = json.loads(body[:MAX_BODY])
    except ValueError:
        return None
    for part in field.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return json.dumps(node, sort_keys=True)


class Prober:
    """Runs every HTTP check on every pod, `concurrency` at a time, each within its timeout."""

    def __init__(
        self, *, connection: Connection, timeout: float, concurrency: int, deadline: retry.Deadline
    ) -> None:
        self.connection = connection
        self.timeout = timeout
        self.concurrency = concurrency
        self.deadline = deadline
        self.requests = 0
        self._lock = threading.Lock()
        # one budget of parallel calls for the whole run, however many workloads check at once
        self._slots = threading.BoundedSemaphore(concurrency)

    def _once(self, path: str, budget: retry.Deadline) -> httpx.Response:
        with self._lock:
            self.requests += 1
        try:
            resp = self.connection.http.get(
                path,
                timeout=max(0.1, min(self.timeout, budget.remaining())),
                headers={"Accept": "*/*"},
            )
        except httpx.TransportError as e:
            raise retry.Transient(f"cannot reach the API server: {type(e).__name__}") from None
        status = _api_status(resp)
        if status is not None and retry.retryable_status(resp.status_code):
            msg, _ = status_message(resp.content, f"HTTP {resp.status_code}")
            raise retry.Transient(msg)
        return resp

    def check_pod(self, *, namespace: str, pod: PodTarget, check: HttpExpectation) -> HttpObservation:
        with self._slots:
            return self._check_pod(namespace=namespace, pod=pod, check=check)

    def _check_pod(self, *, namespace: str, pod: PodTarget, check: HttpExpectation) -> HttpObservation:
        seconds = min(self.timeout, self.deadline.remaining())
        if seconds <= 0:
            return HttpObservation(
                check, error=Uninspectable("timeout", "the run's --timeout ran out before this check", False)
            )
        budget = retry.Deadline(seconds)
        path = proxy_path(namespace=namespace, pod=pod.name, check=check)
        try:
            resp = retry.call(lambda: self._once(path, budget), deadline=budget)
        except retry.Transient as e:
            return HttpObservation(
                check,
                error=Uninspectable(
                    "unreachable", f"port {check.port} unreachable through the pod proxy: {e}", False
                ),
            )
        status = _api_status(resp)
        if status is not None and resp.status_code >= 400:
            msg, _ = status_message(resp.content, f"HTTP {resp.status_code}")
            if resp.status_code == 403:
                return HttpObservation(
                    check,
                    error=Uninspectable(
                        "forbidden",
                        f"HTTP check forbidden: missing RBAC rule `get pods/proxy` in namespace {namespace}",
                        True,
                    ),
                )
            if resp.status_code == 404 and msg == f'pods "{pod.name}" not found':
                return HttpObservation(
                    check, error=Uninspectable("pod_gone", f"pod {pod.name} no longer exists", False)
                )
            return HttpObservation(
                check,
                error=Uninspectable(
                    "unreachable", f"the pod proxy refused (HTTP {resp.status_code}): {msg[:200]}", False
                ),
            )
        value = field_value(resp.content, check.field) if check.field else None
        return HttpObservation(check, status=resp.status_code, value=value)

    def check(
        self, *, namespace: str, pods: Sequence[PodTarget], checks: Sequence[HttpExpectation]
    ) -> dict[str, tuple[HttpObservation, ...]]:
        """Observations by pod name, in the order of `checks`."""
        jobs = [(p, c) for p in pods for c in checks]
        if not jobs:
            return {}
        with ThreadPoolExecutor(max_workers=max(1, min(self.concurrency, len(jobs)))) as pool:
            results = list(
                pool.map(lambda pc: self.check_pod(namespace=namespace, pod=pc[0], check=pc[1]), jobs)
            )
        out: dict[str, list[HttpObservation]] = {}
        for (p, _), obs in zip(jobs, results, strict=True):
            out.setdefault(p.name, []).append(obs)
        return {k: tuple(v) for k, v in out.items()}
