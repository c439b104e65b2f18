"""ControllerRevision history, shared by the StatefulSet and DaemonSet controllers: revision
hashing (`history.HashControllerRevision`, `controller.ComputeHash`), the patch a revision
stores, and the revisions an owner controls."""

from __future__ import annotations

import copy
import json
import struct
from typing import TYPE_CHECKING, Any

from ..storage.resources import BY_PATH
from ..storage.store import Obj
from .podutil import owned_by

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
REVISIONS = BY_PATH[("apps", "controllerrevisions")]

REVISION_LABEL = "controller-revision-hash"  # apps.ControllerRevisionHashLabelKey
CR_HASH_LABEL = "controller.kubernetes.io/hash"  # history.ControllerRevisionHashLabel
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


def safe_encode(s: str) -> str:
    """`rand.SafeEncodeString`: each character mapped into an alphabet without vowels."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def fnv32(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= b
    return h


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def revision_patch(obj: Obj) -> Obj:
    """`getPatch`: the strategic-merge patch that restores this pod template (what a revision stores)."""
    tpl = copy.deepcopy(obj["spec"].get("template") or {})
    tpl["$patch"] = "replace"
    return {"spec": {"template": tpl}}


def revision_template(rev: Obj) -> Obj:
    tpl = copy.deepcopy(((rev.get("data") or {}).get("spec") or {}).get("template") or {})
    tpl.pop("$patch", None)
    return tpl


def compute_hash(template: Obj, collision: int | None) -> str:
    """`controller.ComputeHash`: FNV-1a of the template (here its canonical JSON) and the collision count."""
    data = canonical(template)
    if collision is not None:
        data += struct.pack("<I", int(collision) & 0xFFFFFFFF) + b"\0\0\0\0"
    return safe_encode(str(fnv32a(data)))


class RevisionedController:
    """What the StatefulSet and DaemonSet controllers share: their revisions and deletes."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.rng = cluster.rng

    def _revisions(self, owner: Obj) -> list[Obj]:
        """ControllerRevisions controlled by `owner`, by revision, then age, then name."""
        ns = owner["metadata"]["namespace"]
        revs = [r for r in self.store.list(REVISIONS, ns) if owned_by(r, owner)]
        revs.sort(
            key=lambda r: (
                int(r.get("revision", 0)),
                r["metadata"]["creationTimestamp"],
                r["metadata"]["name"],
            )
        )
        return revs

    def _set_revision_number(self, rev: Obj, number: int) -> Obj:
        ns, name = rev["metadata"]["namespace"], rev["metadata"]["name"]
        return self.store.mutate(REVISIONS, ns, name, lambda o: o.__setitem__("revision", number)) or rev

    def _delete(self, res: Any, pod_or_rev: Obj) -> None:
        meta = pod_or_rev["metadata"]
        if self.store.find(res, meta["namespace"], meta["name"]) is None:
            return
        self.cluster.delete_object(res, meta["namespace"], meta["name"], grace=None, propagation="Background")
