"""Server-side printing (`meta.k8s.io/v1` Table) so `kubectl get` shows the real columns."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..storage.crds import CustomResource
from ..storage.resources import Resource
from .customresources import columns
from .tables_cells import containers as _containers
from .tables_cells import human_age, human_duration
from .tables_cells import label_selector as _label_selector
from .tables_cells import sorted_labels as _sorted_labels
from .tables_kinds import KIND_COLUMNS
from .tables_storage import STORAGE_COLUMNS

Obj = dict[str, Any]


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def _col(name: str, typ: str = "string", priority: int = 0, fmt: str = "") -> Obj:
    return {"name": name, "type": typ, "format": fmt, "description": name, "priority": priority}


def _init_reason(o: Obj, ics: list[Obj]) -> tuple[str, int]:
    """printPod's walk over initContainerStatuses: the first init container not done gives the
    STATUS (`Init:Error`, `Init:CrashLoopBackOff`, `Init:ExitCode:N`, `Init:1/2`; '' when all
    are done); started sidecars (restartPolicy Always) count as ready containers."""
    inits = o["spec"].get("initContainers") or []
    sidecars = {c["name"] for c in inits if c.get("restartPolicy") == "Always"}
    ready = 0
    for i, c in enumerate(ics):
        state = c.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode") == 0:
            continue
        if c.get("name") in sidecars and c.get("started"):
            ready += bool(c.get("ready"))
            continue
        if term is not None:
            if term.get("reason"):
                return "Init:" + term["reason"], ready
            if term.get("signal"):
                return f"Init:Signal:{term['signal']}", ready
            return f"Init:ExitCode:{term.get('exitCode')}", ready
        if wait is not None and wait.get("reason") and wait["reason"] != "PodInitializing":
            return "Init:" + wait["reason"], ready
        return f"Init:{i}/{len(inits)}", ready
    return "", ready


def _pod_row(o: Obj) -> list[Any]:
    """printPod (pkg/printers/internalversion/printers.go)."""
    st = o.get("status") or {}
    cs = st.get("containerStatuses") or []
    ics = st.get("initContainerStatuses") or []
    sidecars = [c for c in o["spec"].get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    total = len(o["spec"].get("containers") or []) + len(sidecars)
    init_reason, ready = _init_reason(o, ics)
    initialized = any(
        c.get("type") == "Initialized" and c.get("status") == "True" for c in st.get("conditions") or []
    )
    restarts = sum(int(c.get("restartCount", 0)) for c in ics)
    if init_reason and not initialized:
        counted = ics
    else:
        ready += sum(1 for c in cs if c.get("ready"))
        restarts = sum(int(c.get("restartCount", 0)) for c in cs) + (restarts if sidecars else 0)
        counted = cs + (ics if sidecars else [])
    # printPod: the latest restart's age next to the count, `3 (12s ago)`
    last = max(
        (((c.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or "" for c in counted),
        default="",
    )
    shown = f"{restarts} ({human_age(last)} ago)" if restarts and last else str(restarts)
    reason = st.get("reason") or st.get("phase") or "Pending"
    if init_reason and not initialized:
        reason = init_reason
    if any(c.get("reason") == "SchedulingGated" for c in st.get("conditions") or []):
        reason = "SchedulingGated"
    for c in cs if not (init_reason and not initialized) else []:
        state = c.get("state") or {}
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state and state["terminated"].get("reason"):
            reason = state["terminated"]["reason"]
    if o["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return [
        o["metadata"]["name"],
        f"{ready}/{total}",
        reason,
        shown,
        human_age(o["metadata"].get("creationTimestamp")),
        st.get("podIP") or "<none>",
        o["spec"].get("nodeName") or "<none>",
        "<none>",
        _readiness_gates(o),
    ]


def _readiness_gates(o: Obj) -> str:
    """printPod's READINESS GATES: `true/all` of the pod's readinessGates conditions."""
    gates = [g.get("conditionType") for g in o["spec"].get("readinessGates") or []]
    if not gates:
        return "<none>"
    true = {
        c.get("type") for c in (o.get("status") or {}).get("conditions") or [] if c.get("status") == "True"
    }
    return f"{sum(1 for g in gates if g in true)}/{len(gates)}"


def _event_row(o: Obj) -> list[Any]:
    """printEvent (pkg/printers/internalversion/printers.go)."""
    ref, src = o.get("involvedObject") or {}, o.get("source") or {}
    first = human_age(o.get("firstTimestamp") or o.get("eventTime") or o["metadata"].get("creationTimestamp"))
    last = human_age(o["lastTimestamp"]) if o.get("lastTimestamp") else first
    kind = str(ref.get("kind", "")).lower()
    source = src.get("component") or o.get("reportingController") or ""
    host = src.get("host") or o.get("reportingInstance") or ""
    return [
        last,
        o.get("type", ""),
        o.get("reason", ""),
        f"{kind}/{ref['name']}" if ref.get("name") else kind,
        ref.get("fieldPath", ""),
        f"{source}, {host}" if host else source,
        str(o.get("message", "")).strip(),
        first,
        int(o.get("count") or 1),
        o["metadata"]["name"],
    ]


def _selector(spec: Obj) -> str:
    ml = (spec.get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in ml.items())


def _deploy_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers(spec.get("template") or {})
    return [
        o["metadata"]["name"],
        f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        st.get("updatedReplicas", 0),
        st.get("availableReplicas", 0),
        human_age(o["metadata"].get("creationTimestamp")),
        names,
        images,
        _selector(spec),
    ]


def _rs_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers(spec.get("template") or {})
    return [
        o["metadata"]["name"],
        spec.get("replicas", 0),
        st.get("replicas", 0),
        st.get("readyReplicas", 0),
        human_age(o["metadata"].get("creationTimestamp")),
        names,
        images,
        _selector(spec),
    ]


def _job_row(o: Obj) -> list[Any]:
    """printers.go printJob (kubernetes/kubernetes pkg/printers/internalversion)."""
    spec, st = o.get("spec") or {}, o.get("status") or {}
    done = st.get("succeeded", 0)
    if spec.get("completions") is not None:
        completions = f"{done}/{spec['completions']}"
    elif int(spec.get("parallelism") or 0) > 1:
        completions = f"{done}/1 of {spec['parallelism']}"
    else:
        completions = f"{done}/1"
    duration = ""
    if st.get("startTime"):
        start = dt.datetime.strptime(st["startTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
        end = (
            dt.datetime.strptime(st["completionTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
            if st.get("completionTime")
            else dt.datetime.now(dt.UTC)
        )
        duration = human_duration(int((end - start).total_seconds()))
    true = {c.get("type") for c in st.get("conditions") or [] if c.get("status") == "True"}
    if "Complete" in true:
        status = "Complete"
    elif "Failed" in true:
        status = "Failed"
    elif o["metadata"].get("deletionTimestamp"):
        status = "Terminating"
    elif "Suspended" in true:
        status = "Suspended"
    elif "FailureTarget" in true:
        status = "FailureTarget"
    else:
        status = "Running"
    names, images = _containers(spec.get("template") or {})
    return [
        o["metadata"]["name"],
        status,
        completions,
        duration,
        human_age(o["metadata"].get("creationTimestamp")),
        names,
        images,
        _label_selector(spec),
    ]


def _sts_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers(spec.get("template") or {})
    return [
        o["metadata"]["name"],
        f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        human_age(o["metadata"].get("creationTimestamp")),
        names,
        images,
    ]


def _ds_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    tpl = spec.get("template") or {}
    names, images = _containers(tpl)
    return [
        o["metadata"]["name"],
        st.get("desiredNumberScheduled", 0),
        st.get("currentNumberScheduled", 0),
        st.get("numberReady", 0),
        st.get("updatedNumberScheduled", 0),
        st.get("numberAvailable", 0),
        _sorted_labels((tpl.get("spec") or {}).get("nodeSelector")),
        human_age(o["metadata"].get("creationTimestamp")),
        names,
        images,
        _label_selector(spec),
    ]


def _revision_row(o: Obj) -> list[Any]:
    ref = next((r for r in o["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
    owner = "<none>"
    if ref is not None:
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        kind = str(ref.get("kind", "")).lower()
        owner = f"{kind}.{group}/{ref.get('name', '')}" if group else f"{kind}/{ref.get('name', '')}"
    return [
        o["metadata"]["name"],
        owner,
        o.get("revision", 0),
        human_age(o["metadata"].get("creationTimestamp")),
    ]


def _node_row(o: Obj) -> list[Any]:
    conds = {c["type"]: c["status"] for c in (o.get("status") or {}).get("conditions") or []}
    status = "Ready" if conds.get("Ready") == "True" else "NotReady"
    if (o.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    info = (o.get("status") or {}).get("nodeInfo") or {}
    addresses = {a.get("type"): a.get("address") for a in (o.get("status") or {}).get("addresses") or []}
    # findNodeRoles: `node-role.kubernetes.io/ROLE` labels and a `kubernetes.io/role` value
    labels = o["metadata"].get("labels") or {}
    roles = {k.removeprefix("node-role.kubernetes.io/") for k in labels if k.startswith("node-role.kubernetes.io/")}
    roles |= {v for k, v in labels.items() if k == "kubernetes.io/role" and v}
    return [
        o["metadata"]["name"],
        status,
        ",".join(sorted(r for r in roles if r)) or "<none>",
        human_age(o["metadata"].get("creationTimestamp")),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _service_row(o: Obj) -> list[Any]:
    """`printService`: ports as `80/TCP` or `80:30080/TCP`, selector as `k=v,...`."""
    spec = o.get("spec") or {}
    typ = spec.get("type", "ClusterIP")
    ingress = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    external = [i.get("ip") or i.get("hostname", "") for i in ingress] + list(spec.get("externalIPs") or [])
    if typ == "ExternalName":
        ext = spec.get("externalName", "")
    elif external:
        ext = ",".join(external)
    else:
        ext = "<pending>" if typ == "LoadBalancer" else "<none>"
    ports = ",".join(
        f"{p['port']}:{p['nodePort']}/{p.get('protocol', 'TCP')}"
        if p.get("nodePort")
        else f"{p['port']}/{p.get('protocol', 'TCP')}"
        for p in spec.get("ports") or []
    )
    sel = spec.get("selector") or {}
    return [
        o["metadata"]["name"],
        typ,
        spec.get("clusterIP") or "<none>",
        ext,
        ports or "<none>",
        human_age(o["metadata"].get("creationTimestamp")),
        ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>",
    ]


def _endpoints_row(o: Obj) -> list[Any]:
    """`formatEndpoints`: at most three `ip:port`, then ` + N more...`."""
    items: list[str] = []
    for ss in o.get("subsets") or []:
        addrs = [a["ip"] for a in ss.get("addresses") or []]
        ports = ss.get("ports") or []
        items += [f"{a}:{p['port']}" for p in ports for a in addrs] if ports else addrs
    shown = items[:3]
    text = ",".join(shown) or "<none>"
    if len(items) > len(shown):
        text += f" + {len(items) - len(shown)} more..."
    return [o["metadata"]["name"], text, human_age(o["metadata"].get("creationTimestamp"))]


def _more(items: list[str]) -> str:
    """`listWithMoreString` (max 3) of the discovery printers; `<unset>` when empty."""
    text = ",".join(items[:3]) or "<unset>"
    return text + (f" + {len(items) - 3} more..." if len(items) > 3 else "")


def _slice_row(o: Obj) -> list[Any]:
    ports = [str(p.get("port", p.get("name", "*"))) for p in o.get("ports") or []]
    addrs = [a for e in o.get("endpoints") or [] for a in e.get("addresses") or []]
    return [
        o["metadata"]["name"],
        o.get("addressType", "IPv4"),
        _more(ports),
        _more(addrs),
        human_age(o["metadata"].get("creationTimestamp")),
    ]


COLUMNS: dict[str, tuple[list[Obj], Any]] = {
    "endpointslices": (
        [_col("Name", fmt="name"), _col("AddressType"), _col("Ports"), _col("Endpoints"), _col("Age")],
        _slice_row,
    ),
    "services": (
        [
            _col("Name", fmt="name"),
            _col("Type"),
            _col("Cluster-IP"),
            _col("External-IP"),
            _col("Port(s)"),
            _col("Age"),
            _col("Selector", priority=1),
        ],
        _service_row,
    ),
    "endpoints": ([_col("Name", fmt="name"), _col("Endpoints"), _col("Age")], _endpoints_row),
    "pods": (
        [
            _col("Name", fmt="name"),
            _col("Ready"),
            _col("Status"),
            _col("Restarts", "string"),
            _col("Age"),
            _col("IP", priority=1),
            _col("Node", priority=1),
            _col("Nominated Node", priority=1),
            _col("Readiness Gates", priority=1),
        ],
        _pod_row,
    ),
    "deployments": (
        [
            _col("Name", fmt="name"),
            _col("Ready"),
            _col("Up-to-date", "integer"),
            _col("Available", "integer"),
            _col("Age"),
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _deploy_row,
    ),
    "replicasets": (
        [
            _col("Name", fmt="name"),
            _col("Desired", "integer"),
            _col("Current", "integer"),
            _col("Ready", "integer"),
            _col("Age"),
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _rs_row,
    ),
    "statefulsets": (
        [
            _col("Name", fmt="name"),
            _col("Ready"),
            _col("Age"),
            _col("Containers", priority=1),
            _col("Images", priority=1),
        ],
        _sts_row,
    ),
    "daemonsets": (
        [
            _col("Name", fmt="name"),
            _col("Desired", "integer"),
            _col("Current", "integer"),
            _col("Ready", "integer"),
            _col("Up-to-date", "integer"),
            _col("Available", "integer"),
            _col("Node Selector"),
            _col("Age"),
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _ds_row,
    ),
    "jobs": (
        [
            _col("Name", fmt="name"),
            _col("Status"),
            _col("Completions"),
            _col("Duration"),
            _col("Age"),
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _job_row,
    ),
    "controllerrevisions": (
        [_col("Name", fmt="name"), _col("Controller"), _col("Revision"), _col("Age")],
        _revision_row,
    ),
    "configmaps": (
        [_col("Name", fmt="name"), _col("Data", "integer"), _col("Age")],
        lambda o: [
            o["metadata"]["name"],
            len(o.get("data") or {}) + len(o.get("binaryData") or {}),
            human_age(o["metadata"].get("creationTimestamp")),
        ],
    ),
    "secrets": (
        [_col("Name", fmt="name"), _col("Type"), _col("Data", "integer"), _col("Age")],
        lambda o: [
            o["metadata"]["name"],
            o.get("type", "Opaque"),
            len(o.get("data") or {}),
            human_age(o["metadata"].get("creationTimestamp")),
        ],
    ),
    "nodes": (
        # printers.go nodeColumnDefinitions: the wide columns have priority 1
        [
            _col("Name", fmt="name"),
            _col("Status"),
            _col("Roles"),
            _col("Age"),
            _col("Version"),
            _col("Internal-IP", priority=1),
            _col("External-IP", priority=1),
            _col("OS-Image", priority=1),
            _col("Kernel-Version", priority=1),
            _col("Container-Runtime", priority=1),
        ],
        _node_row,
    ),
    "namespaces": (
        [_col("Name", fmt="name"), _col("Status"), _col("Age")],
        lambda o: [
            o["metadata"]["name"],
            (o.get("status") or {}).get("phase", "Active"),
            human_age(o["metadata"].get("creationTimestamp")),
        ],
    ),
    "events": (
        [
            _col("Last Seen"),
            _col("Type"),
            _col("Reason"),
            _col("Object"),
            _col("Subobject", priority=1),
            _col("Source", priority=1),
            _col("Message"),
            _col("First Seen", priority=1),
            _col("Count", "integer", priority=1),
            _col("Name", priority=1),
        ],
        _event_row,
    ),
}


_DEFAULT_COLS = [_col("Name", fmt="name"), _col("Age")]


def _default_row(o: Obj) -> list[Any]:
    return [o["metadata"]["name"], human_age(o["metadata"].get("creationTimestamp"))]


def table(res: Resource, items: list[Obj], rv: str, include: str = "Metadata") -> Obj:
    if isinstance(res, CustomResource):
        cols, row = columns(res, human_age)
    elif res.plural in STORAGE_COLUMNS or res.plural in KIND_COLUMNS:  # rows take the age too
        cols, storage_row = STORAGE_COLUMNS.get(res.plural) or KIND_COLUMNS[res.plural]
        row = lambda o: storage_row(o, human_age(o["metadata"].get("creationTimestamp")))  # noqa: E731
    else:
        cols, row = COLUMNS.get(res.plural, (_DEFAULT_COLS, _default_row))
    rows = []
    for o in items:
        if include == "Object":
            embedded: Obj = o
        elif include == "None":
            embedded = {}
        else:
            embedded = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": o["metadata"],
            }
        rows.append({"cells": row(o), "object": embedded})
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv},
        "columnDefinitions": cols,
        "rows": rows,
    }
