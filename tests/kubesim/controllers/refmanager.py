"""Claiming objects by selector, as kubernetes/kubernetes pkg/controller/controller_ref_manager.go
(`BaseControllerRefManager.ClaimObject`) does for the ReplicaSet controller's pods and the
Deployment controller's ReplicaSets: an object the owner controls that no longer matches its
selector is released (its controller reference removed, so the owner makes a replacement); an
orphan that matches is adopted (a controller reference added), unless the owner or the orphan is
being deleted; what another owner controls is left alone."""

from __future__ import annotations

from typing import Any

from ..storage.resources import Resource
from ..storage.selection import labels_match, selector_from_match
from ..storage.store import Obj, Store
from .podutil import controller_ref


def controller_of(obj: Obj) -> dict[str, Any] | None:
    """metav1.GetControllerOf: the ownerReference with `controller: true`."""
    return next((r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None)


def selector_matches(selector: Obj | None, obj: Obj) -> bool:
    return labels_match(obj["metadata"].get("labels") or {}, selector_from_match(selector))


def claim(store: Store, res: Resource, owner: Obj, candidates: list[Obj]) -> list[Obj]:
    """ClaimObject over `candidates` (objects of `res` in the owner's namespace): the ones the
    owner controls afterwards, as stored."""
    uid = owner["metadata"]["uid"]
    deleting = bool(owner["metadata"].get("deletionTimestamp"))
    selector = (owner.get("spec") or {}).get("selector")
    ns = owner["metadata"].get("namespace", "")
    out: list[Obj] = []
    for obj in candidates:
        ref = controller_of(obj)
        matches = selector_matches(selector, obj)
        if ref is not None:
            if ref.get("uid") != uid:
                continue  # owned by someone else
            if matches:
                out.append(obj)
            elif not deleting:
                store.mutate(res, ns, obj["metadata"]["name"], _release(uid, obj["metadata"]["uid"]))
            continue
        if deleting or not matches or obj["metadata"].get("deletionTimestamp"):
            continue
        adopted = store.mutate(res, ns, obj["metadata"]["name"], _adopt(owner, obj["metadata"]["uid"]))
        if adopted is not None and controller_of(adopted) is not None:
            out.append(adopted)
    return out


def _release(owner_uid: str, uid: str) -> Any:
    """The release patch: the owner's reference deleted (`$patch: delete` by uid), if still the same object."""

    def fn(o: Obj) -> None:
        if o["metadata"]["uid"] != uid:
            return
        keep = [r for r in o["metadata"].get("ownerReferences") or [] if r.get("uid") != owner_uid]
        if keep:
            o["metadata"]["ownerReferences"] = keep
        else:  # an empty list is omitted, as the apiserver serialises it
            o["metadata"].pop("ownerReferences", None)

    return fn


def _adopt(owner: Obj, uid: str) -> Any:
    """The adoption patch: a controller reference to the owner, unless someone adopted it first."""

    def fn(o: Obj) -> None:
        if o["metadata"]["uid"] != uid or controller_of(o) is not None:
            return
        o["metadata"].setdefault("ownerReferences", []).append(controller_ref(owner))

    return fn
