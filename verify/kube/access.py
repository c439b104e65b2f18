"""Permissions checked before the wait: SelfSubjectAccessReviews for every rule the run needs (a
kind many workloads name asked once), so a token without `create pods/exec` or `patch
deployments` fails in a second, not after the rollout.

Where the review API itself is refused (an old or locked-down API server), the run goes on as
before: the request that needs the permission names it when it is denied."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from verify import errors
from verify.kube.api import Api
from verify.redact import one_line

REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
# what no later request could answer differently: said at once, not taken for a review API refused
_SAID_AT_ONCE = (errors.Cancelled, errors.Unauthorized, errors.Unreachable, errors.BadAnswer)
WHO = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
_PARALLEL = 8


@dataclass(frozen=True, order=True)
class Rule:
    """One permission in one namespace, as RBAC grants it."""

    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    name: str = ""

    def phrase(self) -> str:
        """As `kubectl auth can-i` asks it: `create pods --subresource=exec`, `patch deployments.apps/web`."""
        kind = f"{self.resource}.{self.group}" if self.group else self.resource
        target = f"{kind}/{self.name}" if self.name else kind
        sub = f" --subresource={self.subresource}" if self.subresource else ""
        return f"{self.verb} {target}{sub}"


def _allowed(api: Api, *, namespace: str, rule: Rule) -> bool:
    attributes = {
        "namespace": namespace,
        "verb": rule.verb,
        "group": rule.group,
        "resource": rule.resource,
        "subresource": rule.subresource,
        "name": rule.name,
    }
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {k: v for k, v in attributes.items() if v}},
    }
    answer = api.post(REVIEWS, body)
    status = answer.get("status") if isinstance(answer, dict) else None
    return bool(isinstance(status, dict) and status.get("allowed"))


def denied(api: Api, *, namespace: str, rules: Sequence[Rule]) -> list[Rule] | None:
    """The rules the API server says this identity lacks, in order; None when it would not say
    (the review API refused, missing or failing): then nothing is known and the run goes on.

    Named rules of one kind (`get deployments.apps/web`: one per workload) are first asked once
    without a name: a review without a name is allowed only by a rule without resourceNames,
    which grants every name (RBAC's ResourceNameMatches, upstream
    pkg/apis/rbac/v1/evaluation_helpers.go), so 100 Deployments cost three reviews (get, watch,
    patch), not 300. Only where that is denied (RBAC by resourceNames) is each name asked."""
    wanted = sorted(set(rules))
    if not wanted:
        return []
    named: dict[Rule, int] = {}
    for rule in wanted:
        if rule.name:
            named[replace(rule, name="")] = named.get(replace(rule, name=""), 0) + 1
    # asked without a name: kinds named more than once, and kinds the run also needs unnamed
    cover = {kind for kind, count in named.items() if count > 1 or kind in wanted}

    def covered(rule: Rule) -> bool:
        return bool(rule.name) and replace(rule, name="") in cover

    try:
        answers = _reviews(
            api, namespace=namespace, rules=sorted({*(r for r in wanted if not covered(r)), *cover})
        )
        # where the kind is denied, RBAC may still grant the names one by one
        answers |= _reviews(
            api,
            namespace=namespace,
            rules=[r for r in wanted if covered(r) and not answers[replace(r, name="")]],
        )
    except _SAID_AT_ONCE:
        raise
    except errors.VerifyError:
        return None
    return [r for r in wanted if not answers.get(r) and not (covered(r) and answers[replace(r, name="")])]


def _reviews(api: Api, *, namespace: str, rules: Sequence[Rule]) -> dict[Rule, bool]:
    """Each rule's review, side by side."""
    if not rules:
        return {}
    with ThreadPoolExecutor(max_workers=min(_PARALLEL, len(rules))) as pool:
        answers = list(pool.map(lambda r: _allowed(api, namespace=namespace, rule=r), rules))
    return dict(zip(rules, answers, strict=True))


def whoami(api: Api) -> str:
    """The user the API server sees (`kubectl auth whoami`), or "" when it will not say."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        answer = api.post(WHO, body)
    except _SAID_AT_ONCE:
        raise
    except errors.VerifyError:
        return ""
    user = answer.get("status", {}).get("userInfo", {}) if isinstance(answer, dict) else {}
    name = user.get("username") if isinstance(user, dict) else None
    return one_line(name) if isinstance(name, str) else ""
