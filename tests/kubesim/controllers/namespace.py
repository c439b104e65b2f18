"""The namespace controller (kubernetes/kubernetes pkg/controller/namespace/deletion/
namespaced_resources_deleter.go): for a namespace marked for deletion (apiserver/
namespace_lifecycle.py), delete every namespaced object in it, report what remains in the status
conditions (status_condition_utils.go), and once nothing is left remove the `kubernetes`
finalizer, after which the apiserver deletes the namespace."""

from __future__ import annotations

import contextlib
import copy
from typing import TYPE_CHECKING

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH, RESOURCES
from ..storage.store import Obj, now_rfc3339

if TYPE_CHECKING:
    from ..cluster import Cluster

NAMESPACES = BY_PATH[("", "namespaces")]
FINALIZER = "kubernetes"
# status_condition_utils.go: the conditions the deleter keeps, with their "ok" reason and message
_OK = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)


class NamespaceController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store

    def reconcile(self, name: str) -> None:
        ns = self.store.find(NAMESPACES, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        remaining: dict[str, int] = {}
        for res in RESOURCES:
            if not res.namespaced:
                continue
            objs = self.store.list(res, name)
            for o in objs:
                if not o["metadata"].get("deletionTimestamp"):
                    with contextlib.suppress(ApiError):  # gone already: a cascade took it
                        self.cluster.delete_object(
                            res, name, o["metadata"]["name"], grace=None, propagation="Background"
                        )
            left = len(self.store.list(res, name))
            if left:
                remaining[f"{res.plural}.{res.group}"] = left
        self._conditions(name, remaining)
        if remaining:
            return
        # finalizeNamespace: drop our finalizer; with none left the apiserver deletes the namespace
        cur = self.store.get(NAMESPACES, "", name)
        finalizers = [f for f in (cur.get("spec") or {}).get("finalizers") or [] if f != FINALIZER]
        new = copy.deepcopy(cur)
        new.setdefault("spec", {})["finalizers"] = finalizers
        if not finalizers:
            new["spec"].pop("finalizers")
        cur = self.store.update(NAMESPACES, "", new)
        if not (cur.get("spec") or {}).get("finalizers") and not cur["metadata"].get("finalizers"):
            self.store.remove(NAMESPACES, "", name)

    def _conditions(self, name: str, remaining: dict[str, int]) -> None:
        """updateConditions: each of the five types, the ok variant unless content remains."""

        def fn(o: Obj) -> None:
            status = o.setdefault("status", {})
            old = {c.get("type"): c for c in status.get("conditions") or []}
            out = []
            for type_, reason, message in _OK:
                status_, why, text = "False", reason, message
                if type_ == "NamespaceContentRemaining" and remaining:
                    shown = ", ".join(sorted(f"{k} has {n} resource instances" for k, n in remaining.items()))
                    status_, why, text = (
                        "True",
                        "SomeResourcesRemain",
                        f"Some resources are remaining: {shown}",
                    )
                prev = old.get(type_)
                since = now_rfc3339()
                if prev is not None and prev.get("status") == status_:
                    since = prev.get("lastTransitionTime", since)
                out.append(
                    {
                        "type": type_,
                        "status": status_,
                        "lastTransitionTime": since,
                        "reason": why,
                        "message": text,
                    }
                )
            status["conditions"] = out

        self.store.mutate(NAMESPACES, "", name, fn, status=True)
