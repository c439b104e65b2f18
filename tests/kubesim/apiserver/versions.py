"""Older versions of a built-in kind, served by converting at the HTTP boundary: the store keeps
one version (Resource.version), a request to another (Resource.also) has its body converted in
and its answer converted out, as the apiserver's conversion does through the internal type.

autoscaling/v1 HorizontalPodAutoscaler <-> autoscaling/v2 (kubernetes/kubernetes
pkg/apis/autoscaling/v1/conversion.go): v1 carries only a CPU utilization target
(`targetCPUUtilizationPercentage`, `currentCPUUtilizationPercentage`); the v2 fields it cannot
hold travel in the annotations upstream uses (`autoscaling.alpha.kubernetes.io/metrics`,
`.../behavior`, `.../conditions`, `.../current-metrics`), so a v1 read-modify-write keeps them."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..storage.resources import Resource
from ..storage.store import Obj
from .patch import apply_patch

if TYPE_CHECKING:
    from .server import ApiServer

# a body already read and converted to the stored version, and the verb it is served as
CONVERTED_BODY: web.RequestKey[Any] = web.RequestKey("converted-body", object)
SERVED_METHOD: web.RequestKey[str] = web.RequestKey("served-method", str)

METRICS = "autoscaling.alpha.kubernetes.io/metrics"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
CURRENT = "autoscaling.alpha.kubernetes.io/current-metrics"


def converts(res: Resource, version: str) -> bool:
    return version != res.version and version in res.also


def to_storage(res: Resource, version: str, obj: Obj) -> Obj:
    """A request body in `version` as the stored version."""
    if res.kind != "HorizontalPodAutoscaler" or version != "v1":
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = res.api_version
    meta = out.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    spec = dict(out.get("spec") or {})
    target = spec.pop("targetCPUUtilizationPercentage", None)
    metrics: list[Any] = []
    if target is not None:
        metrics.append(_cpu_metric(int(target)))
    metrics += _load(annotations.pop(METRICS, None)) or []
    if metrics:
        spec["metrics"] = metrics
    behavior = _load(annotations.pop(BEHAVIOR, None))
    if behavior:
        spec["behavior"] = behavior
    out["spec"] = spec
    status = dict(out.get("status") or {})
    status.pop("currentCPUUtilizationPercentage", None)
    conditions = _load(annotations.pop(CONDITIONS, None))
    if conditions:
        status["conditions"] = conditions
    current = _load(annotations.pop(CURRENT, None))
    if current:
        status["currentMetrics"] = current
    out["status"] = status
    for k in (METRICS, BEHAVIOR, CONDITIONS, CURRENT):
        annotations.pop(k, None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return out


def from_storage(res: Resource, version: str, obj: Obj) -> Obj:
    """A stored object as `version` shows it."""
    if res.kind != "HorizontalPodAutoscaler" or version != "v1":
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"{res.group}/{version}"
    meta = out.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    spec = dict(out.get("spec") or {})
    others = []
    for m in spec.pop("metrics", None) or []:
        utilization = _cpu_utilization(m)
        if utilization is not None and "targetCPUUtilizationPercentage" not in spec:
            spec["targetCPUUtilizationPercentage"] = utilization
        else:
            others.append(m)
    if others:
        annotations[METRICS] = json.dumps(others, separators=(",", ":"))
    behavior = spec.pop("behavior", None)
    if behavior:
        annotations[BEHAVIOR] = json.dumps(behavior, separators=(",", ":"))
    out["spec"] = spec
    status = dict(out.get("status") or {})
    if status.get("conditions"):
        annotations[CONDITIONS] = json.dumps(status.pop("conditions"), separators=(",", ":"))
    current = status.pop("currentMetrics", None) or []
    for m in current:
        now = ((m.get("resource") or {}).get("current") or {}).get("averageUtilization")
        if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu" and now is not None:
            status["currentCPUUtilizationPercentage"] = now
    if any(m.get("type") for m in current):
        annotations[CURRENT] = json.dumps(current, separators=(",", ":"))
    status.setdefault("currentReplicas", 0)
    status.setdefault("desiredReplicas", 0)
    out["status"] = status
    if annotations:
        meta["annotations"] = annotations
    return out


def answer(res: Resource, version: str, body: Any) -> Any:
    """A JSON answer (one object, a list, a watch-less Table) converted out."""
    if not isinstance(body, dict):
        return body
    if body.get("kind") == f"{res.kind}List":
        body["apiVersion"] = f"{res.group}/{version}"
        body["items"] = [from_storage(res, version, o) for o in body.get("items") or []]
        return body
    if body.get("kind") == res.kind:
        return from_storage(res, version, body)
    return body


async def serve_converted(
    server: ApiServer,
    request: web.Request,
    res: Resource,
    version: str,
    where: tuple[str | None, str | None, str | None],
) -> web.StreamResponse:
    """A request to an older version of a kind: its body converted in, its JSON answer converted
    out; a patch applies to the object as that version shows it (served as the update it makes)."""
    ns, name, sub = where
    if request.method in ("POST", "PUT") and sub in (None, "status"):
        request[CONVERTED_BODY] = to_storage(res, version, await server._body(request))
    elif request.method == "PATCH" and name and sub in (None, "status") and not server._is_apply(request):
        shown = from_storage(res, version, server.store.get(res, ns or "", name))
        patched = apply_patch(shown, await request.read(), request.headers.get("Content-Type", ""))
        request[CONVERTED_BODY] = to_storage(res, version, patched)
        request[SERVED_METHOD] = "PUT"
    response = await server._resource(request, res, ns, name, sub)
    if isinstance(response, web.Response) and response.content_type == "application/json" and response.body:
        body = json.loads(bytes(response.body))  # type: ignore[arg-type]
        response.body = json.dumps(answer(res, version, body), separators=(",", ":")).encode() + b"\n"
    return response


def _cpu_metric(target: int) -> Obj:
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}},
    }


def _cpu_utilization(metric: Obj) -> int | None:
    src = metric.get("resource") or {}
    target = src.get("target") or {}
    if metric.get("type") == "Resource" and src.get("name") == "cpu" and target.get("type") == "Utilization":
        value = target.get("averageUtilization")
        return int(value) if value is not None else None
    return None


def _load(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
