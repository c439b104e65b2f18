"""ResourceQuota: what each object uses (kubernetes/kubernetes pkg/quota/v1/evaluator/core: pods.go
PodUsageFunc and QuotaV1Pod, services.go, persistent_volume_claims.go, and the generic object
count evaluator for `count/<resource>.<group>`), which quotas an object falls under (the
Terminating, NotTerminating, BestEffort, NotBestEffort and PriorityClass scopes), and the
admission plugin that refuses a create going over a quota
(staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go checkRequest):
403 `pods "web-7c9d8-x2x4k" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2,
limited: pods=2`, or `failed quota: q: must specify limits.cpu for: app` when a container lacks
a resource the quota limits. Used is counted from the store at admission, which is what the
quota controller (controllers/resourcequota.py) writes into status.used."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction
from typing import TYPE_CHECKING

from ..storage.errors import ApiError
from ..storage.kindindex import index_of
from ..storage.quantity import BadQuantity, binary, canonical, parse
from ..storage.resources import BY_PATH, RESOURCES, Resource
from ..storage.store import Obj

if TYPE_CHECKING:
    from ..storage.store import Store

QUOTAS = BY_PATH[("", "resourcequotas")]
# the core resources quota names without `count/`, each an object count
_PLAIN_COUNTS = {
    "pods": "pods",
    "services": "services",
    "configmaps": "configmaps",
    "secrets": "secrets",
    "persistentvolumeclaims": "persistentvolumeclaims",
    "replicationcontrollers": "replicationcontrollers",
    "resourcequotas": "resourcequotas",
}
# requests/limits a container must name when a quota limits them (pods.go validationSet)
_COMPUTE = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
Usage = dict[str, Fraction]


def _count_name(res: Resource) -> str:
    return f"count/{res.plural}" + (f".{res.group}" if res.group else "")


def pod_counts(pod: Obj, now: dt.datetime | None = None) -> bool:
    """QuotaV1Pod: a pod that has not finished (nor outlived its deletion's grace period)."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp") and meta.get("deletionGracePeriodSeconds") is not None:
        when = dt.datetime.strptime(meta["deletionTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
        grace = dt.timedelta(seconds=int(meta["deletionGracePeriodSeconds"]))
        if (now or dt.datetime.now(dt.UTC)) > when + grace:
            return False
    return True


def _quantity(value: object) -> Fraction:
    try:
        return Fraction(parse(value))
    except BadQuantity:
        return Fraction(0)


def _compute(pod: Obj) -> tuple[Usage, Usage]:
    """The pod's requests and limits: its containers' sums, each init container's as a floor."""
    spec = pod.get("spec") or {}
    totals: list[Usage] = [{}, {}]
    for c in spec.get("containers") or []:
        res = (c or {}).get("resources") or {}
        for i, part in enumerate(("requests", "limits")):
            for k, v in (res.get(part) or {}).items():
                totals[i][k] = totals[i].get(k, Fraction(0)) + _quantity(v)
    for c in spec.get("initContainers") or []:
        res = (c or {}).get("resources") or {}
        for i, part in enumerate(("requests", "limits")):
            for k, v in (res.get(part) or {}).items():
                totals[i][k] = max(totals[i].get(k, Fraction(0)), _quantity(v))
    return totals[0], totals[1]


def usage(res: Resource, obj: Obj) -> Usage:
    """What one object uses, by quota resource name."""
    out: Usage = {_count_name(res): Fraction(1)}
    if res.plural in _PLAIN_COUNTS and res.group == "":
        out[_PLAIN_COUNTS[res.plural]] = Fraction(1)
    if res.kind == "Pod":
        if not pod_counts(obj):
            out.pop("pods", None)
            return out
        requests, limits = _compute(obj)
        for name in ("cpu", "memory", "ephemeral-storage"):
            if name in requests:
                out[f"requests.{name}"] = requests[name]
                if name != "ephemeral-storage":
                    out[name] = requests[name]
            if name in limits:
                out[f"limits.{name}"] = limits[name]
    elif res.kind == "Service":
        kind = (obj.get("spec") or {}).get("type", "ClusterIP")
        ports = len((obj.get("spec") or {}).get("ports") or [])
        if kind == "LoadBalancer":
            out["services.loadbalancers"] = Fraction(1)
        if kind in ("NodePort", "LoadBalancer"):
            out["services.nodeports"] = Fraction(ports)
    elif res.kind == "PersistentVolumeClaim":
        spec = obj.get("spec") or {}
        storage = _quantity(((spec.get("resources") or {}).get("requests") or {}).get("storage", 0))
        out["requests.storage"] = storage
        cls = spec.get("storageClassName")
        if cls:
            out[f"{cls}.storageclass.storage.k8s.io/requests.storage"] = storage
            out[f"{cls}.storageclass.storage.k8s.io/persistentvolumeclaims"] = Fraction(1)
    return out


def _scope_matches(scope: str, op: str, values: list[str], res: Resource, obj: Obj) -> bool:
    if res.kind != "Pod":
        return False  # the scopes select pods only
    spec = obj.get("spec") or {}
    if scope in ("Terminating", "NotTerminating"):
        terminating = spec.get("activeDeadlineSeconds") is not None
        return terminating if scope == "Terminating" else not terminating
    if scope in ("BestEffort", "NotBestEffort"):
        requests, limits = _compute(obj)
        best = not any(k in ("cpu", "memory") for k in (*requests, *limits))
        return best if scope == "BestEffort" else not best
    if scope == "PriorityClass":
        cls = spec.get("priorityClassName", "")
        if op == "Exists":
            return bool(cls)
        if op == "DoesNotExist":
            return not cls
        return (cls in values) == (op == "In")
    return False


def covers(quota: Obj, res: Resource, obj: Obj) -> bool:
    """Whether `obj` falls under the quota's scopes (all of them must match)."""
    spec = quota.get("spec") or {}
    selectors = [(s, "Exists", []) for s in spec.get("scopes") or []]
    for e in (spec.get("scopeSelector") or {}).get("matchExpressions") or []:
        selectors.append((e.get("scopeName", ""), e.get("operator", "Exists"), list(e.get("values") or [])))
    return all(_scope_matches(s, op, vals, res, obj) for s, op, vals in selectors)


def _hard(quota: Obj) -> dict[str, str]:
    status = quota.get("status") or {}
    return dict(status.get("hard") or (quota.get("spec") or {}).get("hard") or {})


def used(store: Store, quota: Obj) -> Usage:
    """The quota's used amounts, counted from every object of its namespace it covers."""
    ns = quota["metadata"]["namespace"]
    hard = _hard(quota)
    total: Usage = dict.fromkeys(hard, Fraction(0))
    for res in RESOURCES:
        if not res.namespaced or not _touches(res, hard):
            continue
        for obj in store.list(res, ns):
            if covers(quota, res, obj):
                for k, v in usage(res, obj).items():
                    if k in total:
                        total[k] += v
    return total


def _touches(res: Resource, hard: dict[str, str]) -> bool:
    if _count_name(res) in hard:
        return True
    if res.group == "" and _PLAIN_COUNTS.get(res.plural) in hard:
        return True
    related = {
        "Pod": ("cpu", "memory", "requests.", "limits."),
        "Service": ("services.",),
        "PersistentVolumeClaim": ("requests.storage", ".storageclass.storage.k8s.io/"),
    }.get(res.kind, ())
    return any(k.startswith(r) or r in k for k in hard for r in related)


def shown(name: str, value: Fraction, hard: dict[str, str]) -> str:
    """An amount as Quantity.String() prints it: bytes in the binary format their sums keep
    (`128Mi`), the rest in decimal (`500m`, `2`)."""
    return canonical(value, binary_si=binary(hard.get(name)) or "memory" in name or "storage" in name)


def _pretty(values: dict[str, str]) -> str:
    return ",".join(f"{k}={values[k]}" for k in sorted(values))


def admit(store: Store, res: Resource, obj: Obj, old: Obj | None) -> None:
    """The ResourceQuota admission plugin, for creates."""
    if old is not None or not res.namespaced:
        return
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    quotas = [q for q in index_of(store).list(QUOTAS, ns) if (q.get("spec") or {}).get("hard")] if ns else []
    if not quotas:
        return
    delta = usage(res, obj)
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    covering = [q for q in quotas if covers(q, res, obj)]
    for q in covering:  # checkRequest: every quota's constraints before any usage
        if res.kind == "Pod":
            missing = _missing(obj, set(_hard(q)) & _COMPUTE)
            if missing:
                raise _forbidden(res, name, f"failed quota: {q['metadata']['name']}: must specify {missing}")
    for q in covering:
        hard = _hard(q)
        requested = {k: v for k, v in delta.items() if k in hard and v}
        if not requested:
            continue
        now = used(store, q)
        over = [k for k, v in requested.items() if now.get(k, Fraction(0)) + v > _quantity(hard[k])]
        if over:
            raise _forbidden(
                res,
                name,
                f"exceeded quota: {q['metadata']['name']}, "
                f"requested: {_pretty({k: shown(k, requested[k], hard) for k in over})}, "
                f"used: {_pretty({k: shown(k, now.get(k, Fraction(0)), hard) for k in over})}, "
                f"limited: {_pretty({k: hard[k] for k in over})}",
            )


def _missing(pod: Obj, required: set[str]) -> str:
    """pods.go Constraints: each required resource a container does not set, with the containers."""
    if not required:
        return ""
    spec = pod.get("spec") or {}
    lacking: dict[str, set[str]] = {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = (c or {}).get("resources") or {}
        requests, limits = res.get("requests") or {}, res.get("limits") or {}
        have = set()
        for name in ("cpu", "memory"):
            if name in requests:
                have |= {name, f"requests.{name}"}
            if name in limits:
                have.add(f"limits.{name}")
        for r in required - have:
            lacking.setdefault(r, set()).add(c.get("name", ""))
    return "; ".join(f"{r} for: {','.join(sorted(lacking[r]))}" for r in sorted(lacking))


def _forbidden(res: Resource, name: str, message: str) -> ApiError:
    """admission.NewForbidden: `pods "x" is forbidden: ...` (the generateName before a name)."""
    details = {"name": name, **({"group": res.group} if res.group else {}), "kind": res.plural}
    return ApiError(403, "Forbidden", f'{res.qualified} "{name}" is forbidden: {message}', details)
