"""What judging a failed attempt needs beyond the verdict (diagnose.remedy.Facts), read only when
something failed: what the current template and its live sources provide, how the workload
replaces its pods, and which other pods on the stale pods' nodes keep a recreated immutable
source cached."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from verify import errors
from verify.diagnose.remedy import Facts, SourceKey
from verify.findings import AttemptVerdict, CheckStatus, Expectations, Source
from verify.flow.csi_facts import csi_facts
from verify.flow.derive import Ref, derive, env_origins, referenced_objects
from verify.flow.expect import read_classes
from verify.flow.state import WorkloadState
from verify.kube import objects


def _immutable_failing(
    verdict: AttemptVerdict, expectations: Mapping[str, Expectations], derived: Mapping[str, Expectations]
) -> set[SourceKey]:
    """The immutable sources behind failing checks (what the template mounts at a failing path
    counts, however the expectation was given)."""
    found: set[SourceKey] = set()
    for pod in verdict.pods:
        for c in pod.containers:
            exp = expectations.get(c.name, Expectations())
            sources: dict[str, Source | None] = {f.path: f.source for f in derived.get(c.name, exp).files}
            sources.update({f.path: f.source for f in exp.files if f.source is not None})
            sources.update({v.key: v.source for v in exp.env_values})
            sources.update(dict(exp.env_sources))
            for check in c.checks:
                src = sources.get(check.subject)
                if check.status is not CheckStatus.OK and src is not None and src.immutable:
                    found.add((src.kind, src.name))
    return found


def _strategy(kind: str, workload: Mapping[str, Any]) -> tuple[str, bool]:
    """(strategy type, whether new pods start beside old ones)."""
    if kind == "rollout":  # spec.restartAt evicts pods that the ReplicaSet replaces at once
        return "restartAt", True
    if kind == "deployment":
        kind_of = objects.text(objects.mapping(workload, "spec", "strategy"), "type") or "RollingUpdate"
        return kind_of, kind_of != "Recreate"
    strategy = objects.mapping(workload, "spec", "updateStrategy")
    kind_of = objects.text(strategy, "type") or "RollingUpdate"
    surge = objects.mapping(strategy, "rollingUpdate").get("maxSurge")
    return kind_of, kind == "daemonset" and surge not in (None, 0, "0", "0%")


def _holders(
    pods: Sequence[Mapping[str, Any]], own: set[str], wanted: set[SourceKey]
) -> dict[SourceKey, dict[str, frozenset[str]]]:
    out: dict[SourceKey, dict[str, set[str]]] = {}
    for pod in pods:
        name, node = objects.name(pod), objects.text(objects.mapping(pod, "spec"), "nodeName")
        finished = objects.text(objects.mapping(pod, "status"), "phase") in ("Succeeded", "Failed")
        if name in own or not node or finished:
            continue
        for ref in referenced_objects(pod_spec=objects.mapping(pod, "spec")) & wanted:
            out.setdefault(ref, {}).setdefault(node, set()).add(name)
    return {ref: {n: frozenset(p) for n, p in nodes.items()} for ref, nodes in out.items()}


def gather(
    state: WorkloadState,
    *,
    workload: Mapping[str, Any],
    verdict: AttemptVerdict,
    expectations: Mapping[str, Expectations],
    containers: Sequence[str],
) -> Facts:
    lookup, kind = state.lookup, state.plan.ref.kind
    pod_spec = objects.pod_spec(workload)
    sources: dict[Ref, Mapping[str, Any] | None] = {}
    unreadable: list[str] = []
    for ref in sorted(referenced_objects(pod_spec=pod_spec)):
        try:
            sources[ref] = lookup.source(*ref)
        except errors.Forbidden:
            plural = "configmaps" if ref[0] == "configmap" else "secrets"
            unreadable.append(f"{ref[0]} {ref[1]} (no permission: `get {plural}/{ref[1]}`)")
    key = state.context.inspector.run_key.key
    classes = read_classes(lookup, pod_spec=pod_spec, sources=sources)
    derived = derive(pod_spec=pod_spec, containers=containers, objects=sources, hmac_key=key, classes=classes)
    strategy, surge = _strategy(kind, workload)
    holders: dict[SourceKey, dict[str, frozenset[str]]] = {}
    immutable = _immutable_failing(verdict, expectations, derived)
    if immutable:
        own = {objects.name(p) for p in lookup.pods(selector=objects.selector(workload))}
        holders = _holders(lookup.pods(selector=""), own, immutable)
    stale: dict[str, dict[str, tuple[SourceKey, ...]]] = {}
    for container in () if unreadable else containers:  # a source not read: cannot tell
        provided = set(derived.get(container, Expectations()).env)
        for name in state.plan.expect_env:
            origins = env_origins(pod_spec=pod_spec, container=container, key=name)
            if name not in provided and origins:
                stale.setdefault(container, {})[name] = tuple(sorted(set(origins)))
    return Facts(
        workload=state.label,
        kind=kind,
        strategy=strategy,
        surge=surge,
        provided_env={c: frozenset(e.env) for c, e in derived.items()},
        unreadable=tuple(unreadable),
        live_files={c: {f.path: f for f in e.files} for c, e in derived.items()},
        holders=holders,
        missing_classes=tuple(sorted(n for n, spc in classes.items() if spc is None)),
        csi=csi_facts(lookup, workload=workload, classes=classes) if classes else None,
        stale_env=stale,
    )
