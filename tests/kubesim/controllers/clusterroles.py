"""The ClusterRole aggregation controller (kubernetes/kubernetes pkg/controller/clusterroleaggregation/
clusterroleaggregation_controller.go syncClusterRole): a ClusterRole with an `aggregationRule`
holds the rules of every ClusterRole its selectors match, in name order, each rule once. So
`admin`, `edit` and `view` hold the bootstrap `aggregate-to-*` roles' rules, and a role a user
labels `rbac.authorization.k8s.io/aggregate-to-view: "true"` (a CRD's readers) joins them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..storage.resources import BY_PATH
from ..storage.selection import labels_match, selector_from_match

if TYPE_CHECKING:
    from ..storage.store import Store

CLUSTER_ROLES = BY_PATH[("rbac.authorization.k8s.io", "clusterroles")]


def aggregate(store: Store) -> None:
    """Fill every aggregated role; repeated until nothing changes (edit aggregates view, admin edit)."""
    for _ in range(5):
        changed = False
        roles = store.list(CLUSTER_ROLES)
        for role in roles:
            selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors")
            if not selectors:
                continue
            rules: list[Any] = []
            for selector in selectors:
                for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
                    if other["metadata"]["name"] == role["metadata"]["name"]:
                        continue
                    if labels_match(other["metadata"].get("labels") or {}, selector_from_match(selector)):
                        rules += [r for r in other.get("rules") or [] if r not in rules]
            if rules != (role.get("rules") or []):
                store.mutate(
                    CLUSTER_ROLES, "", role["metadata"]["name"], lambda o, r=rules: o.__setitem__("rules", r)
                )
                changed = True
        if not changed:
            return
