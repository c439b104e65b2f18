"""Namespace deletion, the apiserver's half: pkg/registry/core/namespace/storage/storage.go Delete
(a namespace with finalizers is marked, phase Terminating, and returned; the namespace controller,
controllers/namespace.py, empties it and removes the finalizer) and the NamespaceLifecycle
admission plugin (plugin/pkg/admission/namespace/lifecycle/admission.go: no new content in a
namespace being terminated; `default`, `kube-system` and `kube-public` may not be deleted)."""

from __future__ import annotations

import copy
from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH, Resource
from ..storage.store import Obj, Store, now_rfc3339

NAMESPACES = BY_PATH[("", "namespaces")]
IMMORTAL = ("default", "kube-system", "kube-public")


def begin_deletion(store: Store, name: str, *, dry: bool = False) -> Obj:
    """DELETE /api/v1/namespaces/NAME: refused for the immortal ones; with finalizers, marked
    (deletionTimestamp, phase Terminating) and returned, 200; without, removed at once. A dry
    run answers the same and changes nothing."""
    if name in IMMORTAL:
        raise ApiError(
            403,
            "Forbidden",
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            {"name": name, "kind": "namespaces"},
        )
    cur = store.get(NAMESPACES, "", name)
    if cur["metadata"].get("deletionTimestamp"):
        return cur
    if not (cur.get("spec") or {}).get("finalizers"):
        return cur if dry else store.remove(NAMESPACES, "", name)
    new = copy.deepcopy(cur)
    new["metadata"]["deletionTimestamp"] = now_rfc3339()
    new["metadata"]["deletionGracePeriodSeconds"] = 0
    new.setdefault("status", {})["phase"] = "Terminating"
    return new if dry else store.replace(NAMESPACES, "", new)


def refuse_if_terminating(store: Store, res: Resource, namespace: str, name: str) -> None:
    """NamespaceLifecycle admission: no creates in a namespace being terminated (a 403 with the
    NamespaceTerminating cause, as admission.NewForbidden builds it)."""
    if not res.namespaced or res.plural == "namespaces" or not namespace:
        return
    ns = store.find(NAMESPACES, "", namespace)
    if ns is None or (ns.get("status") or {}).get("phase") != "Terminating":
        return
    subject = f'{res.qualified} "{name}"' if name else res.qualified
    details: dict[str, Any] = {"name": name} if name else {}
    if res.group:
        details["group"] = res.group
    details["kind"] = res.plural
    details["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    raise ApiError(
        403,
        "Forbidden",
        f"{subject} is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
        details,
    )
