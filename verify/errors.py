"""One taxonomy of what can end a workload's verification, each error naming its exit code.

HTTP answers become status-specific classes in one place (`api_error`, as kopf's
`check_response` does), so callers test a class, never a number; what the domain decides
(a paused workload, a missing source, a restart that kept conflicting) has its own class instead of
a borrowed HTTP status. Every message is safe to print: it never holds a raw response."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from verify.exitcodes import ExitCode


class VerifyError(Exception):
    """Base of every error the run reports as a verdict."""

    exit_code: ClassVar[ExitCode] = ExitCode.UNREADABLE

    def verdict(self) -> str:
        """The message as a workload's verdict states it."""
        return str(self)


class ConfigError(VerifyError):
    """Invalid input: ONE line per problem naming the setting (flag and env var) and the fix; exit
    2 before any request. `field` is the setting's name, empty for input that is no single setting.
    `lines` are the problems (the message alone, unless several were found at once); the message
    joins them with "; "."""

    exit_code = ExitCode.CONFIG

    def __init__(self, message: str, *, field: str = "", lines: tuple[str, ...] = ()) -> None:
        super().__init__("; ".join(lines) if lines else message)
        self.field = field
        self.lines: tuple[str, ...] = lines or (message,)


class ConfigFileError(ConfigError):
    """A --config file's problems, one `FILE:LINE: where: what is wrong; the fix` each."""

    def __init__(self, message: str, *, lines: tuple[str, ...] = ()) -> None:
        super().__init__(message, field="config", lines=lines)


class KubeConfigError(ConfigError):
    """The kubeconfig (or in-cluster configuration) cannot be loaded."""


# -- the API server's answers -------------------------------------------------------------------


class ApiError(VerifyError):
    """A request the API server refused; `status` is its HTTP status (0: no answer at all)."""

    status: ClassVar[int] = 0

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class BadRequest(ApiError):
    status = 400


class Unauthorized(ApiError):
    status = 401


class Forbidden(ApiError):
    status = 403

    def verdict(self) -> str:
        return f"forbidden: {self}"


class NotFound(ApiError):
    status = 404


class Conflict(ApiError):
    status = 409


class Expired(ApiError):
    """410 Gone: a watch's or list's resourceVersion is too old; read again."""

    status = 410


class Invalid(ApiError):
    status = 422


class Refused(ApiError):
    """Any other status the API server will not change its mind about."""

    def __init__(self, message: str, *, status: int, reason: str = "") -> None:
        super().__init__(message, reason=reason)
        self.code = status


class Unanswered(ApiError):
    """No usable answer: whether a write took effect is unknown."""


class Unreachable(Unanswered):
    """No connection (refused, no route, an untrusted certificate): exit 3."""


class BadAnswer(Unanswered):
    """An answer that is not the Kubernetes API's (an HTML login page, not JSON) or is larger than
    rollout-verify reads: asking again would get the same, so it is said at once (exit 3)."""


class Unavailable(Unanswered):
    """5xx or 429 until the retries gave up at the deadline."""

    status = 503


class DeadlineExceeded(Unanswered):
    """The run's --timeout ran out while the API server was still being asked: the timeout's
    verdict (exit 4), not an unreachable server's."""

    status = 503
    exit_code = ExitCode.ROLLOUT


_BY_STATUS: dict[int, type[ApiError]] = {
    c.status: c for c in (BadRequest, Unauthorized, Forbidden, NotFound, Conflict, Expired, Invalid)
}


def api_error(*, status: int, message: str, reason: str = "") -> ApiError:
    """The one place an HTTP error status becomes an exception class."""
    cls = _BY_STATUS.get(status)
    if cls is not None:
        return cls(message, reason=reason)
    if status >= 500 or status == 429:
        return Unavailable(message, reason=reason)
    return Refused(message, status=status, reason=reason)


# -- what the run decides -----------------------------------------------------------------------


class Cancelled(VerifyError):
    """SIGINT or SIGTERM: the run stops; no request, and above all no restart, is sent after it."""


class RolloutNotComplete(VerifyError):
    """The rollout failed (progress deadline, paused) or the run's deadline ran out first."""

    exit_code = ExitCode.ROLLOUT

    def __init__(self, message: str, workload: dict[str, Any]) -> None:
        super().__init__(message)
        self.message = message
        self.workload = workload


class RolloutDoomed(RolloutNotComplete):
    """A pod of the new revision cannot become ready without a change to the spec (--fail-fast):
    waiting out --timeout would only delay the same verdict."""


class WorkloadDeleted(VerifyError):
    """The workload was deleted while its rollout was awaited."""


class WorkloadPaused(VerifyError):
    """A paused Deployment cannot be restarted (kubectl refuses too)."""


class RestartConflicted(VerifyError):
    """The workload kept changing while the restart was sent: nothing was restarted."""


class SourceMissing(VerifyError):
    """An expected file's (or HTTP check's) ConfigMap/Secret or key does not exist."""


class NoWorkloadsMatched(VerifyError):
    """--selector matched no workload (and nothing else was named)."""


def internal_error(exc: BaseException) -> str:
    """Name the exception type and where it was raised, never its message (it could quote data)."""
    import traceback  # a bug's path only

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"internal error {type(exc).__name__}{where}: a bug in rollout-verify, please report it"
