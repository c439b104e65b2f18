"""The reviews a client asks about itself, answered from the requesting user and kubesim's RBAC
(auth.py, the same resolution that authorises every request): SelfSubjectAccessReview and
SelfSubjectRulesReview (authorization.k8s.io/v1: `kubectl auth can-i`, `can-i --list`) and
SelfSubjectReview (authentication.k8s.io/v1: `kubectl auth whoami`). Nothing is stored.

As kubernetes/kubernetes answers them: pkg/registry/authorization/selfsubjectaccessreview/rest.go
(validated by pkg/apis/authorization/validation/validation.go, attributes as
pkg/registry/authorization/util/helpers.go ResourceAttributesFrom/NonResourceAttributesFrom;
status allowed/denied/reason), pkg/registry/authorization/selfsubjectrulesreview/rest.go (a new
object with the status only; "no namespace on request") and
pkg/registry/authentication/selfsubjectreview/rest.go (userInfo, creationTimestamp now)."""

from __future__ import annotations

from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import Resource
from ..storage.store import Obj, now_rfc3339
from .auth import Attributes, Authorizer, User

_RESOURCE_FIELDS = ("namespace", "verb", "group", "version", "resource", "subresource", "name")


def review(auth: Authorizer, res: Resource, user: User, body: Obj) -> Obj:
    """The created review (HTTP 201) for a POST of `body` to `res`."""
    if body.get("kind") not in (None, res.kind) or body.get("apiVersion") not in (None, res.api_version):
        raise ApiError.bad_request(
            f"the API version in the data ({body.get('apiVersion')}) does not match the expected "
            f"API version ({res.api_version})"
        )
    head = {"kind": res.kind, "apiVersion": res.api_version}
    if res.kind == "SelfSubjectAccessReview":
        spec, attrs = _access_attributes(body)
        allowed, reason = auth.decide(user, attrs)
        # RBAC never denies: a request no rule allows gets no opinion (denied false, no reason)
        status: dict[str, Any] = {"allowed": allowed}
        if reason:
            status["reason"] = reason
        return {**head, "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}
    if res.kind == "SelfSubjectRulesReview":
        namespace = (body.get("spec") or {}).get("namespace") or ""
        if not namespace:
            raise ApiError.bad_request("no namespace on request")
        resource_rules, non_resource_rules = [], []
        for _, rule in auth.rules_for(user, namespace):
            if rule.get("resources"):
                keys = ("verbs", "apiGroups", "resources", "resourceNames")
                resource_rules.append({k: list(rule[k]) for k in keys if rule.get(k)})
            if rule.get("nonResourceURLs"):
                non_resource_rules.append(
                    {"verbs": list(rule["verbs"]), "nonResourceURLs": list(rule["nonResourceURLs"])}
                )
        return {
            **head,
            "metadata": {"creationTimestamp": None},
            "spec": {},
            "status": {
                "resourceRules": resource_rules,
                "nonResourceRules": non_resource_rules,
                "incomplete": False,
            },
        }
    info: dict[str, Any] = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    info["groups"] = user.all_groups
    if user.extra:
        info["extra"] = {k: list(v) for k, v in user.extra.items()}
    return {**head, "metadata": {"creationTimestamp": now_rfc3339()}, "status": {"userInfo": info}}


def _access_attributes(body: Obj) -> tuple[Obj, Attributes]:
    """The spec as the apiserver echoes it (empty fields left out) and what it asks."""
    spec = body.get("spec") or {}
    meta = body.get("metadata") or {}
    ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    group, kind = "authorization.k8s.io", "SelfSubjectAccessReview"
    if ra is not None and nra is not None:
        raise ApiError.field_invalid(
            group,
            kind,
            "spec.nonResourceAttributes",
            nra,
            "cannot be specified in combination with resourceAttributes",
        )
    if ra is None and nra is None:
        raise ApiError.field_invalid(
            group,
            kind,
            "spec.resourceAttributes",
            None,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )
    if any(v not in (None, "", {}, []) for v in meta.values()):
        raise ApiError.field_invalid(group, kind, "metadata", meta, "must be empty")
    if ra is not None:
        if not isinstance(ra, dict):
            raise ApiError.bad_request("spec.resourceAttributes: expected an object")
        echoed = {k: str(ra[k]) for k in _RESOURCE_FIELDS if ra.get(k)}
        echoed |= {k: ra[k] for k in ("fieldSelector", "labelSelector") if ra.get(k)}
        attrs = Attributes(
            verb=echoed.get("verb", ""),
            namespace=echoed.get("namespace", ""),
            group=echoed.get("group", ""),
            resource=echoed.get("resource", ""),
            subresource=echoed.get("subresource", ""),
            name=echoed.get("name", ""),
        )
        return {"resourceAttributes": echoed}, attrs
    if not isinstance(nra, dict):
        raise ApiError.bad_request("spec.nonResourceAttributes: expected an object")
    echoed = {k: str(nra[k]) for k in ("path", "verb") if nra.get(k)}
    attrs = Attributes(verb=echoed.get("verb", ""), path=echoed.get("path", ""), resource_request=False)
    return {"nonResourceAttributes": echoed}, attrs
