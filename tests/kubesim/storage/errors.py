"""Kubernetes `Status` errors with the apiserver's own wording."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .resources import Resource


class ApiError(Exception):
    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        list_meta: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.list_meta = list_meta or {}

    def status(self) -> dict[str, Any]:
        """metav1.Status in its Go field order (details before code), as the apiserver encodes it."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body

    # -- constructors with the real texts ---------------------------------
    @classmethod
    def not_found(cls, res: Resource, name: str) -> ApiError:
        det = _details(res, name)
        return cls(404, "NotFound", f'{res.qualified} "{name}" not found', det)

    @classmethod
    def no_route(cls) -> ApiError:
        """A path no handler serves (an unknown resource or subresource): go-restful's 404, made by
        apierrors.NewGenericServerResponse with an empty resource, so `details` is `{}`. Clients
        rely on it: `kubectl debug` reads an empty details.name as "ephemeral containers are
        disabled" (a nil details made it panic)."""
        return cls(404, "NotFound", "the server could not find the requested resource", {})

    @classmethod
    def method_not_allowed(cls) -> ApiError:
        """go-restful's 405 for a route without that method (NewGenericServerResponse: `details` {})."""
        return cls(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})

    @classmethod
    def already_exists(cls, res: Resource, name: str) -> ApiError:
        det = _details(res, name)
        return cls(409, "AlreadyExists", f'{res.qualified} "{name}" already exists', det)

    @classmethod
    def conflict(cls, res: Resource, name: str) -> ApiError:
        det = _details(res, name)
        return cls(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            det,
        )

    @classmethod
    def invalid(cls, kind: str, name: str, field: str, detail: str) -> ApiError:
        return cls(
            422,
            "Invalid",
            f'{kind} "{name}" is invalid: {field}: {detail}',
            {
                "name": name,
                "kind": kind,
                "causes": [{"reason": "FieldValueInvalid", "message": detail, "field": field}],
            },
        )

    @classmethod
    def field_invalid(cls, group: str, kind: str, field: str, value: Any, detail: str) -> ApiError:
        """NewInvalid(GroupKind, "", field.Invalid(...)): an object with no name (a review, a
        TokenRequest), e.g. `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds:
        Invalid value: 60: may not specify a duration less than 10 minutes`."""
        shown = '"null"' if value is None else json.dumps(value) if not isinstance(value, int) else str(value)
        cause = f"Invalid value: {shown}: {detail}"
        return cls(
            422,
            "Invalid",
            f'{kind}.{group} "" is invalid: {field}: {cause}',
            {
                "group": group,
                "kind": kind,
                "causes": [{"reason": "FieldValueInvalid", "message": cause, "field": field}],
            },
        )

    @classmethod
    def immutable(cls, kind: str, name: str, field: str) -> ApiError:
        msg = "Forbidden: field is immutable when `immutable` is set"
        return cls(
            422,
            "Invalid",
            f'{kind} "{name}" is invalid: {field}: {msg}',
            {
                "name": name,
                "kind": kind,
                "causes": [{"reason": "FieldValueForbidden", "message": msg, "field": field}],
            },
        )

    @classmethod
    def bad_request(cls, message: str) -> ApiError:
        return cls(400, "BadRequest", message)

    @classmethod
    def forbidden(
        cls, *, user: str, verb: str, res: Resource, sub: str, name: str, namespace: str | None
    ) -> ApiError:
        resource = f"{res.plural}/{sub}" if sub else res.plural
        subject = f'{res.qualified} "{name}"' if name else res.qualified
        scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
        msg = (
            f'{subject} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
            f'in API group "{res.group}" {scope}'
        )
        det: dict[str, Any] = {"name": name} if name else {}
        if res.group:
            det["group"] = res.group
        det["kind"] = res.plural
        return cls(403, "Forbidden", msg, det)

    @classmethod
    def unauthorized(cls) -> ApiError:
        return cls(401, "Unauthorized", "Unauthorized")

    @classmethod
    def expired(cls, rv: int, oldest: int) -> ApiError:
        """A watch before the watch cache's window (cacher/watch_cache_history.go
        GetIntervalLocked: `oldest` is the oldest servable resourceVersion - 1)."""
        return cls(410, "Expired", f"too old resource version: {rv} ({oldest})")

    @classmethod
    def list_expired(cls) -> ApiError:
        """A list at a revision etcd has compacted (storage/etcd3/errors.go `expired`)."""
        return cls(410, "Expired", "The resourceVersion for the provided list is too old.")

    @classmethod
    def continue_expired(cls, token: str) -> ApiError:
        """A continue token whose revision etcd has compacted (storage/etcd3/errors.go
        `inconsistentContinue`), with a token that continues at the latest revision."""
        return cls(
            410,
            "Expired",
            "The provided continue parameter is too old to display a consistent list result. You can "
            "start a new list without the continue parameter, or use the continue token in this "
            "response to retrieve the remainder of the results. Continuing with the provided token "
            "results in an inconsistent list - objects that were created, modified, or deleted "
            "between the time the first chunk was returned and now may show up in the list.",
            list_meta={"continue": token},
        )

    @classmethod
    def too_large_rv(cls, rv: int, current: int) -> ApiError:
        """storage/errors.go NewTooLargeResourceVersionError: apierrors.NewTimeoutError (504,
        `Timeout: ...`) with the ResourceVersionTooLarge cause; the cacher suggests a retry in 1 s."""
        return cls(
            504,
            "Timeout",
            f"Timeout: Too large resource version: {rv}, current: {current}",
            {
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            },
        )

    @classmethod
    def list_options_invalid(cls, errs: list[tuple[str, str]]) -> ApiError:
        """handlers/get.go: ValidateListOptions' errors as NewInvalid(ListOptions.meta.k8s.io, "")
        (apimachinery pkg/apis/meta/internalversion/validation); errs are (field, detail)."""
        causes = [
            {
                "reason": "FieldValueForbidden" if d.startswith("Forbidden") else "FieldValueNotSupported",
                "message": d,
                "field": f,
            }
            for f, d in errs
        ]
        shown = [f"{f}: {d}" for f, d in errs]
        text = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
        return cls(
            422,
            "Invalid",
            f'ListOptions.meta.k8s.io "" is invalid: {text}',
            {"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes},
        )

    @classmethod
    def internal(cls, message: str) -> ApiError:
        return cls(
            500,
            "InternalError",
            f"Internal error occurred: {message}",
            {"causes": [{"message": message}]},
        )

    @classmethod
    def too_many(cls, retry_after: int) -> ApiError:
        return cls(
            429,
            "TooManyRequests",
            "the server has received too many requests and has asked us to try again later",
            {"retryAfterSeconds": retry_after},
        )

    @classmethod
    def unavailable(cls) -> ApiError:
        return cls(503, "ServiceUnavailable", "the server is currently unable to handle the request")


def _details(res: Resource, name: str) -> dict[str, Any]:
    """The StatusDetails every per-object error carries, in the Go struct's order (name, group, kind)."""
    det: dict[str, Any] = {"name": name}
    if res.group:
        det["group"] = res.group
    det["kind"] = res.plural
    return det
