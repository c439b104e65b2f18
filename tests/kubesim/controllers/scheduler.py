"""The scheduler: pending pods bound to the least loaded node whose filters pass (filters.py)."""

from __future__ import annotations

import copy

from ..record import Recorder, object_ref
from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store, now_rfc3339
from .filters import NodeInfo, fit_error, node_reasons
from .podutil import is_active

PODS = BY_PATH[("", "pods")]
NODES = BY_PATH[("", "nodes")]
PVCS = BY_PATH[("", "persistentvolumeclaims")]
CLASSES = BY_PATH[("storage.k8s.io", "storageclasses")]
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def node_infos(store: Store) -> list[NodeInfo]:
    """The scheduler cache's snapshot: every node with its non-terminal pods."""
    infos = {n["metadata"]["name"]: NodeInfo(n) for n in store.list(NODES)}
    for p in store.list(PODS):
        info = infos.get(p["spec"].get("nodeName") or "")
        if info is not None and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            info.add(p)
    return list(infos.values())


def _waits_for_consumer(store: Store, pvc: Obj) -> bool:
    """A claim of a WaitForFirstConsumer class, not bound yet: the scheduler picks its node."""
    cls = store.find(CLASSES, "", (pvc.get("spec") or {}).get("storageClassName") or "")
    return cls is not None and cls.get("volumeBindingMode") == "WaitForFirstConsumer"


def delayed_claims(store: Store, pod: Obj) -> list[str]:
    """The pod's unbound claims whose class waits for their first consumer."""
    ns, out = pod["metadata"]["namespace"], []
    for v in pod["spec"].get("volumes") or []:
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        pvc = store.find(PVCS, ns, claim) if claim else None
        if pvc is not None and not pvc["spec"].get("volumeName") and _waits_for_consumer(store, pvc):
            out.append(str(claim))
    return out


def volume_prefilter(store: Store, pod: Obj) -> str:
    """volumebinding PreFilter: every PersistentVolumeClaim the pod names exists, is not being
    deleted, and is bound, unless its class waits for the first consumer (then the pod's node is
    written on the claim at binding, volume.kubernetes.io/selected-node, and it is provisioned)."""
    ns = pod["metadata"]["namespace"]
    unbound = False
    for v in pod["spec"].get("volumes") or []:
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim:
            continue
        pvc = store.find(PVCS, ns, claim)
        if pvc is None:
            return f'persistentvolumeclaim "{claim}" not found'
        if pvc["metadata"].get("deletionTimestamp"):
            return f'persistentvolumeclaim "{claim}" is being deleted'
        unbound = unbound or (not pvc["spec"].get("volumeName") and not _waits_for_consumer(store, pvc))
    return "pod has unbound immediate PersistentVolumeClaims" if unbound else ""


def _gated(p: Obj) -> None:
    conds = [c for c in p["status"].get("conditions") or [] if c["type"] != "PodScheduled"]
    conds.append(
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": next(
                (
                    c["lastTransitionTime"]
                    for c in p["status"].get("conditions") or []
                    if c.get("reason") == "SchedulingGated"
                ),
                now_rfc3339(),
            ),
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }
    )
    p["status"]["conditions"] = conds


def schedule(store: Store, ns: str, name: str, *, events: Recorder | None = None) -> bool:
    """Bind a pending pod to the least loaded node whose filters pass, or mark it Unschedulable
    with the FitError text; the scheduler's events as schedule_one.go records them (`Scheduled`:
    "Successfully assigned NS/NAME to NODE"; `FailedScheduling` with the fit error). False when
    the pod stays unschedulable."""
    pod = store.find(PODS, ns, name)
    if pod is None or pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
        return True
    if (pod["spec"].get("schedulerName") or "default-scheduler") != "default-scheduler":
        return True  # another scheduler's pod: left alone, Pending until that scheduler binds it
    if pod["spec"].get("schedulingGates"):
        # the apiserver's pod strategy marks a gated pod; the scheduler does not try it until the
        # gates are removed (an update of the pod queues it again)
        store.mutate(PODS, ns, name, _gated, status=True)
        return True
    infos = node_infos(store)
    prefilter = volume_prefilter(store, pod)
    failures: dict[str, tuple[str, list[str]]] = {}
    nodes = []
    if not prefilter:
        for info in infos:
            code, reasons = node_reasons(pod, info, infos)
            if code:
                failures[info.name] = (code, reasons)
            else:
                nodes.append(info.node)
    if not nodes:
        message = fit_error(len(infos), prefilter=prefilter, failures=failures)

        def unsched(p: Obj) -> None:
            conds = [c for c in p["status"].get("conditions") or [] if c["type"] != "PodScheduled"]
            old = next((c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"), {})
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": old.get("lastTransitionTime")
                    if old.get("status") == "False"
                    else now_rfc3339(),
                    "reason": "Unschedulable",
                    "message": message,
                }
            )
            p["status"]["conditions"] = conds

        store.mutate(PODS, ns, name, unsched, status=True)
        if events is not None:
            events.event(
                object_ref(pod, kind="Pod", api_version="v1"), "Warning", "FailedScheduling", message
            )
        return False
    load = {n["metadata"]["name"]: 0 for n in nodes}
    for info in infos:
        if info.name in load:
            load[info.name] = sum(1 for p in info.pods if is_active(p))
    target = min(load, key=lambda n: (load[n], n))

    def bind(p: Obj) -> None:
        p["spec"]["nodeName"] = target
        p.setdefault("status", {})
        p["status"]["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": now_rfc3339(),
            }
        ]

    # Binding writes spec.nodeName, which only the binding subresource may; do it as the apiserver would.
    cur = copy.deepcopy(pod)
    bind(cur)
    for claim in delayed_claims(store, pod):  # volumebinding PreBind: the claim learns its node

        def select(c: Obj) -> None:
            c["metadata"].setdefault("annotations", {})[SELECTED_NODE] = target

        store.mutate(PVCS, ns, claim, select)
    store.update(PODS, ns, cur, subresource="")
    store.mutate(
        PODS,
        ns,
        name,
        lambda p: p["status"].update(conditions=cur["status"]["conditions"]),
        status=True,
    )
    if events is not None:
        events.event(
            object_ref(pod, kind="Pod", api_version="v1"),
            "Normal",
            "Scheduled",
            f"Successfully assigned {ns}/{name} to {target}",
        )
    return True
