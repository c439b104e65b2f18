"""PriorityClasses: the two every apiserver creates at start (pkg/apis/scheduling/types.go
SystemPriorityClasses, made by pkg/registry/scheduling/rest/storage_scheduling.go's post-start
hook) and the Priority admission plugin (plugin/pkg/admission/priority/admission.go): a new pod
naming a class gets its value and preemption policy, a name no class has is 403 `pods "x" is
forbidden: no PriorityClass with name gold was found`, and a pod naming none gets the global
default class, if one exists (else priority 0: pod_defaults.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..storage.errors import ApiError
from ..storage.kindindex import index_of
from ..storage.resources import BY_PATH, Resource
from ..storage.store import Obj

if TYPE_CHECKING:
    from ..storage.store import Store

CLASSES = BY_PATH[("scheduling.k8s.io", "priorityclasses")]
SYSTEM = (
    ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node."),
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
)  # fmt: skip


def install_system_classes(store: Store) -> None:
    for name, value, description in SYSTEM:
        store.create(
            CLASSES,
            "",
            {
                "metadata": {"name": name},
                "value": value,
                "description": description,
                "preemptionPolicy": "PreemptLowerPriority",
            },
        )


def admit(store: Store, res: Resource, ns: str, pod: Obj) -> None:
    """The Store's mutating admission of a new pod."""
    if res.kind != "Pod":
        return
    spec = pod.setdefault("spec", {})
    name = spec.get("priorityClassName")
    if name:
        cls = store.find(CLASSES, "", name)
        if cls is None:
            meta = pod.get("metadata") or {}
            shown = meta.get("name") or meta.get("generateName") or "Unknown"
            raise ApiError(
                403,
                "Forbidden",
                f'pods "{shown}" is forbidden: no PriorityClass with name {name} was found',
                {"name": shown, "kind": "pods"},
            )
    else:
        defaults = [c for c in index_of(store).list(CLASSES) if c.get("globalDefault")]
        if not defaults:
            return
        cls = min(defaults, key=lambda c: int(c.get("value") or 0))
        spec["priorityClassName"] = cls["metadata"]["name"]
    spec["priority"] = int(cls.get("value") or 0)
    spec["preemptionPolicy"] = cls.get("preemptionPolicy") or "PreemptLowerPriority"
