"""Server-side printing of the kinds every cluster serves beside the workloads, as kubernetes/
kubernetes pkg/printers/internalversion/printers.go prints them (printCronJob,
printHorizontalPodAutoscaler with formatHPAMetrics, printPodDisruptionBudget,
printReplicationController, printResourceQuota, printIngress, printIngressClass,
printNetworkPolicy, printLease, printPriorityClass, the RBAC kinds' printRole/printRoleBinding
with rbac.SubjectsStrings), LimitRange with the apiserver's default table (rest/table.go: NAME,
CREATED AT), and APIService as the aggregator prints it
(kube-aggregator pkg/registry/apiservice/etcd: NAME, SERVICE, AVAILABLE, AGE). Each row takes
the object and its age; the wide columns reuse tables.py's container and selector cells."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..storage.quantity import BadQuantity, binary, canonical, parse
from .tables_cells import containers, human_age, label_selector, sorted_labels

Obj = dict[str, Any]


def _col(name: str, typ: str = "string", priority: int = 0, fmt: str = "") -> Obj:
    return {"name": name, "type": typ, "format": fmt, "description": name, "priority": priority}


def _template_cells(template: Obj | None, spec: Obj, *, plain_selector: bool = False) -> list[str]:
    names, images = containers(template or {})
    selector = sorted_labels(spec.get("selector")) if plain_selector else label_selector(spec)
    return [names, images, selector]


def _cronjob_row(o: Obj, age: str) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    suspend = spec.get("suspend")
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return [
        o["metadata"]["name"],
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(st.get("active") or []),
        human_age(st["lastScheduleTime"]) if st.get("lastScheduleTime") else "<none>",
        age,
        *_template_cells(job_spec.get("template"), job_spec),
    ]


def _hpa_metrics(specs: list[Obj], statuses: list[Obj]) -> str:
    """formatHPAMetrics: at most two, then `+ N more...`."""
    if not specs:
        return "<none>"
    shown: list[str] = []
    for i, spec in enumerate(specs):
        status = statuses[i] if i < len(statuses) else {}
        kind = spec.get("type")
        if kind in ("Resource", "ContainerResource"):
            key = "resource" if kind == "Resource" else "containerResource"
            src, cur = spec.get(key) or {}, (status.get(key) or {}).get("current") or {}
            target = src.get("target") or {}
            if target.get("averageValue") is not None:
                current = str(cur.get("averageValue", "<unknown>"))
                shown.append(f"{src.get('name')}: {current}/{target['averageValue']}")
            else:
                current = (
                    f"{cur['averageUtilization']}%"
                    if cur.get("averageUtilization") is not None
                    else "<unknown>"
                )
                goal = (
                    f"{target['averageUtilization']}%"
                    if target.get("averageUtilization") is not None
                    else "<auto>"
                )
                shown.append(f"{src.get('name')}: {current}/{goal}")
        elif kind in ("Pods", "Object", "External"):
            key = kind.lower()
            target = (spec.get(key) or {}).get("target") or {}
            cur = (status.get(key) or {}).get("current") or {}
            if kind != "Pods" and target.get("averageValue") is None:
                shown.append(f"{cur.get('value', '<unknown>')}/{target.get('value')}")
            else:
                avg = " (avg)" if kind != "Pods" else ""
                shown.append(f"{cur.get('averageValue', '<unknown>')}/{target.get('averageValue')}{avg}")
        else:
            shown.append("<unknown type>")
    if len(shown) > 2:
        return ", ".join(shown[:2]) + f" + {len(shown) - 2} more..."
    return ", ".join(shown)


def _hpa_row(o: Obj, age: str) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    low = spec.get("minReplicas")
    return [
        o["metadata"]["name"],
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _hpa_metrics(spec.get("metrics") or [], st.get("currentMetrics") or []),
        "<unset>" if low is None else str(low),
        int(spec.get("maxReplicas") or 0),
        int(st.get("currentReplicas") or 0),
        age,
    ]


def _pdb_row(o: Obj, age: str) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        o["metadata"]["name"],
        "N/A" if low is None else str(low),
        "N/A" if high is None else str(high),
        int(st.get("disruptionsAllowed") or 0),
        age,
    ]


def _rc_row(o: Obj, age: str) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    return [
        o["metadata"]["name"],
        int(spec.get("replicas") or 0),
        int(st.get("replicas") or 0),
        int(st.get("readyReplicas") or 0),
        age,
        *_template_cells(spec.get("template"), spec, plain_selector=True),
    ]


def _quota_row(o: Obj, age: str) -> list[Any]:
    """printResourceQuota: `name: used/hard` for every hard resource, sorted; `limits.*` in LIMIT."""
    st = o.get("status") or {}
    hard, used = st.get("hard") or {}, st.get("used") or {}
    request, limit = [], []
    for name in sorted(hard):
        cell = f"{name}: {_quantity(used.get(name, '0'))}/{_quantity(hard[name])}"
        (limit if name.split(".")[0] == "limits" and "." in name else request).append(cell)
    return [o["metadata"]["name"], ", ".join(request), ", ".join(limit), age]


def _quantity(text: object) -> str:
    """A quantity as Quantity.String() prints it (`1000m` is `1`)."""
    try:
        return canonical(Fraction(parse(text)), binary_si=binary(text))
    except BadQuantity:
        return str(text)


def _ingress_row(o: Obj, age: str) -> list[Any]:
    spec = o.get("spec") or {}
    rules = spec.get("rules") or []
    hosts = [r["host"] for r in rules[:3] if r.get("host")]
    shown = ",".join(hosts) if hosts else "*"
    if len(rules) > 3 and hosts:
        shown += f" + {len(rules) - 3} more..."
    addresses = sorted(
        {
            a.get("ip") or a.get("hostname")
            for a in ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        }
        - {None, ""}
    )
    address = ",".join(str(a) for a in addresses)
    if len(address) > 16:
        address = address[:13] + "..."
    return [
        o["metadata"]["name"],
        spec.get("ingressClassName") or "<none>",
        shown,
        address,
        "80, 443" if spec.get("tls") else "80",
        age,
    ]


def _ingress_class_row(o: Obj, age: str) -> list[Any]:
    spec = o.get("spec") or {}
    params = spec.get("parameters")
    shown = "<none>"
    if isinstance(params, dict):
        shown = params.get("kind", "") + (f".{params['apiGroup']}" if params.get("apiGroup") else "")
        shown += "/" + params.get("name", "")
    return [o["metadata"]["name"], spec.get("controller", ""), shown, age]


def _netpol_row(o: Obj, age: str) -> list[Any]:
    selector = label_selector({"selector": (o.get("spec") or {}).get("podSelector") or {}})
    return [o["metadata"]["name"], selector, age]


def _lease_row(o: Obj, age: str) -> list[Any]:
    return [o["metadata"]["name"], (o.get("spec") or {}).get("holderIdentity") or "", age]


def _priority_class_row(o: Obj, age: str) -> list[Any]:
    return [
        o["metadata"]["name"],
        int(o.get("value") or 0),
        bool(o.get("globalDefault")),
        age,
        o.get("preemptionPolicy") or "",
    ]


def _created_at_row(o: Obj, age: str) -> list[Any]:
    return [o["metadata"]["name"], o["metadata"].get("creationTimestamp", "")]


def _binding_row(o: Obj, age: str) -> list[Any]:
    """printRoleBinding / printClusterRoleBinding, with the subjects (SubjectsStrings) when wide."""
    ref = o.get("roleRef") or {}
    users, groups, sas = [], [], []
    for subject in o.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            sas.append(f"{subject.get('namespace', '')}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return [
        o["metadata"]["name"],
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        age,
        ", ".join(users),
        ", ".join(groups),
        ", ".join(sas),
    ]


def _apiservice_row(o: Obj, age: str) -> list[Any]:
    svc = (o.get("spec") or {}).get("service")
    service = f"{svc.get('namespace')}/{svc.get('name')}" if isinstance(svc, dict) else "Local"
    available = "Unknown"
    for c in (o.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Available":
            available = "True" if c.get("status") == "True" else f"{c.get('status')} ({c.get('reason')})"
    return [o["metadata"]["name"], service, available, age]


_WIDE = [_col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)]
KIND_COLUMNS: dict[str, tuple[list[Obj], Any]] = {
    "cronjobs": (
        [
            _col("Name", fmt="name"),
            _col("Schedule"),
            _col("Timezone"),
            _col("Suspend", "boolean"),
            _col("Active", "integer"),
            _col("Last Schedule"),
            _col("Age"),
            *_WIDE,
        ],
        _cronjob_row,
    ),
    "horizontalpodautoscalers": (
        [
            _col("Name", fmt="name"),
            _col("Reference"),
            _col("Targets"),
            _col("MinPods"),
            _col("MaxPods"),
            _col("Replicas"),
            _col("Age"),
        ],
        _hpa_row,
    ),
    "poddisruptionbudgets": (
        [
            _col("Name", fmt="name"),
            _col("Min Available"),
            _col("Max Unavailable"),
            _col("Allowed Disruptions", "integer"),
            _col("Age"),
        ],
        _pdb_row,
    ),
    "replicationcontrollers": (
        [
            _col("Name", fmt="name"),
            _col("Desired", "integer"),
            _col("Current", "integer"),
            _col("Ready", "integer"),
            _col("Age"),
            *_WIDE,
        ],
        _rc_row,
    ),
    "resourcequotas": (
        [_col("Name", fmt="name"), _col("Request"), _col("Limit"), _col("Age")],
        _quota_row,
    ),
    "ingresses": (
        [_col("Name", fmt="name"), _col("Class"), _col("Hosts"), _col("Address"), _col("Ports"), _col("Age")],
        _ingress_row,
    ),
    "ingressclasses": (
        [_col("Name", fmt="name"), _col("Controller"), _col("Parameters"), _col("Age")],
        _ingress_class_row,
    ),
    "networkpolicies": ([_col("Name", fmt="name"), _col("Pod-Selector"), _col("Age")], _netpol_row),
    "leases": ([_col("Name", fmt="name"), _col("Holder"), _col("Age")], _lease_row),
    "priorityclasses": (
        [
            _col("Name", fmt="name"),
            _col("Value", "integer"),
            _col("Global-Default", "boolean"),
            _col("Age"),
            _col("PreemptionPolicy", priority=1),
        ],
        _priority_class_row,
    ),
    "limitranges": ([_col("Name", fmt="name"), _col("Created At", "date")], _created_at_row),
    "roles": ([_col("Name", fmt="name"), _col("Created At", "date")], _created_at_row),
    "clusterroles": ([_col("Name", fmt="name"), _col("Created At", "date")], _created_at_row),
    **{
        plural: (
            [
                _col("Name", fmt="name"),
                _col("Role"),
                _col("Age"),
                _col("Users", priority=1),
                _col("Groups", priority=1),
                _col("ServiceAccounts", priority=1),
            ],
            _binding_row,
        )
        for plural in ("rolebindings", "clusterrolebindings")
    },
    "apiservices": (
        [_col("Name", fmt="name"), _col("Service"), _col("Available"), _col("Age")],
        _apiservice_row,
    ),
}
