"""Bearer tokens and a small RBAC: static rules per user, or real Role/RoleBinding objects; the
request key the authenticated user is kept under."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..storage.resources import BY_PATH

if TYPE_CHECKING:
    from ..storage.store import Store

# the authenticated user of a request (set by the API server's middleware)
USER: web.RequestKey[Any] = web.RequestKey("user", object)


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


@dataclass
class User:
    name: str
    rules: list[Rule] | None = None  # None: cluster-admin
    groups: list[str] = field(default_factory=list)


class Authorizer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.tokens: dict[str, User] = {}

    def add(self, token: str, user: User) -> None:
        self.tokens[token] = user

    def authenticate(self, header: str | None) -> User | None:
        # the apiserver compares the scheme case-insensitively (the in-cluster loader sends "bearer")
        scheme, _, token = (header or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.tokens.get(token.strip())

    def allowed(
        self, user: User, verb: str, group: str, resource: str, namespace: str, name: str = ""
    ) -> bool:
        if user.rules is None:
            return True
        if any(r.allows(verb, group, resource, namespace) for r in user.rules):
            return True
        return self._rbac_objects(user, verb, group, resource, namespace, name)

    def _rbac_objects(
        self, user: User, verb: str, group: str, resource: str, namespace: str, name: str
    ) -> bool:
        if not namespace:
            return False
        roles = BY_PATH[("rbac.authorization.k8s.io", "roles")]
        bindings = BY_PATH[("rbac.authorization.k8s.io", "rolebindings")]
        for rb in self.store.list(bindings, namespace):
            if not any(_subject_is(s, user, namespace) for s in rb.get("subjects") or []):
                continue
            ref = rb.get("roleRef") or {}
            if ref.get("kind") != "Role":
                continue
            role = self.store.find(roles, namespace, ref.get("name", ""))
            if role is None:
                continue
            for r in role.get("rules") or []:
                if (
                    _has(r.get("verbs"), verb)
                    and _has(r.get("apiGroups"), group)
                    and _has(r.get("resources"), resource)
                    and (not r.get("resourceNames") or name in r["resourceNames"])
                ):
                    return True
        return False


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
        return subject.get("name") in user.groups
    return False
