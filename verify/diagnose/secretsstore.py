"""Why a pod misses what a Secrets Store CSI volume delivers, in the driver's own terms. Pure.

The driver creates a synced Secret at a pod's first mount and never updates it there (only its
rotation does: controllers/secretproviderclasspodstatus_controller.go, pkg/rotation); a pod reads
its env once, when its containers start. Helm applies Deployments before custom kinds
(pkg/release/util/kind_sorter.go), so during an upgrade new pods mount the class as it was. The
facts (when the class was created and last changed, when each pod started, what each pod's
SecretProviderClassPodStatus recorded) name which of these happened."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from verify.findings import AttemptVerdict, CheckStatus, Expectations, expectations_for


@dataclass(frozen=True)
class ClassFacts:
    """One SecretProviderClass as it is now (metadata and mapping only)."""

    name: str
    created: str  # RFC 3339
    changed: str  # its last write (managedFields), RFC 3339
    generation: int = 1
    # (secret name, key, object name) for every object it syncs
    synced: tuple[tuple[str, str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # (file name, object name) it mounts


@dataclass(frozen=True)
class PodMount:
    """What one pod's SecretProviderClassPodStatus recorded for one class."""

    mounted: str  # when the status was created (the first mount), RFC 3339
    objects: tuple[str, ...] = ()  # ids with their versions, e.g. "secret/DB_URL (version 1234)"


@dataclass(frozen=True)
class CsiFacts:
    classes: Mapping[str, ClassFacts] = field(default_factory=dict)
    started: Mapping[str, str] = field(default_factory=dict)  # pod -> its containers' first start
    mounts: Mapping[tuple[str, str], PodMount] = field(default_factory=dict)  # (pod, class)
    statuses_read: bool = True


def _time(ts: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def _after(later: str, earlier: str) -> float | None:
    """Seconds `later` is after `earlier` (None when either is unknown or it is not after)."""
    a, b = _time(later), _time(earlier)
    if a is None or b is None or a <= b:
        return None
    return (a - b).total_seconds()


@dataclass
class _Group:
    text: str
    pods: dict[str, str] = field(default_factory=dict)  # pod -> node
    targets: set[str] = field(default_factory=set)
    delay: float = 0.0


def _pods(g: _Group) -> str:
    names = sorted(g.pods)
    shown = ", ".join(f"{p} ({g.pods[p]})" for p in names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"pod{'s' if len(names) != 1 else ''} {shown}{more}"


def _class_for(csi: CsiFacts, secret: str, key: str) -> tuple[ClassFacts, str] | None:
    for c in csi.classes.values():
        for s, k, obj in c.synced:
            if s == secret and k == key:
                return c, obj
    return None


def explain(
    *,
    workload: str,
    verdict: AttemptVerdict,
    expectations: Expectations | Mapping[str, Expectations],
    csi: CsiFacts,
) -> tuple[list[str], set[tuple[str, str, str]]]:
    """Lines naming the pod, the class and the ordering; and the env keys they explain as
    (source kind, source name, key), whose generic lines they replace."""
    groups: dict[tuple[str, str, str], _Group] = {}
    covered: set[tuple[str, str, str]] = set()
    for pod in verdict.pods:
        started = csi.started.get(pod.name, "")
        for c in pod.containers:
            exp = expectations_for(expectations, c.name)
            values = {v.key: v for v in exp.env_values}
            sources = dict(exp.env_sources)
            files = {f.path: f for f in exp.files}
            for check in c.checks:
                if (
                    check.status not in (CheckStatus.MISSING, CheckStatus.MISMATCH)
                    or check.restart_can_fix is False
                ):
                    continue
                if check.type == "file":
                    f = files.get(check.subject)
                    if f is None or not f.provider_class or f.provider_class not in csi.classes:
                        continue
                    cls = csi.classes[f.provider_class]
                    obj = next((o for fn, o in cls.files if check.subject.endswith("/" + fn)), "")
                    key = ("file", cls.name, obj)
                    text = _file_text(cls, obj, check.status)
                else:
                    v = values.get(check.subject)
                    src = v.source if v is not None else sources.get(check.subject)
                    if src is None or src.kind != "secret":
                        continue
                    found = _class_for(csi, src.name, v.origin.rpartition("/")[2] if v else check.subject)
                    if found is None:
                        continue
                    cls, obj = found
                    covered.add(("secret", src.name, check.subject))
                    key, text = _env_cause(csi, cls, obj, src.name, check.status, pod.name, started)
                g = groups.setdefault(key, _Group(text))
                g.pods[pod.name] = pod.node
                g.targets.add(check.subject)
                if check.type == "env" and key[0] in ("class-changed", "class-created"):
                    moment = cls.changed if key[0] == "class-changed" else cls.created
                    g.delay = max(g.delay, _after(moment, started) or 0.0)
    lines = []
    for _, g in sorted(groups.items()):
        targets = ", ".join(sorted(g.targets))
        delay = f"{g.delay:.0f} s" if g.delay else "after"
        lines.append(f"{workload}: {_pods(g)} ({targets}): " + g.text.replace("{delay}", delay))
    return lines, covered


def _env_cause(
    csi: CsiFacts, cls: ClassFacts, obj: str, secret: str, status: CheckStatus, pod: str, started: str
) -> tuple[tuple[str, str, str], str]:
    via = f"secret {secret} (synced by secretproviderclass {cls.name})"
    mount = csi.mounts.get((pod, cls.name))
    listed = ""
    if mount is not None and any(i.partition(" ")[0].rpartition("/")[2] == obj for i in mount.objects):
        listed = f"; the driver's rotation has since mounted {obj} and synced it, but never into env"
    elif mount is not None:
        listed = f"; its SecretProviderClassPodStatus lists only {', '.join(mount.objects) or 'no objects'}"
    if status is CheckStatus.MISMATCH:
        return (
            ("rotation", cls.name, secret),
            f"the driver's rotation updated {via} and the mounted files after the containers started, "
            "but env is read only when a container starts: a restart fixes it",
        )
    if _after(cls.created, started) is not None:
        return (
            ("class-created", cls.name, secret),
            f"secretproviderclass {cls.name} was created {{delay}} after the pod started, so {obj} reached "
            f"{via} only later: env is read only when a container starts; a restart fixes it",
        )
    if _after(cls.changed, started) is not None:
        gen = f", to generation {cls.generation}" if cls.generation > 1 else ""
        return (
            ("class-changed", cls.name, secret),
            f"mounted SecretProviderClass {cls.name} before it listed {obj} (class changed {{delay}} "
            f"after the pod started{gen}; Helm applies Deployments before custom kinds){listed}: env is "
            "read only when a container starts; a restart remounts it",
        )
    return (
        ("secret-late", cls.name, secret),
        f"started before {via} had {obj} (the driver creates a synced Secret at the first mount and only "
        "its rotation updates it): env is read only when a container starts; a restart fixes it",
    )


def _file_text(cls: ClassFacts, obj: str, status: CheckStatus) -> str:
    if status is CheckStatus.MISSING:
        return (
            f"mounted SecretProviderClass {cls.name} before it listed {obj}, and nothing remounted it "
            "(the driver's rotation is off or has not run): a restart remounts it"
        )
    return (
        f"the file from secretproviderclass {cls.name} differs from the Secret it syncs to (mounted "
        "before the vault changed; the synced Secret is updated only by rotation): a restart remounts it"
    )
