"""What the Secrets Store CSI objects say about a failed attempt's pods, read only when
something failed: when each class was created and last changed, what it syncs, when each pod's
containers started, and what each pod's SecretProviderClassPodStatus recorded at its mount."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify.diagnose.secretsstore import ClassFacts, CsiFacts, PodMount
from verify.flow import csi
from verify.flow.lookup import Lookup
from verify.kube import objects


def _changed(obj: Mapping[str, Any]) -> str:
    """The last write to an object: its newest managedFields entry, else its creation."""
    meta = objects.mapping(obj, "metadata")
    times = [objects.text(e, "time") for e in objects.maps(meta, "managedFields")]
    return max([t for t in times if t] or [objects.text(meta, "creationTimestamp")])


def _class(name: str, spc: Mapping[str, Any]) -> ClassFacts:
    listed = csi.class_objects(spc)
    return ClassFacts(
        name=name,
        created=objects.text(objects.mapping(spc, "metadata"), "creationTimestamp"),
        changed=_changed(spc),
        generation=objects.generation(spc),
        synced=tuple((s, k, o.object_name) for o in listed for s, k in o.synced),
        files=tuple((o.file, o.object_name) for o in listed),
    )


def _started(pod: Mapping[str, Any]) -> str:
    """When the pod's containers first ran (their earliest `startedAt`)."""
    times = []
    for cs in objects.maps(objects.mapping(pod, "status"), "containerStatuses"):
        for state in ("running", "terminated"):
            t = objects.text(objects.mapping(cs, "state", state), "startedAt")
            if t:
                times.append(t)
    return min(times) if times else objects.text(objects.mapping(pod, "status"), "startTime")


def csi_facts(
    lookup: Lookup, *, workload: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any] | None]
) -> CsiFacts:
    pods = lookup.pods(selector=objects.selector(workload))
    statuses = lookup.class_pod_statuses()
    mounts: dict[tuple[str, str], PodMount] = {}
    for st in statuses or []:
        status = objects.mapping(st, "status")
        key = (objects.text(status, "podName"), objects.text(status, "secretProviderClassName"))
        ids = tuple(
            objects.text(o, "id") + (f" (version {v})" if (v := objects.text(o, "version")) else "")
            for o in objects.maps(status, "objects")
        )
        mounts[key] = PodMount(objects.text(objects.mapping(st, "metadata"), "creationTimestamp"), ids)
    return CsiFacts(
        classes={n: _class(n, spc) for n, spc in classes.items() if spc is not None},
        started={objects.name(p): _started(p) for p in pods},
        mounts=mounts,
        statuses_read=statuses is not None,
    )
