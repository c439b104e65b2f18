"""The pods/eviction subresource (kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go):
POST an Eviction and the pod is deleted with its delete options unless a PodDisruptionBudget
forbids it. A pod that is done, pending or already deleting ignores budgets (canIgnorePDB); a
not-ready pod is let go when its budget is healthy enough (IfHealthyBudget) or says AlwaysAllow;
more than one budget is 500; a budget the disruption controller has not seen yet is 429 `... is
still being processed by the server`; none left is 429 `Cannot evict pod as it would violate the
pod's disruption budget.` with the DisruptionBudget cause, and no Retry-After (client-go would
retry it itself; `kubectl drain` retries every 5 s). An allowed eviction takes one disruption
from the budget and records the pod in `status.disruptedPods`, so the controller does not count
it while it goes. Answers `201 {"status":"Success"}`; `dryRun=All` checks without deleting."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..controllers.podutil import is_ready
from ..storage.errors import ApiError
from ..storage.kindindex import index_of
from ..storage.resources import BY_PATH
from ..storage.selection import labels_match, selector_from_match
from ..storage.store import Obj, now_rfc3339
from .responses import json_response

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
PDBS = BY_PATH[("policy", "poddisruptionbudgets")]
VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def _too_many(retry_after: int, cause: str) -> ApiError:
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(429, "TooManyRequests", VIOLATES, details)  # NewTooManyRequests: no prefix


def matching_budgets(cluster: Cluster, pod: Obj) -> list[Obj]:
    """getPodDisruptionBudgets: the budgets of the pod's namespace whose selector matches it (a
    budget without a selector matches nothing)."""
    labels = pod["metadata"].get("labels") or {}
    out = []
    for pdb in index_of(cluster.store).list(PDBS, pod["metadata"]["namespace"]):
        selector = (pdb.get("spec") or {}).get("selector")
        if selector is None:
            continue
        if labels_match(labels, selector_from_match(selector)):
            out.append(pdb)
    return out


async def handle_eviction(
    request: web.Request, cluster: Cluster, ns: str, name: str, body: Obj
) -> web.Response:
    if request.method != "POST":
        raise ApiError.method_not_allowed()
    pod = cluster.store.get(PODS, ns, name)
    if (body.get("metadata") or {}).get("name") not in (None, "", name):
        raise ApiError.bad_request("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions") or {}
    dry = request.query.get("dryRun") == "All" or "All" in (options.get("dryRun") or [])
    status = pod.get("status") or {}
    ignore = status.get("phase") in ("Succeeded", "Failed", "Pending") or bool(
        pod["metadata"].get("deletionTimestamp")
    )
    if not ignore:
        budgets = matching_budgets(cluster, pod)
        if len(budgets) > 1:
            raise ApiError.internal(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
            )
        if budgets:
            _check_and_take(cluster, pod, budgets[0], dry)
    if not dry:
        grace = options.get("gracePeriodSeconds")
        cluster.delete_object(
            PODS,
            ns,
            name,
            grace=None if grace is None else int(grace),
            propagation=options.get("propagationPolicy") or "Background",
        )
    return json_response(
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201
    )


def _check_and_take(cluster: Cluster, pod: Obj, pdb: Obj, dry: bool) -> None:
    st = pdb.get("status") or {}
    spec = pdb.get("spec") or {}
    if not is_ready(pod):
        # unhealthy pods: AlwaysAllow, or IfHealthyBudget when the budget is met
        policy = spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        healthy, desired = int(st.get("currentHealthy") or 0), int(st.get("desiredHealthy") or 0)
        if policy == "AlwaysAllow" or (desired > 0 and healthy >= desired):
            return
    if int(st.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 0):
        raise _too_many(
            10, f"The disruption budget {pdb['metadata']['name']} is still being processed by the server."
        )
    allowed = int(st.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise ApiError(
            403,
            "Forbidden",
            f'poddisruptionbudgets.policy "{pdb["metadata"]["name"]}" is forbidden: pdb disruptions allowed is negative',
            {"name": pdb["metadata"]["name"], "group": "policy", "kind": "poddisruptionbudgets"},
        )
    if allowed == 0:
        raise _too_many(
            0,
            f"The disruption budget {pdb['metadata']['name']} needs {int(st.get('desiredHealthy') or 0)} "
            f"healthy pods and has {int(st.get('currentHealthy') or 0)} currently",
        )
    if dry:
        return

    def take(obj: Obj) -> None:
        status = obj.setdefault("status", {})
        status["disruptionsAllowed"] = int(status.get("disruptionsAllowed") or 0) - 1
        disrupted = dict(status.get("disruptedPods") or {})
        disrupted[pod["metadata"]["name"]] = now_rfc3339()
        status["disruptedPods"] = disrupted
        if status["disruptionsAllowed"] == 0:
            for c in status.get("conditions") or []:
                if c.get("type") == "DisruptionAllowed" and c.get("status") != "False":
                    c.update(
                        status="False",
                        reason="InsufficientPods",
                        message="",
                        lastTransitionTime=now_rfc3339(),
                    )

    cluster.store.mutate(PDBS, pdb["metadata"]["namespace"], pdb["metadata"]["name"], take, status=True)


def parse_eviction(raw: bytes, content_type: str) -> Obj:
    """An Eviction body: JSON, or the protobuf policy/v1 Eviction kubectl drain sends."""
    if "protobuf" in content_type:
        from .protobuf_body import decode

        return decode(raw)
    try:
        body = json.loads(raw or b"{}")
    except ValueError as e:
        raise ApiError.bad_request(f"error decoding body: {e}") from None
    return copy.deepcopy(body) if isinstance(body, dict) else {}
