"""Pod and owner predicates the controllers share (`podutil`, `controller.*` helpers)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..storage.store import Obj

SAFE = "bcdfghjklmnpqrstvwxz2456789"


def is_active(pod: Obj) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded",
        "Failed",
    )


def is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def is_running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def is_available(pod: Obj, min_ready: int, now: dt.datetime) -> bool:
    """`podutil.IsPodAvailable`."""
    if not is_ready(pod):
        return False
    if min_ready <= 0:
        return True
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("lastTransitionTime"):
            since = dt.datetime.strptime(c["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
            return (now - since).total_seconds() > min_ready
    return False


def terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def owned_by(obj: Obj, owner: Obj) -> bool:
    return any(
        r.get("uid") == owner["metadata"]["uid"] and r.get("controller")
        for r in obj["metadata"].get("ownerReferences") or []
    )


def controller_ref(owner: Obj) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def scaled(v: Any, total: int, *, round_up: bool) -> int:
    """`intstr.GetScaledValueFromIntOrPercent`."""
    if isinstance(v, str) and v.endswith("%"):
        x = int(v[:-1]) * total / 100
        return int(-(-x // 1)) if round_up else int(x // 1)
    return int(v)


def has_owner_ref(obj: Obj, owner: Obj) -> bool:
    """Any ownerReference to `owner` (controller or not)."""
    return any(r.get("uid") == owner["metadata"]["uid"] for r in obj["metadata"].get("ownerReferences") or [])


def pod_sort_key(p: Obj) -> tuple[int, str, str]:
    """`podByCreationTimestampAndPhase`: scheduled first, then oldest, then by name."""
    return (0 if p["spec"].get("nodeName") else 1, p["metadata"]["creationTimestamp"], p["metadata"]["name"])


def parse_time(ts: str) -> dt.datetime:
    return dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
