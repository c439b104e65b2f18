"""Bearer tokens and a small RBAC: static rules per user, real Role/RoleBinding objects, and the
default ClusterRoleBindings every apiserver bootstraps for its built-in groups; the request key
the authenticated user is kept under.

Rules are resolved as kubernetes/kubernetes pkg/registry/rbac/validation/rule.go does
(VisitRulesFor: the stored ClusterRoleBindings, the bootstrap ones among them, then the
namespace's RoleBindings; describeSubject) and
matched as plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows) and pkg/apis/rbac/v1/
evaluation_helpers.go do. The answers of SelfSubjectAccessReviews and SelfSubjectRulesReviews
(reviews.py) come from the same resolution as the authorisation of every request."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..storage.resources import BY_PATH
from .eks import PREFIX as EKS_PREFIX
from .eks import EksAuthenticator, Refused
from .entra import Entra
from .entra import Refused as EntraRefused
from .gke import PREFIX as GKE_PREFIX
from .gke import GoogleSim

if TYPE_CHECKING:
    from ..knobs import Knobs
    from ..storage.store import Store

# the authenticated user of a request (set by the API server's middleware)
USER: web.RequestKey[Any] = web.RequestKey("user", object)

AUTHENTICATED = "system:authenticated"
SERVICEACCOUNTS = "system:serviceaccounts"
PolicyRule = dict[str, list[str]]


@dataclass(frozen=True)
class Rule:
    verbs: frozenset[str]
    groups: frozenset[str] = frozenset({""})
    resources: frozenset[str] = frozenset({"*"})
    namespaces: frozenset[str] | None = None  # None: every namespace

    @classmethod
    def of(
        cls,
        verbs: str | list[str],
        resources: str | list[str],
        groups: str | list[str] = "",
        namespaces: list[str] | None = None,
    ) -> Rule:
        def fs(v: str | list[str]) -> frozenset[str]:
            return frozenset([v] if isinstance(v, str) else v)

        return cls(
            fs(verbs),
            fs(groups),
            fs(resources),
            frozenset(namespaces) if namespaces is not None else None,
        )

    def allows(self, verb: str, group: str, resource: str, namespace: str) -> bool:
        return (
            (verb in self.verbs or "*" in self.verbs)
            and (group in self.groups or "*" in self.groups)
            and (resource in self.resources or "*" in self.resources)
            and (self.namespaces is None or namespace in self.namespaces)
        )

    def policy(self) -> PolicyRule:
        """As an RBAC PolicyRule (what a SelfSubjectRulesReview lists)."""
        return {
            "verbs": sorted(self.verbs),
            "apiGroups": sorted(self.groups),
            "resources": sorted(self.resources),
        }


@dataclass
class User:
    name: str
    rules: list[Rule] | None = None  # None: cluster-admin (system:masters)
    groups: list[str] = field(default_factory=list)
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict)
    expires: float | None = None  # time.time() from which the token no longer authenticates
    bound: tuple[str, str, str, str] | None = None  # (plural, namespace, name, uid) it lives with

    @property
    def all_groups(self) -> list[str]:
        """The groups the apiserver sees: its authenticated-group adder puts every authenticated
        user in system:authenticated."""
        return self.groups if AUTHENTICATED in self.groups else [*self.groups, AUTHENTICATED]


@dataclass(frozen=True)
class Attributes:
    """What one request (or one SelfSubjectAccessReview) asks to do."""

    verb: str
    namespace: str = ""
    group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""  # a non-resource request (e.g. /healthz) when resource_request is False
    resource_request: bool = True


class Authorizer:
    def __init__(self, store: Store, *, knobs: Knobs | None = None) -> None:
        self.store = store
        self.tokens: dict[str, User] = {}
        # an EKS cluster's authenticator (Knobs.eks_cluster_name): `k8s-aws-v1.` tokens checked as
        # aws-iam-authenticator and STS check them (eks.py); each one accepted is kept in `tokens`
        # until it expires (so the suite's leak guard knows it), each refusal's reason in `refused`
        self.eks = EksAuthenticator(knobs.eks_cluster_name) if knobs and knobs.eks_cluster_name else None
        # a GKE cluster's (Knobs.gke_project): `ya29.` access tokens its own Google endpoints
        # issued (gke.py; served on a port of their own, started with the cluster), kept the same way
        self.gke = GoogleSim(knobs.gke_project) if knobs and knobs.gke_project else None
        # an AKS cluster's Microsoft Entra ID (Knobs.aks_server_id): it also serves the authority's
        # endpoints on kubesim's port; its access tokens authenticate when issued for the server id
        self.entra = Entra(knobs.aks_server_id) if knobs and knobs.aks_server_id else None
        self.refused: list[str] = []

    def add(self, token: str, user: User) -> None:
        self.tokens[token] = user

    def add_serviceaccount(self, namespace: str, name: str, *, token: str | None = None, **kw: Any) -> str:
        """A token for `system:serviceaccount:NS:NAME` in the groups the ServiceAccount token
        authenticator gives it; authorised by RBAC objects (and the default bindings) only."""
        token = token or secrets.token_hex(16)
        groups = [SERVICEACCOUNTS, f"{SERVICEACCOUNTS}:{namespace}"]
        self.add(token, User(f"system:serviceaccount:{namespace}:{name}", [], groups, **kw))
        return token

    def authenticate(self, header: str | None) -> User | None:
        # the apiserver compares the scheme case-insensitively (the in-cluster loader sends "bearer")
        scheme, _, token = (header or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        user = self.tokens.get(token.strip())
        if user is None and self.eks is not None and token.strip().startswith(EKS_PREFIX):
            user = self._eks_user(token.strip())
        if user is None and self.gke is not None and token.strip().startswith(GKE_PREFIX):
            user = self._gke_user(token.strip())
        if user is None and self.entra is not None:
            user = self._entra_user(token.strip())
        if user is None:
            return None
        if user.expires is not None and time.time() >= user.expires:
            return None  # an expired token: 401, as the token authenticator's "token is expired"
        if user.bound is not None:
            plural, namespace, name, uid = user.bound
            obj = self.store.find(BY_PATH[("", plural)], namespace, name)
            if obj is None or obj["metadata"]["uid"] != uid:
                return None  # its pod or secret is gone: the token died with it
        return user

    def _eks_user(self, token: str) -> User | None:
        assert self.eks is not None
        try:
            arn, name, groups, expires = self.eks.verify(token)
        except Refused as e:
            self.refused.append(str(e))
            return None
        user = User(
            name, [], groups, uid=f"aws-iam-authenticator:{arn}", extra={"arn": [arn]}, expires=expires
        )
        self.tokens[token] = user
        return user

    def _gke_user(self, token: str) -> User | None:
        assert self.gke is not None
        known = self.gke.user(token)
        if known is None:
            self.refused.append("GKE: an access token kubesim's Google endpoints did not issue, or expired")
            return None
        name, groups, expires = known
        self.tokens[token] = user = User(name, [], groups, expires=expires)
        return user

    def _entra_user(self, token: str) -> User | None:
        assert self.entra is not None
        try:
            found = self.entra.authenticate(token)
        except EntraRefused as e:
            self.refused.append(e.description)
            return None
        if found is None:
            return None
        oid, name, groups, expires = found
        user = User(name, [], groups, uid=oid, extra={"oid": [oid]}, expires=expires)
        self.tokens[token] = user
        return user

    def allowed(
        self, user: User, verb: str, group: str, resource: str, namespace: str, name: str = ""
    ) -> bool:
        """`resource` may carry its subresource: `pods/exec`."""
        res, _, sub = resource.partition("/")
        attrs = Attributes(verb, namespace, group, res, sub, name)
        return self.decide(user, attrs)[0]

    def decide(self, user: User, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason) as the apiserver's authorizer chain answers: system:masters by the
        privileged-group authorizer (no reason), then RBAC ("RBAC: allowed by ..."); a request
        no rule allows gets no opinion and no reason."""
        if user.rules is None:
            return True, ""
        for source, rule in self.rules_for(user, attrs.namespace):
            if rule_allows(attrs, rule):
                return True, f"RBAC: allowed by {source}"
        return False, ""

    def rules_for(self, user: User, namespace: str) -> Iterator[tuple[str, PolicyRule]]:
        """(source, rule) for every rule that applies to the user in the namespace ("" for the
        cluster scope)."""
        for r in user.rules or []:
            if r.namespaces is None or namespace in r.namespaces:
                yield f'kubesim rule of User "{user.name}" (Cluster.add_user)', r.policy()
        # the stored ClusterRoleBindings, the bootstrap ones (bootstrap_policy.py) among them
        yield from self._cluster_role_bindings(user)
        if namespace:
            yield from self._role_bindings(user, namespace)

    def _cluster_role(self, name: str) -> Any:
        """A ClusterRole's rules; None if there is none."""
        stored = self.store.find(BY_PATH[("rbac.authorization.k8s.io", "clusterroles")], "", name)
        return None if stored is None else stored.get("rules") or []

    def _cluster_role_bindings(self, user: User) -> Iterator[tuple[str, PolicyRule]]:
        """Stored ClusterRoleBindings: their ClusterRole's rules in every namespace (a
        ServiceAccount subject names its namespace; there is no binding namespace to default to)."""
        for crb in self.store.list(BY_PATH[("rbac.authorization.k8s.io", "clusterrolebindings")]):
            subject = next((s for s in crb.get("subjects") or [] if _subject_is(s, user, "")), None)
            ref = crb.get("roleRef") or {}
            rules = self._cluster_role(ref.get("name", "")) if ref.get("kind") == "ClusterRole" else None
            if subject is None or rules is None:
                continue
            source = (
                f'ClusterRoleBinding "{crb["metadata"]["name"]}" of ClusterRole "{ref.get("name")}" '
                f"to {_describe(subject, '')}"
            )
            for rule in rules:
                yield source, rule

    def _role_bindings(self, user: User, namespace: str) -> Iterator[tuple[str, PolicyRule]]:
        roles = BY_PATH[("rbac.authorization.k8s.io", "roles")]
        bindings = BY_PATH[("rbac.authorization.k8s.io", "rolebindings")]
        for rb in self.store.list(bindings, namespace):
            subject = next((s for s in rb.get("subjects") or [] if _subject_is(s, user, namespace)), None)
            if subject is None:
                continue
            ref = rb.get("roleRef") or {}
            rules: Any = None
            if ref.get("kind") == "Role":
                role = self.store.find(roles, namespace, ref.get("name", ""))
                rules = None if role is None else role.get("rules") or []
            elif ref.get("kind") == "ClusterRole":
                rules = self._cluster_role(ref.get("name", ""))
            if rules is None:
                continue
            source = (
                f'RoleBinding "{rb["metadata"]["name"]}/{namespace}" of {ref["kind"]} "{ref.get("name")}" '
                f"to {_describe(subject, namespace)}"
            )
            for rule in rules:
                yield source, rule


def rule_allows(attrs: Attributes, rule: PolicyRule) -> bool:
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return any(
            u == "*" or u == attrs.path or (u.endswith("*") and attrs.path.startswith(u.rstrip("*")))
            for u in rule.get("nonResourceURLs") or []
        )
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    resources = rule.get("resources") or []
    return (
        _has(rule.get("apiGroups"), attrs.group)
        and (
            "*" in resources
            or combined in resources
            or bool(attrs.subresource and f"*/{attrs.subresource}" in resources)
        )
        and (not rule.get("resourceNames") or attrs.name in rule["resourceNames"])
    )


def _has(values: list[str] | None, v: str) -> bool:
    return bool(values) and (v in values or "*" in values)  # type: ignore[operator]


def _subject_is(subject: dict[str, str], user: User, namespace: str) -> bool:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or namespace
        return user.name == f"system:serviceaccount:{ns}:{subject.get('name')}"
    if kind == "User":
        return user.name == subject.get("name")
    if kind == "Group":
        return subject.get("name") in user.all_groups
    return False


def _describe(subject: dict[str, str], namespace: str) -> str:
    if subject.get("kind") == "ServiceAccount":
        return f'ServiceAccount "{subject.get("name")}/{subject.get("namespace") or namespace}"'
    return f'{subject.get("kind")} "{subject.get("name")}"'
