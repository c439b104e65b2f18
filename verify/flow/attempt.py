"""One attempt: select the pods of the current revision, resolve what each container must show,
inspect them (execs and HTTP checks side by side), inspect again what could not be inspected, judge,
give mutable volumes their grace, and diagnose what still fails."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from verify.diagnose.checks import diagnose
from verify.diagnose.remedy import assess
from verify.diagnose.secretsstore import explain
from verify.findings import AttemptVerdict, CheckStatus, Expectations, PodObservation, PodTarget
from verify.flow.expect import container_expectations, resolve_http
from verify.flow.facts import gather
from verify.flow.judge import judge_attempt
from verify.flow.state import WorkloadState
from verify.flow.steadiness import Steadiness, all_pods
from verify.kube import objects, retry

GRACE_POLL = 2.0  # seconds between re-checks of a volume awaiting the kubelet's refresh
# a container that could not be inspected for a reason that may pass is inspected again, with
# backoff, for up to this many --exec-timeouts; the run's --timeout keeps one more exec and
# REINSPECT_RESERVE seconds for what follows (the judgment's reads, the verdict)
REINSPECT_FOR = 4
REINSPECT_RESERVE = 2.0


def _graceable(verdict: AttemptVerdict, expectations: dict[str, Expectations]) -> set[tuple[str, str]] | None:
    """(pod, container) pairs whose only failures may heal by waiting (a mutable configMap/secret
    volume not yet refreshed); None when anything else failed, since then waiting is pointless."""
    if verdict.problems or verdict.permanent_problems:
        return None
    out: set[tuple[str, str]] = set()
    for pod in verdict.pods:
        if pod.error is not None or any(c.status is not CheckStatus.OK for c in pod.checks):
            return None
        for c in pod.containers:
            if c.error is not None:
                return None
            files = {f.path: f for f in expectations.get(c.name, Expectations()).files}
            for check in c.checks:
                if check.status is CheckStatus.OK:
                    continue
                f = files.get(check.subject) if check.type == "file" else None
                if f is None or not f.volume or f.subpath or (f.source is not None and f.source.immutable):
                    return None
                out.add((pod.name, c.name))
    return out


def _reinspectable(verdict: AttemptVerdict) -> dict[tuple[str, str], str]:
    """(pod, container) -> why it could not be inspected, for those that may be inspected on a
    second try: an exec refused for now (429, 5xx, 408, the not-ready 403, a broken upgrade), a
    container not running. Empty when a permanent cause already decides the attempt (asking again
    changes nothing). Not asked again: an exec that never answered (it already had its whole
    --exec-timeout, and another would cost as much) and a pod that is gone (the recheck selects its
    replacement)."""
    if verdict.permanent_problems:
        return {}
    out: dict[tuple[str, str], str] = {}
    for pod in verdict.pods:
        checks = [*pod.checks, *(c for container in pod.containers for c in container.checks)]
        if any(c.status is CheckStatus.UNINSPECTABLE and c.permanent for c in checks):
            return {}
        errors = [(c.name, c.error) for c in pod.containers if c.error is not None]
        if pod.error is not None or any(err.permanent for _, err in errors):
            return {}
        out.update(
            ((pod.name, name), f"pod {pod.name} container {name}: {err.reason}")
            for name, err in errors
            if err.code not in ("pod_gone", "timeout")
        )
    return out


def _inspect_again(
    state: WorkloadState,
    *,
    observations: list[PodObservation],
    verdict: AttemptVerdict,
    pods: Sequence[PodTarget],
    expect: Callable[[str], Expectations],
    judge: Callable[[list[PodObservation]], AttemptVerdict],
) -> tuple[list[PodObservation], AttemptVerdict]:
    """Containers that could not be inspected are inspected again with the retry module's backoff
    inside the run's deadline; whatever still cannot be is the verdict's (never a restart's)."""
    pending = _reinspectable(verdict)
    run, exec_timeout = state.context.api.deadline, state.context.settings.exec_timeout
    seconds = min(REINSPECT_FOR * exec_timeout, run.remaining() - exec_timeout - REINSPECT_RESERVE)
    if not pending or seconds <= 0:
        return observations, verdict
    n = len(pending)
    state.log(
        f"{state.label}: {n} container{'s' if n != 1 else ''} could not be inspected "
        f"({next(iter(pending.values()))}); inspecting {'them' if n != 1 else 'it'} again for up to "
        f"{seconds:.0f}s"
    )
    latest = (observations, verdict, pending)

    def again() -> None:
        nonlocal latest
        asked = frozenset(latest[2])
        fresh = state.context.inspector.inspect(
            namespace=state.namespace, pods=pods, expectations_for=expect, only=asked.__contains__
        )
        merged = _replace(latest[0], fresh)
        judged = judge(merged)
        latest = (merged, judged, _reinspectable(judged))
        if latest[2]:
            raise retry.Transient(f"{len(latest[2])} still could not be inspected")

    # still uninspectable when the time is up: that is the attempt's verdict
    with contextlib.suppress(retry.Transient):
        retry.call(again, deadline=retry.Deadline(seconds, cancel=run.cancel), base=1.0, cap=10.0)
    return latest[0], latest[1]


def _replace(old: list[PodObservation], fresh: list[PodObservation]) -> list[PodObservation]:
    """Swap re-checked containers' observations into the earlier pass."""
    by_pod = {o.pod.name: {c.container: c for c in o.containers} for o in fresh}
    out = []
    for o in old:
        new = by_pod.get(o.pod.name)
        if new is None:
            out.append(o)
            continue
        out.append(dataclasses.replace(o, containers=tuple(new.get(c.container, c) for c in o.containers)))
    return out


def attempt(state: WorkloadState, workload: dict[str, Any]) -> AttemptVerdict:
    """One pass over the pods of the current revision: one exec per container, one request per
    HTTP check and pod."""
    context, plan, ns = state.context, state.plan, state.namespace
    lookup = state.lookup
    lookup.new_attempt()
    # by default the template's containers: webhook-injected sidecars (mesh proxies) are not ours
    containers = plan.containers or tuple(objects.container_names(objects.pod_spec(workload)))
    selection = lookup.selection(kind=plan.ref.kind, workload=workload, containers=containers)
    state.selection = selection
    expectations = container_expectations(
        lookup, plan=plan, workload=workload, hmac_key=context.inspector.run_key.key
    )
    http = resolve_http(lookup, plan.expect_http)
    steady = Steadiness(state, workload, selection)
    steady.settle()
    pods = f"{len(selection.pods)} pod{'' if len(selection.pods) == 1 else 's'}"
    state.log(f"{state.label}: inspecting {pods} of revision {selection.revision}")

    def expect(container: str) -> Expectations:
        return expectations.get(container, Expectations())

    with ThreadPoolExecutor(max_workers=1) as side:
        answers = side.submit(lambda: context.prober.check(namespace=ns, pods=selection.pods, checks=http))
        inspected = context.inspector.inspect(
            namespace=ns, pods=selection.pods, expectations_for=expect, only=lambda pc: not steady.skip(pc)
        )
        by_pod = answers.result()
    steady.check()
    observations = steady.mark(all_pods(inspected, selection.pods))
    observations = [dataclasses.replace(o, http=by_pod.get(o.pod.name, ())) for o in observations]

    def judge(obs: list[PodObservation]) -> AttemptVerdict:
        return judge_attempt(
            selection_revision=selection.revision,
            observations=obs,
            expectations=expectations,
            problems=selection.problems,
            permanent_problems=selection.permanent_problems,
        )

    verdict = judge(observations)
    first = verdict
    observations, verdict = _inspect_again(
        state, observations=observations, verdict=verdict, pods=selection.pods, expect=expect, judge=judge
    )
    pending = _graceable(verdict, expectations)
    grace = context.settings.volume_grace
    if pending:
        grace_end = time.monotonic() + min(grace, context.api.deadline.remaining())
        state.log(f"{state.label}: {len(pending)} containers wait for a volume refresh (up to {grace:g}s)")
        while pending and time.monotonic() < grace_end:
            waiting = frozenset(pending)
            time.sleep(min(GRACE_POLL, max(0.0, grace_end - time.monotonic())))
            fresh = context.inspector.inspect(
                namespace=ns, pods=selection.pods, expectations_for=expect, only=waiting.__contains__
            )
            observations = _replace(observations, fresh)
            verdict = judge(observations)
            pending = _graceable(verdict, expectations) or set()
    if verdict is not first:
        steady.check()  # held still through the second look and the grace period too
        verdict = judge(steady.mark(observations))
    if verdict.ok:
        for note in lookup.take_notes():
            state.log(f"{state.label}: {note}")
        return verdict
    facts = gather(
        state, workload=workload, verdict=verdict, expectations=expectations, containers=containers
    )
    verdict = assess(verdict=verdict, expectations=expectations, facts=facts)
    lines: list[str] = []
    explained: set[tuple[str, str, str]] = set()
    if facts.csi is not None:
        lines, explained = explain(
            workload=state.label, verdict=verdict, expectations=expectations, csi=facts.csi
        )
    lines += diagnose(workload=state.label, verdict=verdict, expectations=expectations, explained=explained)
    lines += steady.evidence()
    for note in lookup.take_notes():
        state.log(f"{state.label}: {note}")
    return dataclasses.replace(verdict, diagnosis=tuple(lines))
