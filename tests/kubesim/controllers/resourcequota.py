"""The resource quota controller (kubernetes/kubernetes pkg/controller/resourcequota/
resource_quota_controller.go syncResourceQuota): each ResourceQuota's `status.hard` is its
`spec.hard` and `status.used` what the objects of its namespace it covers use, every hard
resource listed (0 when nothing uses it), in Quantity's canonical form. Synced when a quota
changes and when an object of a namespace holding quotas is written or deleted."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ..apiserver.quota import QUOTAS, shown, used
from ..storage.kindindex import index_of
from ..storage.store import Obj

if TYPE_CHECKING:
    from ..storage.store import Store


class ResourceQuotaController:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.namespaces: set[str] = set()  # namespaces holding a quota: only their writes matter

    def reconcile(self, ns: str) -> None:
        quotas = index_of(self.store).list(QUOTAS, ns)
        if not quotas:
            self.namespaces.discard(ns)
            return
        self.namespaces.add(ns)
        for q in quotas:
            hard = dict((q.get("spec") or {}).get("hard") or {})
            probe: Obj = {**q, "status": {"hard": hard}}
            amounts = used(self.store, probe)
            status = {
                "hard": hard,
                "used": {k: shown(k, amounts.get(k, Fraction(0)), hard) for k in sorted(hard)},
            }
            if status != q.get("status"):
                self.store.mutate(
                    QUOTAS,
                    ns,
                    q["metadata"]["name"],
                    lambda o, s=status: o.__setitem__("status", s),
                    status=True,
                )
