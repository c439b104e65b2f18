"""REST calls and watches with the one retry policy and the run's deadline.

Errors leave this module as the status-specific classes of `verify.errors`, carrying only the
Status `message`, never the raw response (headers and bodies may hold tokens)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx

from verify import errors
from verify.kube import retry

if TYPE_CHECKING:
    from verify.kube.connection import Connection

MAX_MESSAGE = 400  # a Status message longer than this is cut: it is an error line, not a dump


def status_message(body: bytes | str, fallback: str) -> tuple[str, str]:
    """(message, reason) from a Kubernetes Status body; never the raw body, and the message as
    one printable line of at most MAX_MESSAGE characters."""
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        return fallback, ""
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        line = "".join(c if c.isprintable() else "?" for c in " ".join(data["message"].split()))
        if len(line) > MAX_MESSAGE:
            line = line[: MAX_MESSAGE - 3] + "..."
        return line, str(data.get("reason", ""))[:64]
    return fallback, ""


# what OpenSSL's text says of an untrusted server certificate, and how we say it (REST and exec)
UNTRUSTED_MARKER = "CERTIFICATE_VERIFY_FAILED"
UNTRUSTED_REASON = (
    "the server's certificate is not trusted by the kubeconfig's CA (certificate verify failed)"
)


def tls_reason(text: str) -> str:
    """Why the handshake failed: OpenSSL says "Hostname mismatch" / "IP address mismatch" when
    the certificate is trusted but names another server (a wrong `tls-server-name`, or a server
    URL the certificate does not list), which a CA fix would not cure."""
    if "mismatch" in text:
        return (
            "the server's certificate does not name the server (hostname mismatch); set the "
            "cluster's tls-server-name to a name the certificate lists, or use that name in the URL"
        )
    return UNTRUSTED_REASON


def _tls_reason(e: Exception) -> str:
    return tls_reason(str(e)) if UNTRUSTED_MARKER in str(e) else type(e).__name__


def retry_after(resp: httpx.Response) -> float | None:
    """The server's Retry-After in seconds, when it is a sane number."""
    v = resp.headers.get("Retry-After")
    try:
        seconds = float(v) if v is not None else None
    except ValueError:
        return None  # an HTTP date or garbage: fall back to our own backoff
    return seconds if seconds is not None and math.isfinite(seconds) and 0 <= seconds <= 600 else None


class _NoConnection(retry.Transient):
    """No connection to the API server at all (refused, no route, connect timeout): when the
    deadline ends this, the server was unreachable (exit 3), not slow (exit 4)."""


def check_response(resp: httpx.Response, *, credential: str = "") -> None:
    """Raise for an error answer: `retry.Transient` when asking again may help, else the
    status-specific error. The one place an answer's status is turned into an exception.
    `credential` says where the refused credential came from (a bare "Unauthorized" does not)."""
    if resp.status_code < 400:
        return
    msg, reason = status_message(resp.content, f"HTTP {resp.status_code}")
    if resp.status_code == 401 and credential:
        msg = f"{msg} (HTTP 401): the cluster did not accept {credential}"
    if retry.retryable(resp.status_code, msg):
        raise retry.Transient(f"{msg} (HTTP {resp.status_code})", retry_after=retry_after(resp))
    raise errors.api_error(status=resp.status_code, message=msg, reason=reason)


class Api:
    """REST calls with the one retry policy and the run's deadline."""

    def __init__(self, conn: Connection, deadline: retry.Deadline) -> None:
        self.conn = conn
        self.deadline = deadline

    def _once(self, method: str, path: str, *, limit: int | None = None, **kw: Any) -> Any:
        """One call; its answer as JSON, or with `limit` as text of at most `limit` bytes."""
        if self.deadline.cancelled:
            raise errors.Cancelled("cancelled")
        timeout = min(30.0, max(self.deadline.remaining(), 0.1))
        try:
            if limit is not None:
                return self._text(method, path, limit=limit, timeout=timeout, **kw)
            resp = self.conn.http.request(method, path, timeout=timeout, **kw)
        except httpx.TransportError as e:
            if UNTRUSTED_MARKER in str(e) or isinstance(e, httpx.UnsupportedProtocol):
                # retrying cannot fix a certificate or a URL: say so at once
                raise errors.Unreachable(f"cannot connect to {self.conn.host}: {_tls_reason(e)}") from None
            fault = (
                _NoConnection if isinstance(e, httpx.ConnectError | httpx.ConnectTimeout) else retry.Transient
            )
            raise fault(f"cannot reach the API server at {self.conn.host}: {type(e).__name__}") from None
        check_response(resp, credential=self.conn.credential)
        return resp.json()

    def _text(self, method: str, path: str, *, limit: int, timeout: float, **kw: Any) -> str:
        """A text answer (a container's log), read up to `limit` bytes: a body is bounded."""
        with self.conn.http.stream(method, path, timeout=timeout, **kw) as resp:
            if resp.status_code >= 400:
                resp.read()
                check_response(resp, credential=self.conn.credential)
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) >= limit:
                    break
        return bytes(body[:limit]).decode("utf-8", "replace")

    def request(self, method: str, path: str, **kw: Any) -> Any:
        try:
            return retry.call(lambda: self._once(method, path, **kw), deadline=self.deadline)
        except retry.Transient as e:
            if self.deadline.cancelled:
                raise errors.Cancelled("cancelled") from None
            if self.deadline.expired and not isinstance(e, _NoConnection):
                raise errors.DeadlineExceeded(
                    f"--timeout ran out while the API server did not answer ({e})"
                ) from None
            raise errors.Unavailable(f"{e} (gave up at the deadline)") from None

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None)

    def text(self, path: str, *, limit: int, **params: Any) -> str:
        """A GET whose answer is text (pods/log), at most `limit` bytes of it."""
        text: str = self.request("GET", path, params=params or None, limit=limit)
        return text

    def post(self, path: str, body: Any) -> Any:
        """A create that stores nothing (a review): not a write to the workloads."""
        headers = {"Content-Type": "application/json"}
        return self.request("POST", path, content=json.dumps(body), headers=headers)

    def patch(self, path: str, body: Any, content_type: str) -> Any:
        """A write: never started once the run is cancelled (see retry.Cancel)."""
        cancel = self.deadline.cancel
        if cancel is not None and not cancel.begin_write():
            raise errors.Cancelled("cancelled before the restart was sent")
        return self.request("PATCH", path, content=json.dumps(body), headers={"Content-Type": content_type})

    @contextmanager
    def watch(self, path: str, **params: Any) -> Iterator[Iterator[dict[str, Any]]]:
        """A watch stream as decoded events; transport errors end it (the caller resumes)."""
        if self.deadline.cancelled:
            raise errors.Cancelled("cancelled")
        # a silent stream (no events, no bookmarks) ends at most 1 s past the deadline
        read = max(self.deadline.remaining(), 0.1) + 1
        try:
            with self.conn.watch_http.stream(
                "GET",
                path,
                params={**params, "watch": "true"},
                timeout=httpx.Timeout(30.0, read=read),
            ) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    check_response(resp, credential=self.conn.credential)
                yield _events(resp)
        except httpx.TransportError as e:
            raise retry.Transient(f"watch interrupted: {type(e).__name__}") from None


def _events(resp: httpx.Response) -> Iterator[dict[str, Any]]:
    try:
        for line in resp.iter_lines():
            if line.strip():
                yield json.loads(line)
    except (httpx.TransportError, httpx.StreamError):
        return
