"""Why a check failed and what to do, grouped by source object and node. Pure.

The point is the advice: a stale env var heals on restart, a recreated immutable object does not
(the kubelet keeps serving its cached copy by name), and a subPath mount never updates at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from verify.findings import AttemptVerdict, CheckResult, CheckStatus, Expectations, Source, expectations_for


@dataclass
class _Group:
    category: str
    source: Source | None
    why: str = ""  # the judgment's reason (diagnose.remedy), for causes no category words better
    targets: set[str] = field(default_factory=set)
    nodes: dict[str, set[str]] = field(default_factory=dict)  # node -> pod names


def _where(g: _Group) -> str:
    n = len({p for pods in g.nodes.values() for p in pods})
    nodes = ", ".join(f"{node} ({len(pods)})" for node, pods in sorted(g.nodes.items()))
    return f"{n} pod{'s' if n != 1 else ''} on {nodes}"


def _label(src: Source | None) -> str:
    return f"{src.kind} {src.name}" if src else "the expected source"


def _message(workload: str, g: _Group) -> str:
    targets = ", ".join(sorted(g.targets))
    where = _where(g)
    src = g.source
    if g.category == "cannot":
        return f"{workload}: {where} ({targets}): {g.why}"
    if g.category == "can":
        return f"{workload}: {where} ({targets}): {g.why}; a restart fixes it"
    if g.category == "immutable-released" and src is not None:
        how = g.why.partition("; ")[2].partition(", so the kubelet")[0]
        nodes = ", ".join(sorted(g.nodes))
        return (
            f"{workload}: {_label(src)} is immutable and was recreated, and {where} still see the old "
            f"content ({targets}); {how}, so the kubelet on {nodes} drops its cached copy and a restart "
            "delivers the new content"
        )
    if g.category == "immutable" and src is not None:
        created = f", created {src.created}" if src.created else ""
        uid = f"uid {src.uid[:8]}" if src.uid else "a new uid"
        return (
            f"{workload}: {_label(src)} is immutable and was recreated ({uid}{created}), but {where} still "
            f"see the old content ({targets}): the kubelet on those nodes serves its cached copy of the "
            f"deleted object and never refreshes an immutable {src.kind} while any pod there uses it, so a "
            f"restart will not help; publish new content under a new name (a content-hash suffix, as "
            f"kustomize's configMapGenerator does)"
        )
    if g.category == "env-late":
        return (
            f"{workload}: {where} started before {_label(src)} had {targets} (Helm/CSI sync ordering): env "
            f"is read only when a container starts; a restart fixes it"
        )
    if g.category == "env-changed":
        return (
            f"{workload}: {where} hold an old value of {targets} from {_label(src)}: env is fixed when a "
            f"container starts; a restart fixes it"
        )
    if g.category == "subpath":
        return (
            f"{workload}: {where} mount {targets} with subPath, which never receives updates of "
            f"{_label(src)} (kubernetes#50345); a restart fixes it, or mount the whole volume instead"
        )
    return (
        f"{workload}: {where} did not receive {_label(src)} ({targets}) within the volume grace period; "
        f"the kubelet refreshes configMap/secret volumes only every sync period; a restart fixes it"
    )


def _fixable(groups: dict[tuple[str, str, str], _Group], check: CheckResult, pod: str, node: str) -> None:
    """A failing check a restart fixes whose source no category names: the judgment's own words,
    so no failure the run restarts for goes without a diagnosis."""
    if not check.restart_can_fix or check.status is CheckStatus.UNINSPECTABLE or not check.why:
        return
    g = groups.setdefault(("can", check.why, ""), _Group("can", None, check.why))
    g.targets.add(check.subject)
    g.nodes.setdefault(node, set()).add(pod)


def diagnose(
    *,
    workload: str,
    verdict: AttemptVerdict,
    expectations: Expectations | Mapping[str, Expectations],
    explained: Set[tuple[str, str, str]] = frozenset(),
) -> list[str]:
    """One line per (cause, source object), naming the nodes and the fix; env keys in `explained`
    (source kind, source name, key) are said better elsewhere (diagnose.secretsstore)."""
    groups: dict[tuple[str, str, str], _Group] = {}
    for pod in verdict.pods:
        for c in pod.containers:
            exp = expectations_for(expectations, c.name)
            files = {f.path: f for f in exp.files}
            values = {v.key: v for v in exp.env_values}
            env_sources = dict(exp.env_sources)
            for check in c.checks:
                if check.status is CheckStatus.OK:
                    continue
                src: Source | None
                if check.restart_can_fix is False and check.status is not CheckStatus.UNINSPECTABLE:
                    f = files.get(check.subject) if check.type == "file" else None
                    v = values.get(check.subject)
                    src = (f.source if f else None) or (v.source if v else env_sources.get(check.subject))
                    if src is None or not src.immutable:
                        g = groups.setdefault(("cannot", check.why, ""), _Group("cannot", None, check.why))
                        g.targets.add(check.subject)
                        g.nodes.setdefault(pod.node, set()).add(pod.name)
                        continue
                if check.type == "file":
                    f = files.get(check.subject)
                    src = f.source if f else None
                    if src is not None and src.immutable and check.status is CheckStatus.MISMATCH:
                        cat = "immutable-released" if check.restart_can_fix else "immutable"
                    elif f is not None and f.subpath:
                        cat = "subpath"
                    elif f is not None and f.volume:
                        cat = "volume"
                    else:
                        _fixable(groups, check, pod.name, pod.node)
                        continue
                else:
                    v = values.get(check.subject)
                    src = v.source if v is not None else env_sources.get(check.subject)
                    if src is not None and (src.kind, src.name, check.subject) in explained:
                        continue
                    if src is None:
                        # an --expect-env key whose source the expectations do not name: the
                        # judgment found it in the template's sources, and its words say why
                        _fixable(groups, check, pod.name, pod.node)
                        continue
                    if src.immutable and check.status is CheckStatus.MISMATCH:
                        cat = "immutable-released" if check.restart_can_fix else "immutable"
                    elif check.status is CheckStatus.MISSING:
                        cat = "env-late"
                    else:
                        cat = "env-changed"
                key = (cat, src.kind if src else "", src.name if src else "")
                g = groups.setdefault(key, _Group(cat, src, check.why))
                g.targets.add(check.subject)
                g.nodes.setdefault(pod.node, set()).add(pod.name)
    return [_message(workload, g) for _, g in sorted(groups.items())]
