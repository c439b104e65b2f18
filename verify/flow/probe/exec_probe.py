"""Runs the probe in every selected container, `concurrency` at a time under one budget shared
with the HTTP checks, each exec within --exec-timeout and never past the run's --timeout."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from verify.findings import ContainerObservation, Expectations, PodObservation, PodTarget, Uninspectable
from verify.flow.probe.debugger import Debugger
from verify.flow.probe.protocol import RunKey, parse_probe, probe_argv, probe_input
from verify.kube.api import Api
from verify.kube.exec import Exec
from verify.kube.pods import pod_gone
from verify.kube.retry import Deadline

# exec failures after which the pod itself may be gone (deleted while it was being inspected)
_MAYBE_GONE = ("exec_failed", "not_running", "pod_gone")
# the probe cannot run in the image itself: a debug container (--debug-image) can read it instead
_NEEDS_DEBUG = ("no_shell", "tool_missing")


class Inspector:
    """One exec per (pod, container); values never leave the pods, only key names and digests."""

    def __init__(
        self,
        *,
        transport: Exec,
        exec_timeout: float,
        concurrency: int,
        run_key: RunKey | None = None,
        deadline: Deadline | None = None,
        api: Api | None = None,
        slots: threading.BoundedSemaphore | None = None,
        debug_image: str | None = None,
        dry_run: bool = False,
    ) -> None:
        self.run_key = run_key or RunKey()
        self.transport = transport
        self.deadline = deadline
        # to tell "the pod was deleted under us" from other exec failures (optional)
        self.api = api
        self.exec_timeout = exec_timeout
        self.concurrency = concurrency
        # one budget of parallel execs for the whole run, however many workloads inspect at once
        self.slots = slots or threading.BoundedSemaphore(concurrency)
        self.debugger = (
            Debugger(
                api=api, transport=self.transport, image=debug_image, run_key=self.run_key, dry_run=dry_run
            )
            if debug_image and api is not None
            else None
        )

    def inspect_container(
        self, *, namespace: str, pod: PodTarget, container: str, expectations: Expectations
    ) -> ContainerObservation:
        with self.slots:
            obs = self._exec(namespace=namespace, pod=pod, container=container, expectations=expectations)
            if obs.error is not None and obs.error.code in _NEEDS_DEBUG and self.debugger is not None:
                obs = self.debugger.inspect(
                    namespace=namespace,
                    pod=pod,
                    container=container,
                    expectations=expectations,
                    limit=self._limit(),
                )
        if obs.error is not None and obs.error.code in _MAYBE_GONE:
            gone = None if self.api is None else pod_gone(api=self.api, namespace=namespace, pod=pod)
            if gone is not None:
                return ContainerObservation(container=container, error=gone)
        return obs

    def _limit(self) -> float:
        """One exec's budget: --exec-timeout, and never past the run's --timeout."""
        if self.deadline is None:
            return self.exec_timeout
        return min(self.exec_timeout, self.deadline.remaining())

    def _exec(
        self, *, namespace: str, pod: PodTarget, container: str, expectations: Expectations
    ) -> ContainerObservation:
        # One budget per exec, retries of a refused upgrade included: --exec-timeout, and never
        # past the run's --timeout.
        limit = self._limit()
        if self.deadline is not None and limit <= 0:
            return ContainerObservation(
                container=container,
                error=Uninspectable(
                    "timeout", "the run's --timeout ran out before this exec", permanent=False
                ),
            )
        result = self.transport.run(
            namespace=namespace,
            pod=pod.name,
            container=container,
            argv=probe_argv(),
            stdin=probe_input(expectations, self.run_key),
            limit=limit,
        )
        if result.error is not None:
            return ContainerObservation(container=container, error=result.error)
        return parse_probe(
            container=container, stdout=result.stdout, expectations=expectations, run_key=self.run_key
        )

    def inspect(
        self,
        *,
        namespace: str,
        pods: Sequence[PodTarget],
        expectations_for: Callable[[str], Expectations],
        only: Callable[[tuple[str, str]], bool] | None = None,
    ) -> list[PodObservation]:
        """One exec per (pod, container), `concurrency` at a time; `only` narrows a re-check."""
        jobs = [(p, c) for p in pods for c in p.containers if only is None or only((p.name, c))]

        def one(pc: tuple[PodTarget, str]) -> ContainerObservation:
            expected = expectations_for(pc[1])
            if not (expected.env or expected.files or expected.env_values):
                # nothing to read in this container (e.g. only HTTP checks): no exec at all
                return ContainerObservation(container=pc[1])
            return self.inspect_container(
                namespace=namespace, pod=pc[0], container=pc[1], expectations=expected
            )

        with ThreadPoolExecutor(max_workers=max(1, min(self.concurrency, len(jobs) or 1))) as pool:
            results = list(pool.map(one, jobs))
        by_pod: dict[str, list[ContainerObservation]] = {}
        for (p, _), obs in zip(jobs, results, strict=True):
            by_pod.setdefault(p.name, []).append(obs)
        return [
            PodObservation(pod=p, containers=tuple(by_pod.get(p.name, [])))
            for p in pods
            if only is None or p.name in by_pod
        ]
