"""Scheduling predicates (scheduler plugins NodeAffinity, TaintToleration, NodeUnschedulable),
shared by the scheduler and the DaemonSet controller, and DaemonSet pod pinning."""

from __future__ import annotations

from ..storage.store import Obj

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """`Toleration.ToleratesTaint`."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return bool(op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or ""))


def untolerated(taints: list[Obj], tolerations: list[Obj], effects: tuple[str, ...]) -> list[Obj]:
    return [
        t for t in taints if t.get("effect") in effects and not any(tolerates(tol, t) for tol in tolerations)
    ]


def _requirement(req: Obj, value: str | None) -> bool:
    op = req.get("operator")
    vals = [str(v) for v in req.get("values") or []]
    if op == "In":
        return value is not None and value in vals
    if op == "NotIn":
        return value is None or value not in vals
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and vals:
        try:
            a, b = int(value), int(vals[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def node_affinity_matches(spec: Obj, node: Obj) -> bool:
    """`nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: spec.nodeSelector and the required
    node affinity terms (ORed; within a term matchExpressions on labels and matchFields on
    `metadata.name` are ANDed)."""
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if not required or terms is None:
        return True
    for term in terms:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue  # an empty term matches nothing
        if all(_requirement(r, labels.get(r.get("key", ""))) for r in exprs) and all(
            _requirement(r, node["metadata"]["name"] if r.get("key") == "metadata.name" else None)
            for r in fields
        ):
            return True
    return False


def node_fits(spec: Obj, node: Obj) -> bool:
    """Whether the scheduler may bind a pod with this spec to the node."""
    if spec.get("nodeName") and spec["nodeName"] != node["metadata"]["name"]:
        return False
    if not node_affinity_matches(spec, node):
        return False
    tolerations = spec.get("tolerations") or []
    nspec = node.get("spec") or {}
    if nspec.get("unschedulable") and not any(
        tolerates(t, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}) for t in tolerations
    ):
        return False
    return not untolerated(nspec.get("taints") or [], tolerations, ("NoSchedule", "NoExecute"))


def add_daemon_tolerations(spec: Obj) -> None:
    """`util.AddOrUpdateDaemonPodTolerations`."""
    wanted = [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        (UNSCHEDULABLE_TAINT, "NoSchedule"),
    ]
    if spec.get("hostNetwork"):
        wanted.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    tols = list(spec.get("tolerations") or [])
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        same = [i for i, t in enumerate(tols) if t.get("key") == key and t.get("effect") == effect]
        if same:
            tols[same[0]] = new
        else:
            tols.append(new)
    spec["tolerations"] = tols


def target_node(pod: Obj) -> str:
    """`util.GetTargetNodeName`: spec.nodeName, else the node the DaemonSet's affinity pins."""
    if pod["spec"].get("nodeName"):
        return str(pod["spec"]["nodeName"])
    required = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for f in term.get("matchFields") or []:
            if (
                f.get("key") == "metadata.name"
                and f.get("operator") == "In"
                and len(f.get("values") or []) == 1
            ):
                return str(f["values"][0])
    return ""


def pin_to_node(spec: Obj, node: str) -> None:
    """`util.ReplaceDaemonSetPodNodeNameNodeAffinity`."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = spec.setdefault("affinity", {})
    na = affinity.setdefault("nodeAffinity", {})
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(req, dict):
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    else:
        req["nodeSelectorTerms"] = [term]
