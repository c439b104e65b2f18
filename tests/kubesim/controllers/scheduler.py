"""The scheduler: pending pods bound to the least loaded node that fits them."""

from __future__ import annotations

import copy

from ..record import Recorder, object_ref
from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store, now_rfc3339
from .podutil import is_active
from .scheduling import node_fits

PODS = BY_PATH[("", "pods")]
NODES = BY_PATH[("", "nodes")]


def schedule(store: Store, ns: str, name: str, *, events: Recorder | None = None) -> None:
    """Bind a pending pod to the least loaded node that fits it, or mark it Unschedulable; the
    scheduler's events as schedule_one.go records them (`Scheduled`: "Successfully assigned
    NS/NAME to NODE"; `FailedScheduling` with the fit error)."""
    pod = store.find(PODS, ns, name)
    if pod is None or pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
        return
    # nodeSelector, required node affinity (a DaemonSet pod's matchFields pin), cordons, taints
    nodes = [n for n in store.list(NODES) if node_fits(pod["spec"], n)]
    if not nodes:

        def unsched(p: Obj) -> None:
            conds = [c for c in p["status"].get("conditions") or [] if c["type"] != "PodScheduled"]
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": f"0/{len(store.list(NODES))} nodes are available: no node matches.",
                    "lastTransitionTime": now_rfc3339(),
                }
            )
            p["status"]["conditions"] = conds

        store.mutate(PODS, ns, name, unsched, status=True)
        if events is not None:
            message = f"0/{len(store.list(NODES))} nodes are available: no node matches."
            events.event(object_ref(pod, kind="Pod", api_version="v1"), "Warning", "FailedScheduling", message)
        return
    load = {n["metadata"]["name"]: 0 for n in nodes}
    for p in store.list(PODS):
        node = p["spec"].get("nodeName")
        if node in load and is_active(p):
            load[node] += 1
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
