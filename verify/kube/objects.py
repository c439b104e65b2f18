"""Typed reads of Kubernetes JSON as the API server returns it: one access style everywhere.

Every accessor tolerates a missing or mistyped field (a defaulting webhook, an older server) by
returning the empty value of its type, so callers never chain `.get(..., {})`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Json = Mapping[str, Any]


def mapping(obj: Any, *keys: str) -> Json:
    """The mapping at `obj[k1][k2]...`, or an empty one."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, Mapping) else {}


def items(obj: Any, key: str) -> list[Any]:
    """The list at `obj[key]`, or an empty one."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, list) else []


def maps(obj: Any, key: str) -> list[Json]:
    """The mappings of the list at `obj[key]` (anything else in it skipped)."""
    return [v for v in items(obj, key) if isinstance(v, Mapping)]


def integer(obj: Any, key: str, default: int = 0) -> int:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def text(obj: Any, key: str) -> str:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, str) else ""


def strings(obj: Any, *keys: str) -> dict[str, str]:
    """A string map (labels, annotations, matchLabels) with non-string values dropped."""
    return {str(k): v for k, v in mapping(obj, *keys).items() if isinstance(v, str)}


# -- metadata -------------------------------------------------------------------------------------


def name(obj: Json) -> str:
    return text(mapping(obj, "metadata"), "name")


def uid(obj: Json) -> str:
    return text(mapping(obj, "metadata"), "uid")


def resource_version(obj: Json) -> str:
    return text(mapping(obj, "metadata"), "resourceVersion")


def generation(obj: Json) -> int:
    return integer(mapping(obj, "metadata"), "generation")


def annotations_of(obj: Json) -> dict[str, str]:
    return strings(obj, "metadata", "annotations")


def labels_of(obj: Json) -> dict[str, str]:
    return strings(obj, "metadata", "labels")


def deleting(obj: Json) -> bool:
    """A deletionTimestamp is set: the object is going away."""
    return bool(mapping(obj, "metadata").get("deletionTimestamp"))


def owned_by(obj: Json, owner_uid: str) -> bool:
    refs = maps(mapping(obj, "metadata"), "ownerReferences")
    return bool(owner_uid) and any(r.get("uid") == owner_uid for r in refs)


# -- workloads ------------------------------------------------------------------------------------


def replicas(workload: Json) -> int:
    """spec.replicas, defaulting to 1 as the API server does when it is unset."""
    return integer(mapping(workload, "spec"), "replicas", 1)


def paused(workload: Json) -> bool:
    return bool(mapping(workload, "spec").get("paused"))


def template(workload: Json) -> Json:
    """spec.template: the pod template of a Deployment, StatefulSet, DaemonSet or ReplicaSet."""
    return mapping(workload, "spec", "template")


def pod_spec(workload: Json) -> Json:
    """spec.template.spec."""
    return mapping(workload, "spec", "template", "spec")


def app_containers(spec: Json) -> list[Json]:
    """The containers that run beside the app for the pod's life: `containers`, then the native
    sidecars (`initContainers` with `restartPolicy: Always`, KEP-753), which get env and mounts
    at start like any container and so are inspected like one."""
    sidecars = [c for c in maps(spec, "initContainers") if text(c, "restartPolicy") == "Always"]
    return [*maps(spec, "containers"), *sidecars]


def container_names(spec: Json) -> list[str]:
    """The names of `app_containers`."""
    return [text(c, "name") for c in app_containers(spec)]


def selector(workload: Json) -> str:
    """The workload's `spec.selector` as a label selector string (matchLabels and matchExpressions)."""
    sel = mapping(workload, "spec", "selector")
    terms = [f"{k}={v}" for k, v in sorted(strings(sel, "matchLabels").items())]
    for expr in maps(sel, "matchExpressions"):
        key, op = text(expr, "key"), text(expr, "operator")
        values = [str(v) for v in items(expr, "values")]
        if op == "In":
            terms.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            terms.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            terms.append(key)
        elif op == "DoesNotExist":
            terms.append(f"!{key}")
    return ",".join(terms)
