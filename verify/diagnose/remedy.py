"""Whether one restart can make a failing check pass, and why: the one judgment that both the
decision (restart or fail at once) and the diagnosis read. Pure.

A restart replaces the containers with new ones created from the current template, reading env
from the live ConfigMaps/Secrets and mounting their live content. So it fixes what the template
and its live sources now provide and an old container does not have; it cannot add what nothing
provides, it cannot change a file that comes from the image, and it cannot get past the kubelet's
cache of a recreated immutable object on a node where a pod keeps that cache alive
(pkg/kubelet/util/manager/watch_based_manager.go: keyed by name, released when no pod on the node
references it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from verify.config.naming import KEY_CUTOFF, did_you_mean
from verify.diagnose.secretsstore import CsiFacts
from verify.findings import (
    STALE,
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    Expectations,
    ExpectedFile,
    PodVerdict,
    Source,
    restart_fixes,
)
from verify.model import Kind

SourceKey = tuple[str, str]  # (kind, name) of a ConfigMap/Secret
# why a check that could not be made is never a reason to restart
_UNSEEN = "the run could not check it, so it did not see stale configuration: no restart is sent for it"


@dataclass(frozen=True)
class Facts:
    """What the judgment needs beyond the verdict, read only when something failed."""

    workload: str  # "deployment checkout"
    kind: Kind
    # Deployment: Recreate stops every old pod before new ones start. RollingUpdate (and a DaemonSet
    # with maxSurge) starts new pods beside old ones. StatefulSets and DaemonSets without surge
    # replace each pod only once it is gone.
    strategy: str = "RollingUpdate"
    surge: bool = True
    # per container: the env names the current template and live sources provide
    provided_env: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # sources that could not be read (no permission): what they provide is unknown
    unreadable: tuple[str, ...] = ()
    # per container: path -> what a new container would mount there from the live sources
    live_files: Mapping[str, Mapping[str, ExpectedFile]] = field(default_factory=dict)
    # (kind, name) -> node -> pods outside this workload that use the source there
    holders: Mapping[SourceKey, Mapping[str, frozenset[str]]] = field(default_factory=dict)
    # SecretProviderClasses the template's CSI volumes name that do not exist: a new pod would
    # stay ContainerCreating (FailedMount), so no restart can help
    missing_classes: tuple[str, ...] = ()
    csi: CsiFacts | None = None  # what the Secrets Store CSI objects say, for the diagnosis
    # per container: expected env keys the template's sources no longer provide -> the sources the
    # running containers took them from (they keep them until their next restart)
    stale_env: Mapping[str, Mapping[str, tuple[SourceKey, ...]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Remedy:
    restart_can_fix: bool
    why: str


def _pods(names: set[str] | frozenset[str]) -> str:
    shown = sorted(names)[:3]
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"pod{'s' if len(names) != 1 else ''} {', '.join(shown)}{more}"


def _cached(facts: Facts, src: Source, pod: PodVerdict, own: Mapping[str, frozenset[str]]) -> Remedy:
    """A recreated immutable source: a restart helps only where no pod keeps the node's copy."""
    label = f"{src.kind} {src.name}"
    node = pod.node or "its node"
    others = set(facts.holders.get((src.kind, src.name), {}).get(pod.node, frozenset()))
    rolling = facts.kind == "deployment" and facts.strategy != "Recreate"
    if rolling or (facts.kind != "deployment" and facts.surge):
        return Remedy(
            False,
            # the same on every node (no node named): one judgment, said once for all its pods
            f"{label} is immutable and was recreated, and a rolling restart starts new pods while old "
            "pods still use it, so the kubelet on each of their nodes keeps serving its cached copy: a "
            "restart will not help; publish new content under a new name",
        )
    if facts.kind != "deployment":
        # each pod is replaced once it is gone, but the workload's other pods on the node remain
        others |= set(own.get(pod.node, frozenset())) - {pod.name}
    if others:
        return Remedy(
            False,
            f"{label} is immutable and was recreated, and {_pods(others)} on {node} also use it, so the "
            "kubelet there keeps serving its cached copy: a restart will not help; publish new content "
            "under a new name",
        )
    how = (
        "strategy Recreate stops every old pod before new ones start"
        if facts.kind == "deployment"
        else f"each pod is replaced only once it is gone and no other pod on {node} uses it"
    )
    return Remedy(
        True,
        f"{label} is immutable and was recreated; {how}, so the kubelet on {node} drops its cached copy "
        "and a restart delivers the new content",
    )


def _env(
    check: CheckResult, exp: Expectations, container: str, pod: PodVerdict, facts: Facts,
    own: Mapping[str, frozenset[str]],
) -> Remedy:
    key = check.subject
    value = next((v for v in exp.env_values if v.key == key), None)
    src = value.source if value is not None else dict(exp.env_sources).get(key)
    provided = key in facts.provided_env.get(container, frozenset())
    if src is not None and src.immutable and (check.status is CheckStatus.MISMATCH or provided):
        return _cached(facts, src, pod, own)
    if check.status is CheckStatus.MISMATCH and check.detail.startswith("is stale: "):
        # zero-config: a name another pod of the revision already lacks (flow.judge.stale_names)
        return Remedy(True, f"env is fixed when a container starts: a new container no longer has {key}")
    if check.status is CheckStatus.MISMATCH:
        return Remedy(True, "env is fixed when a container starts: a new container reads the live value")
    if provided:
        return Remedy(
            True, f"env is read when a container starts, and the template's sources now provide {key}"
        )
    if facts.unreadable:
        return Remedy(
            False,
            f"cannot tell whether a restart can add {key}: {', '.join(facts.unreadable)} cannot be read",
        )
    why = f"no source in {facts.workload}'s template provides {key}: a restart cannot add it"
    # a typo of a key the sources do provide (names only: what the template's sources hold)
    meant = did_you_mean(key, sorted(facts.provided_env.get(container, frozenset())), cutoff=KEY_CUTOFF)
    return Remedy(False, f"{why}; did you mean {meant}?" if meant else why)


def _file(
    check: CheckResult, f: ExpectedFile | None, container: str, pod: PodVerdict, facts: Facts,
    own: Mapping[str, frozenset[str]],
) -> Remedy:
    path = check.subject
    if f is None:
        return Remedy(False, f"{path} is not an expected file")
    mounted = facts.live_files.get(container, {}).get(path)
    if f.provider_class and mounted is not None:
        return Remedy(True, f"a new pod mounts secretproviderclass {f.provider_class} as it is now")
    source = f.source if f.volume else mounted.source if mounted is not None else None
    if source is not None and source.immutable:
        return _cached(facts, source, pod, own)
    if mounted is None:
        return Remedy(
            False,
            f"{path} is not mounted from a ConfigMap/Secret in the template: a restart gives the same "
            "image content",
        )
    if mounted.sha256.lower() != f.sha256.lower():
        return Remedy(
            False,
            f"what the template mounts at {path} does not have the expected content either: a restart "
            "cannot deliver it",
        )
    if mounted.subpath:
        return Remedy(True, "a subPath mount never refreshes: a new container mounts the live content")
    return Remedy(True, "a new container mounts the live content")


def stale_line(key: str, sources: tuple[SourceKey, ...]) -> str:
    """`secret web-env no longer has API_TOKEN; pods keep it until their next restart`."""
    named = [f"{kind} {name}" for kind, name in sources]
    lost = f"{named[0]} no longer has {key}"
    if len(named) > 1:
        lost = f"none of {', '.join(named)} has {key} any more"
    return f"{lost}; pods keep it until their next restart"


def _stale(check: CheckResult, sources: tuple[SourceKey, ...]) -> CheckResult:
    """An expected key the pods still carry that their source no longer has: present today, gone
    with the next restart or scale-up, so a restart cannot make it pass (it removes the key)."""
    line = stale_line(check.subject, sources)
    where = " or ".join(f"{kind} {name}" for kind, name in sources)
    return dataclasses.replace(
        check,
        status=CheckStatus.MISMATCH,
        detail=f"is stale: {line}",
        restart_can_fix=False,
        why=f"{line}: a restart removes it, so it cannot help; put {check.subject} back in {where}, "
        "or stop expecting it",
    )


def _check(
    check: CheckResult, exp: Expectations, container: str, pod: PodVerdict, facts: Facts,
    own: Mapping[str, frozenset[str]],
) -> CheckResult:
    """Default deny: only a check that saw stale configuration (missing/mismatch) of a kind judged
    here can be found fixable; anything else (a check that could not be made, a kind or status
    added later) is not."""
    stale = facts.stale_env.get(container, {}).get(check.subject) if check.type == "env" else None
    if check.status is CheckStatus.OK and stale:
        return _stale(check, stale)
    if check.status is CheckStatus.OK:
        return check
    if check.status not in STALE:
        remedy = Remedy(False, f"{check.detail}; {_UNSEEN}" if check.detail else _UNSEEN)
    elif facts.missing_classes:
        names = ", ".join(f"secretproviderclass {n}" for n in facts.missing_classes)
        remedy = Remedy(
            False,
            f"{names} does not exist: a new pod would not mount its CSI volume (FailedMount) and would "
            "never start, so a restart cannot help; create the class first",
        )
    elif check.type == "env":
        remedy = _env(check, exp, container, pod, facts, own)
    elif check.type == "file":
        files = {f.path: f for f in exp.files}
        remedy = _file(check, files.get(check.subject), container, pod, facts, own)
    elif check.type == "http":
        remedy = _http(check, pod)
    else:
        remedy = Remedy(False, f"nothing says a restart changes a {check.type} check")
    return dataclasses.replace(check, restart_can_fix=remedy.restart_can_fix, why=remedy.why)


def _http(check: CheckResult, pod: PodVerdict) -> Remedy:
    """An app's answer changes on a restart only if what the restart changes (its configuration, a
    container that is not running) is what is wrong with the pod. Judged after the pod's own checks."""
    own = [c for container in pod.containers for c in container.checks]
    if any(restart_fixes(c) for c in own):
        return Remedy(True, f"pod {pod.name} runs with stale configuration: the app reads it when it starts")
    if any(c.error is not None for c in pod.containers):
        return Remedy(
            False,
            f"pod {pod.name} could not be inspected, so nothing shows that its configuration is stale: "
            f"a restart may not change its answer to {check.subject}",
        )
    if own:
        return Remedy(
            False,
            f"pod {pod.name} has every expected env key, value and file, so a restart gives it the same "
            f"configuration: its answer to {check.subject} would not change",
        )
    return Remedy(
        False,
        f"nothing tells whether pod {pod.name}'s configuration is stale (no env or file expectations): "
        f"a restart may not change its answer to {check.subject}",
    )


def _own_users(verdict: AttemptVerdict) -> dict[str, frozenset[str]]:
    """node -> this revision's pods there (every one of them uses the template's sources)."""
    out: dict[str, set[str]] = {}
    for pod in verdict.pods:
        out.setdefault(pod.node, set()).add(pod.name)
    return {node: frozenset(pods) for node, pods in out.items()}


def assess(
    *, verdict: AttemptVerdict, expectations: Mapping[str, Expectations], facts: Facts
) -> AttemptVerdict:
    """The verdict with every failing check judged: `restart_can_fix` and `why`."""
    own = _own_users(verdict)
    pods: list[PodVerdict] = []
    for pod in verdict.pods:
        containers = [
            ContainerVerdict(
                c.name,
                tuple(
                    _check(check, expectations.get(c.name, Expectations()), c.name, pod, facts, own)
                    for check in c.checks
                ),
                c.error,
            )
            for c in pod.containers
        ]
        judged = dataclasses.replace(pod, containers=tuple(containers))
        http = tuple(_check(check, Expectations(), "", judged, facts, own) for check in pod.checks)
        pods.append(dataclasses.replace(judged, checks=http))
    return dataclasses.replace(verdict, pods=tuple(pods))
