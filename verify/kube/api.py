"""REST calls and watches with the one retry policy and the run's deadline.

Errors leave this module as the status-specific classes of `verify.errors`, carrying only the
Status `message`, never the raw response (headers and bodies may hold tokens)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from verify import errors
from verify.kube import retry, transport
from verify.redact import one_line, without_userinfo

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


def connect_reason(e: BaseException) -> str:
    """Why no connection was made, in the operating system's words (`connection refused`, `no
    route to host`, `name or service not known`) from the OSError under httpx's and httpcore's
    wrappers: never an exception's own text, which may quote the URL; its type when there is none."""
    cause: BaseException | None = e
    for _ in range(8):  # httpx wraps httpcore, which wraps the socket's OSError
        if cause is None:
            break
        if isinstance(cause, OSError) and cause.strerror:
            return one_line(cause.strerror).lower()
        cause = cause.__cause__ or cause.__context__
    return type(e).__name__


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


@dataclass(frozen=True)
class Answer:
    """An answer read whole (at most transport.MAX_BODY of it)."""

    status: int
    content_type: str
    retry_after: float | None
    body: bytes


def check_response(answer: Answer, *, refused: str = "", where: str = "") -> None:
    """Raise for an error answer: `retry.Transient` when asking again may help, else the
    status-specific error. The one place an answer's status is turned into an exception.
    `refused` says whose credential a 401 refused (kube.credentials: a bare "Unauthorized" does
    not); `where` names the server for an answer that is not the API's."""
    if answer.status < 400:
        return
    msg, reason = status_message(answer.body, f"HTTP {answer.status}")
    if answer.status == 401 and refused:
        msg = f"{msg} (HTTP 401): {refused}"
    if retry.retryable(answer.status, msg):
        raise retry.Transient(f"{msg} (HTTP {answer.status})", retry_after=answer.retry_after)
    if where and _not_json(answer.content_type):
        # a login page, a proxy's error page: never the API server's own refusal
        raise errors.BadAnswer(not_the_api(where, answer.content_type, status=answer.status))
    raise errors.api_error(status=answer.status, message=msg, reason=reason)


def _not_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return bool(kind) and not (kind == "application/json" or kind.endswith("+json"))


def not_the_api(where: str, content_type: str, *, status: int = 200) -> str:
    """The one line for an answer that is not the Kubernetes API's: an SSO proxy's login page, a
    captive portal, a web server at the wrong URL."""
    kind = content_type.split(";", 1)[0].strip().lower()
    said = f" (HTTP {status})" if status != 200 else ""
    if "html" in kind:
        return (
            f"{where} answered with an HTML page{said}, not the Kubernetes API (a login or proxy page?); "
            "check the kubeconfig's server URL and proxy"
        )
    shown = one_line(kind)[:60] or "no content type"
    return (
        f"{where} answered with {shown}{said}, not the Kubernetes API's JSON; check the kubeconfig's "
        "server URL and proxy"
    )


def read_body(resp: httpx.Response, *, what: str) -> bytes:
    """The body, refused once it passes transport.MAX_BODY (a Content-Length beyond it before any
    of it is read)."""
    declared = resp.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > transport.MAX_BODY:
        raise errors.BadAnswer(too_large(what))
    body = bytearray()
    for chunk in resp.iter_bytes():
        body += chunk
        if len(body) > transport.MAX_BODY:
            raise errors.BadAnswer(too_large(what))
    return bytes(body)


def _text(resp: httpx.Response, *, limit: int) -> str:
    """A text answer (a container's log), read up to `limit` bytes: a body is bounded."""
    body = bytearray()
    for chunk in resp.iter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit]).decode("utf-8", "replace")


def too_large(what: str) -> str:
    return (
        f"{what} is larger than {transport.MAX_BODY // (1024 * 1024)} MiB: refused (the largest answer "
        "rollout-verify reads; a proxy or server gone wrong?)"
    )


# kubectl's page size (`kubectl get --chunk-size`, default 500)
PAGE = 500


class Api:
    """REST calls with the one retry policy and the run's deadline."""

    def __init__(self, conn: Connection, deadline: retry.Deadline) -> None:
        self.conn = conn
        self.deadline = deadline

    def _once(self, method: str, path: str, *, limit: int | None = None, **kw: Any) -> tuple[Any, int]:
        """The decoded answer and its size in bytes; with `limit`, a text answer (a container's
        log) of at most `limit` bytes."""
        if self.deadline.cancelled:
            raise errors.Cancelled("cancelled")
        left = max(self.deadline.remaining(), 0.1)
        # idle: 30 s between two bytes; total: the run's deadline, however the bytes trickle
        timeout = httpx.Timeout(min(30.0, left), connect=min(10.0, left), pool=left)
        what = f"the answer of {self.conn.host} to {method} {path.split('?', 1)[0]}"
        try:
            with (
                transport.bounded(time.monotonic() + left),
                self.conn.http.stream(method, path, timeout=timeout, **kw) as resp,
            ):
                if limit is not None and resp.status_code < 400:
                    text = _text(resp, limit=limit)
                    return text, len(text)
                answer = Answer(
                    resp.status_code,
                    resp.headers.get("Content-Type", ""),
                    retry_after(resp),
                    read_body(resp, what=what),
                )
        except httpx.TransportError as e:
            raise self._fault(e) from None
        check_response(answer, refused=self.conn.credentials.refused(), where=self.conn.host)
        if _not_json(answer.content_type):
            raise errors.BadAnswer(not_the_api(self.conn.host, answer.content_type))
        try:
            return json.loads(answer.body), len(answer.body)
        except (ValueError, RecursionError):
            raise errors.BadAnswer(not_the_api(self.conn.host, "text/plain")) from None

    def _fault(self, e: httpx.TransportError) -> Exception:
        """What a transport error means: at once (a certificate, a URL, a proxy refusing) or worth
        asking again (no connection, a reset, a read that ran out of time)."""
        if UNTRUSTED_MARKER in str(e) or isinstance(e, httpx.UnsupportedProtocol):
            # retrying cannot fix a certificate or a URL: say so at once
            return errors.Unreachable(f"cannot connect to {self.conn.host}: {_tls_reason(e)}")
        if isinstance(e, httpx.ProxyError) and self.conn.endpoint.proxy:
            status = str(e)[:3]
            if status.isdigit() and 400 <= int(status) < 500:
                # 407 and other refusals: the proxy's own answer, which asking again cannot change
                return errors.Unreachable(transport.proxy_refusal(self.conn.endpoint.proxy, str(e)))
        if isinstance(e, httpx.LocalProtocolError):
            return errors.Unreachable(f"cannot send the request to {self.conn.host}: {type(e).__name__}")
        # a timeout at the deadline's end is kube.transport cutting the call there: no answer of
        # its own, so retry.call keeps the refusal an earlier attempt saw as the verdict
        cut = isinstance(e, httpx.TimeoutException) and self.deadline.expired
        if isinstance(e, httpx.ConnectError | httpx.ConnectTimeout):
            return _NoConnection(
                f"cannot reach the API server at {self.conn.host}: {connect_reason(e)}", cut=cut
            )
        if isinstance(e, httpx.ReadTimeout | httpx.WriteTimeout | httpx.PoolTimeout):
            proxy = self.conn.endpoint.proxy
            through = f" (through the proxy {without_userinfo(proxy)})" if proxy else ""
            return retry.Transient(
                f"the API server at {self.conn.host}{through} did not finish its answer in time", cut=cut
            )
        return retry.Transient(f"cannot reach the API server at {self.conn.host}: {type(e).__name__}")

    def request(self, method: str, path: str, **kw: Any) -> Any:
        return self._sized(method, path, **kw)[0]

    def _sized(self, method: str, path: str, **kw: Any) -> tuple[Any, int]:
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

    def list(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every item of a list, read as kubectl reads it: pages of PAGE items (`limit`, then each
        page's `continue`), their sizes together within transport.MAX_BODY. A continue token that
        expired (410) starts the list again without pages, as client-go's pager falls back
        (staging/src/k8s.io/client-go/tools/pager/pager.go `FullListIfExpired`)."""
        items: list[dict[str, Any]] = []
        token = ""
        paged = True
        read = 0
        while True:
            query = {**params, "limit": str(PAGE)} if paged else dict(params)
            if token:
                query["continue"] = token
            try:
                page, size = self._sized("GET", path, params=query)
            except errors.Expired:
                if not token:
                    raise
                items, token, paged, read = [], "", False, 0
                continue
            read += size
            if not isinstance(page, dict) or not isinstance(page.get("items") or [], list):
                raise errors.BadAnswer(not_the_api(self.conn.host, "application/json"))
            items.extend(page.get("items") or [])
            metadata = page.get("metadata")
            token = str(metadata.get("continue") or "") if paged and isinstance(metadata, dict) else ""
            if not token:
                return items
            if read > transport.MAX_BODY:
                raise errors.BadAnswer(too_large(f"the list {path} of {self.conn.host}"))

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
        # a silent or trickling stream ends at most 1 s past the deadline
        read = max(self.deadline.remaining(), 0.1) + 1
        try:
            with (
                transport.bounded(time.monotonic() + read),
                self.conn.watch_http.stream(
                    "GET",
                    path,
                    params={**params, "watch": "true"},
                    timeout=httpx.Timeout(30.0, read=read, connect=min(10.0, read), pool=read),
                ) as resp,
            ):
                content_type = resp.headers.get("Content-Type", "")
                if resp.status_code >= 400:
                    what = f"the answer of {self.conn.host} to a watch of {path}"
                    answer = Answer(
                        resp.status_code, content_type, retry_after(resp), read_body(resp, what=what)
                    )
                    check_response(answer, refused=self.conn.credentials.refused(), where=self.conn.host)
                elif _not_json(content_type):
                    raise errors.BadAnswer(not_the_api(self.conn.host, content_type))
                yield _events(resp, where=self.conn.host)
        except httpx.TransportError as e:
            fault = self._fault(e)
            if isinstance(fault, errors.VerifyError):
                raise fault from None
            raise retry.Transient(f"watch interrupted: {type(e).__name__}") from None


def _events(resp: httpx.Response, *, where: str) -> Iterator[dict[str, Any]]:
    """Each line of the stream as an event; a line longer than transport.MAX_BODY, or one that is
    not JSON, is refused (the stream is not the API's)."""
    pending = bytearray()
    try:
        for chunk in resp.iter_bytes():
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                line = bytes(pending[:end])
                del pending[: end + 1]
                if line.strip():
                    yield _event(line, where=where)
            if len(pending) > transport.MAX_BODY:
                raise errors.BadAnswer(too_large(f"a watch event from {where}"))
        if pending.strip():
            yield _event(bytes(pending), where=where)
    except (httpx.TransportError, httpx.StreamError):
        return


def _event(line: bytes, *, where: str) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        raise errors.BadAnswer(not_the_api(where, "text/plain")) from None
    if not isinstance(event, dict):
        raise errors.BadAnswer(not_the_api(where, "text/plain"))
    return event
