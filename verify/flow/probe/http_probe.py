"""HTTP checks against each pod through the API server's pod proxy.

A Service (or an ingress health check) answers from whichever pod the load balancer picks, so a
green `/health` proves nothing about the other pods. `GET /api/v1/namespaces/NS/pods/NAME:PORT/
proxy/PATH` reaches one named pod with the run's own credentials and TLS settings. Bodies are
never kept: only the status and, when asked, one JSON field.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from verify.findings import HttpObservation, PodTarget, Uninspectable
from verify.kube import retry, transport
from verify.kube.api import Api, status_message
from verify.kube.connection import Connection
from verify.kube.pods import pod_gone
from verify.model import HttpExpectation

MAX_BODY = 1024 * 1024  # a JSON field is looked for in the first MiB only
# the authorizer's denial of the proxy subresource itself (anything else forbidden is the app's)
_PROXY_DENIED = re.compile(r'is forbidden: User ".*" cannot \w+ resource "pods/proxy"')


def proxy_path(*, namespace: str, pod: str, check: HttpExpectation) -> str:
    path, _, query = check.path.partition("?")
    url = (
        f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}:{check.port}"
        f"/proxy{quote(path, safe='/%:@!$&()*+,;=-._~')}"
    )
    return f"{url}?{query}" if query else url


@dataclass(frozen=True)
class Answer:
    """What came back: the status, and at most MAX_BODY bytes of the body."""

    status: int
    content_type: str
    body: bytes


def _api_status(answer: Answer) -> dict[str, Any] | None:
    """The API server's own Status (a proxy failure), as opposed to anything the pod sent."""
    if not answer.content_type.startswith("application/json"):
        return None
    try:
        data = json.loads(answer.body)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("kind") == "Status" and data.get("apiVersion") == "v1":
        return data
    return None


class _TooSlow(Exception):
    pass


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
        self,
        *,
        connection: Connection,
        timeout: float,
        concurrency: int,
        deadline: retry.Deadline,
        api: Api | None = None,
        slots: threading.BoundedSemaphore | None = None,
    ) -> None:
        self.connection = connection
        self.api = api  # to tell "the pod was deleted under us" from an unreachable port
        self.timeout = timeout
        self.concurrency = concurrency
        self.deadline = deadline
        # one budget of parallel calls for the whole run, however many workloads check at once,
        # shared with the execs when the run passes the Inspector's
        self._slots = slots or threading.BoundedSemaphore(concurrency)

    def _once(self, path: str, budget: retry.Deadline) -> Answer:
        seconds = max(0.1, min(self.timeout, budget.remaining()))
        try:
            # every byte within the check's budget, however the pod (or a proxy) trickles it
            with (
                transport.bounded(time.monotonic() + seconds),
                self.connection.http.stream("GET", path, timeout=seconds, headers={"Accept": "*/*"}) as resp,
            ):
                # a streaming or trickling endpoint must not outlast the check's budget
                body = bytearray()
                for chunk in resp.iter_bytes():
                    if body and budget.expired:
                        raise _TooSlow
                    body += chunk
                    if len(body) >= MAX_BODY:
                        break
                answer = Answer(
                    resp.status_code, resp.headers.get("content-type", ""), bytes(body[:MAX_BODY])
                )
        except httpx.TransportError as e:
            raise retry.Transient(f"cannot reach the API server: {type(e).__name__}") from None
        except _TooSlow:
            raise retry.Transient("the answer did not end within --exec-timeout") from None
        if _api_status(answer) is not None and retry.retryable_status(answer.status):
            msg, _ = status_message(answer.body, f"HTTP {answer.status}")
            raise retry.Transient(msg)
        return answer

    def check_pod(self, *, namespace: str, pod: PodTarget, check: HttpExpectation) -> HttpObservation:
        with self._slots:
            obs = self._check_pod(namespace=namespace, pod=pod, check=check)
        if obs.error is not None and obs.error.code in ("unreachable", "pod_gone") and self.api is not None:
            # a draining pod refuses connections before it disappears: say it went, not that it broke
            gone = pod_gone(api=self.api, namespace=namespace, pod=pod)
            if gone is not None:
                return HttpObservation(check, error=gone)
        return obs

    def _check_pod(self, *, namespace: str, pod: PodTarget, check: HttpExpectation) -> HttpObservation:
        seconds = min(self.timeout, self.deadline.remaining())
        if seconds <= 0:
            return HttpObservation(
                check, error=Uninspectable("timeout", "the run's --timeout ran out before this check", False)
            )
        budget = retry.Deadline(seconds)
        path = proxy_path(namespace=namespace, pod=pod.name, check=check)
        reasons: list[str] = []

        def attempt() -> Answer:
            try:
                return self._once(path, budget)
            except retry.Transient as e:
                reasons.append(str(e))
                raise

        try:
            answer = retry.call(attempt, deadline=budget)
        except retry.Transient as e:
            # the proxy's own reason (connection refused) says more than the last attempt's timeout
            why = next((r for r in reasons if "Timeout" not in r and "did not end" not in r), str(e))
            return HttpObservation(
                check,
                error=Uninspectable(
                    "unreachable", f"port {check.port} unreachable through the pod proxy: {why}", False
                ),
            )
        if _api_status(answer) is not None and answer.status >= 400:
            msg, _ = status_message(answer.body, f"HTTP {answer.status}")
            if answer.status == 403 and _PROXY_DENIED.search(msg):
                return HttpObservation(
                    check,
                    error=Uninspectable(
                        "forbidden",
                        f"HTTP check forbidden: missing RBAC rule `get pods/proxy` in namespace {namespace}",
                        True,
                    ),
                )
            if answer.status == 404 and msg == f'pods "{pod.name}" not found':
                return HttpObservation(
                    check, error=Uninspectable("pod_gone", f"pod {pod.name} no longer exists", False)
                )
            if answer.status == 400 and msg in ("address not allowed", f'invalid pod request "{pod.name}"'):
                return HttpObservation(
                    check,
                    error=Uninspectable(
                        "unreachable", f"the pod proxy refused (HTTP {answer.status}): {msg[:200]}", False
                    ),
                )
            # any other Status-shaped answer came from what listens on the port: the app's own
        value = field_value(answer.body, check.field) if check.field else None
        return HttpObservation(check, status=answer.status, value=value)

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
