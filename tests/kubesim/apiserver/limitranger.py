"""The LimitRanger admission plugin for pods (kubernetes/kubernetes plugin/pkg/admission/limitranger/
admission.go): a new pod's containers get the namespace's LimitRange defaults (`default` limits,
`defaultRequest` requests) for what they do not set, noted in the `kubernetes.io/limit-ranger`
annotation, then each Container and Pod item's min, max and maxLimitRequestRatio is enforced:
403 `pods "x" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`. Run on
every pod create (a ReplicaSet's too, which then records FailedCreate)."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ..storage.errors import ApiError
from ..storage.kindindex import index_of
from ..storage.quantity import BadQuantity, parse
from ..storage.resources import BY_PATH, Resource
from ..storage.store import Obj

if TYPE_CHECKING:
    from ..storage.store import Store

LIMIT_RANGES = BY_PATH[("", "limitranges")]
ANNOTATION = "kubernetes.io/limit-ranger"


def _items(store: Store, ns: str, kind: str) -> list[Obj]:
    return [
        item
        for lr in index_of(store).list(LIMIT_RANGES, ns)
        for item in (lr.get("spec") or {}).get("limits") or []
        if isinstance(item, dict) and item.get("type") == kind
    ]


def default(store: Store, res: Resource, ns: str, pod: Obj) -> None:
    """The mutating half: defaults into containers and init containers (mergeContainerResources).
    A request the apiserver's defaulting takes from the container's own limit is not defaulted."""
    if res.kind != "Pod" or not ns:
        return
    items = _items(store, ns, "Container")
    if not items:
        return
    limits_default: dict[str, str] = {}
    requests_default: dict[str, str] = {}
    for item in items:
        for k, v in (item.get("default") or {}).items():
            limits_default.setdefault(k, v)
        for k, v in (item.get("defaultRequest") or {}).items():
            requests_default.setdefault(k, v)
    notes: list[str] = []
    spec = pod.get("spec") or {}
    for group, prefix in (("initContainers", "init container"), ("containers", "container")):
        for c in spec.get(group) or []:
            if not isinstance(c, dict):
                continue
            resources = c.setdefault("resources", {})
            limits = resources.setdefault("limits", {})
            requests = resources.setdefault("requests", {})
            set_limits = sorted(k for k in limits_default if k not in limits)
            set_requests = sorted(k for k in requests_default if k not in requests and k not in limits)
            for k in set_limits:
                limits[k] = limits_default[k]
            for k in set_requests:
                requests[k] = requests_default[k]
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {prefix} {c.get('name', '')}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {prefix} {c.get('name', '')}")
            for part in ("limits", "requests"):
                if not resources[part]:
                    del resources[part]
    if notes:
        annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _q(value: object) -> Fraction | None:
    try:
        return Fraction(parse(value))
    except BadQuantity:
        return None


def _check(kind: str, item: Obj, requests: dict[str, object], limits: dict[str, object]) -> list[str]:
    """minConstraint, maxConstraint and limitRequestRatioConstraint for one container or pod."""
    errs: list[str] = []
    for k, lo in (item.get("min") or {}).items():
        req, lim, floor = _q(requests.get(k)), _q(limits.get(k)), _q(lo)
        if floor is None:
            continue
        if req is None:
            errs.append(f"minimum {k} usage per {kind} is {lo}.  No request is specified")
        elif req < floor:
            errs.append(f"minimum {k} usage per {kind} is {lo}, but request is {requests[k]}")
        if lim is not None and lim < floor:
            errs.append(f"minimum {k} usage per {kind} is {lo}, but limit is {limits[k]}")
    for k, hi in (item.get("max") or {}).items():
        lim, ceiling = _q(limits.get(k)), _q(hi)
        if ceiling is None:
            continue
        if lim is None:
            errs.append(f"maximum {k} usage per {kind} is {hi}.  No limit is specified")
        elif lim > ceiling:
            errs.append(f"maximum {k} usage per {kind} is {hi}, but limit is {limits[k]}")
    for k, ratio in (item.get("maxLimitRequestRatio") or {}).items():
        req, lim, most = _q(requests.get(k)), _q(limits.get(k)), _q(ratio)
        if most is None:
            continue
        if req is None or lim is None or req == 0:
            errs.append(
                f"{k} max limit to request ratio per {kind} is {ratio}, but no request is specified or request is 0"
            )
        elif lim / req > most:
            shown = f"{float(lim / req):.6f}".rstrip("0").rstrip(".")
            errs.append(
                f"{k} max limit to request ratio per {kind} is {ratio}, but provided ratio is {shown}"
            )
    return errs


def validate(store: Store, res: Resource, pod: Obj, old: Obj | None) -> None:
    """The validating half, for a new pod (the Store's admission list: after defaulting)."""
    if res.kind != "Pod" or old is not None:
        return
    meta = pod.get("metadata") or {}
    ns = meta.get("namespace") or ""
    if not ns:
        return
    spec = pod.get("spec") or {}
    containers = [
        c for c in (spec.get("containers") or []) + (spec.get("initContainers") or []) if isinstance(c, dict)
    ]
    errs: list[str] = []
    for item in _items(store, ns, "Container"):
        for c in containers:
            resources = c.get("resources") or {}
            errs += _check("Container", item, resources.get("requests") or {}, resources.get("limits") or {})
    for item in _items(store, ns, "Pod"):
        totals: list[dict[str, object]] = [{}, {}]
        for c in spec.get("containers") or []:
            resources = (c or {}).get("resources") or {}
            for i, part in enumerate(("requests", "limits")):
                for k, v in (resources.get(part) or {}).items():
                    value = _q(v) or Fraction(0)
                    prior = totals[i].get(k)
                    totals[i][k] = value + (prior if isinstance(prior, Fraction) else Fraction(0))
        shown = [{k: _text(v) for k, v in t.items()} for t in totals]
        errs += _check("Pod", item, shown[0], shown[1])
    if errs:
        name = meta.get("name") or meta.get("generateName") or "Unknown"
        text = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        raise ApiError(
            403, "Forbidden", f'pods "{name}" is forbidden: {text}', {"name": name, "kind": "pods"}
        )


def _text(value: object) -> str:
    from ..storage.quantity import canonical

    return canonical(value) if isinstance(value, Fraction) else str(value)
