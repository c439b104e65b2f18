"""User impersonation (`kubectl --as`, `--as-group`): the apiserver's impersonation filter
(staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go). The requester needs
`impersonate` on the user (`users`, or for `system:serviceaccount:NS:NAME` on `serviceaccounts`
NAME in NS) and on each group; the request then runs as the impersonated user, whose groups
are the ones asked for (a ServiceAccount's own groups when none are), plus system:authenticated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..storage.errors import ApiError
from .auth import SERVICEACCOUNTS, Attributes, User

if TYPE_CHECKING:
    from .auth import Authorizer

USER, GROUP, UID = "Impersonate-User", "Impersonate-Group", "Impersonate-Uid"
_SA = "system:serviceaccount:"


def impersonated(auth: Authorizer, user: User, headers: Mapping[str, str], groups: list[str]) -> User:
    """The user the request runs as: `user` itself without impersonation headers."""
    name = headers.get(USER, "")
    if not name:
        if groups or headers.get(UID):
            raise ApiError(500, "InternalError", "Internal error occurred: requested impersonation is not valid")
        return user
    if name.startswith(_SA) and name.count(":") == 3:
        namespace, sa = name[len(_SA):].split(":")
        _check(auth, user, Attributes("impersonate", namespace, "", "serviceaccounts", "", sa), "serviceaccounts", sa)
        own = [SERVICEACCOUNTS, f"{SERVICEACCOUNTS}:{namespace}"]
    else:
        _check(auth, user, Attributes("impersonate", "", "", "users", "", name), "users", name)
        own = []
    for group in groups:
        _check(auth, user, Attributes("impersonate", "", "", "groups", "", group), "groups", group)
    return User(name, [], groups or own, uid=headers.get(UID, ""))


def _check(auth: Authorizer, user: User, attrs: Attributes, plural: str, name: str) -> None:
    if auth.decide(user, attrs)[0]:
        return
    scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    raise ApiError(
        403,
        "Forbidden",
        f'{plural} "{name}" is forbidden: User "{user.name}" cannot impersonate resource "{plural}" '
        f'in API group "" {scope}',
        {"kind": plural, "name": name},
    )
