"""The exec transport: one WebSocket exec (kube.stream) per command, bounded in time, its refused
upgrades asked again while asking again can help (kube.refusal says what a refusal means).

The channels of the exec protocol: 1 stdout, 2 stderr, 3 the error channel (a Status when the
command ended)."""

from __future__ import annotations

import contextlib
import functools
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from verify.findings import Uninspectable
from verify.kube import retry
from verify.kube.credentials import Credentials
from verify.kube.daemons import Daemons
from verify.kube.refusal import classify_handshake, handshake_retry, status_error
from verify.kube.retry import Deadline
from verify.kube.stream import ERROR, STDERR, STDOUT, ExecStream, HandshakeFailed, Unanswered
from verify.kube.transport import ProxyRefused, Transport, bounded

# how long past its budget an exec's thread is waited for before it is given up (its own reads
# end at the budget; this only catches a call that has no timeout at all)
_GIVE_UP_GRACE = 1.0


class _Refused(retry.Transient):
    """A refused exec upgrade being retried; `error` is the verdict if it never succeeds. `cut`:
    an upgrade the budget ended unanswered, which leaves an earlier refusal the verdict
    (retry.call)."""

    def __init__(self, error: Uninspectable, retry_after: float | None, *, cut: bool = False) -> None:
        super().__init__(error.reason, retry_after=retry_after, cut=cut)
        self.error = error


class _Final(Exception):
    """A refused exec upgrade that asking again cannot change."""

    def __init__(self, error: Uninspectable) -> None:
        super().__init__(error.reason)
        self.error = error


@functools.lru_cache(maxsize=16)
def _command_query(argv: tuple[str, ...]) -> str:
    """`command=` parameters as `ws_client.get_websocket_url` encodes them, once per argv: every
    container with the same expectations sends the same (kilobytes long) command."""
    return urlencode([("command", a) for a in argv])


def exec_query(argv: tuple[str, ...], container: str, *, stdin: bool = False) -> str:
    rest = [
        ("container", container),
        ("stderr", "true"),
        ("stdin", "true" if stdin else "false"),
        ("stdout", "true"),
        ("tty", "false"),
    ]
    return f"{_command_query(argv)}&{urlencode(rest)}"


@dataclass(frozen=True)
class ExecResult:
    """What one exec printed on stdout, or why it did not run to a successful end."""

    stdout: str = ""
    error: Uninspectable | None = None


def _unanswered(limit: float) -> Uninspectable:
    return Uninspectable(
        "timeout", f"exec did not finish within {limit:g}s (timed out: the API server never answered)", False
    )


def _failed(reason: str, code: Any = "exec_failed") -> ExecResult:
    return ExecResult(error=Uninspectable(code, reason, permanent=False))


class Exec:
    """Runs one command in one container over a WebSocket exec (kube.stream)."""

    def __init__(self, *, transport: Transport, credentials: Credentials) -> None:
        self.transport = transport
        self.credentials = credentials
        # each exec is bounded by running it on `Daemons` (see `run`), and each of its socket
        # operations by its budget (kube.transport)
        self._daemons = Daemons()

    def _open(self, *, namespace: str, pod: str, container: str, argv: list[str], stdin: bool) -> ExecStream:
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}/exec"
        return ExecStream(
            connected=self.transport.open_socket,
            url=f"{self.transport.host}{path}?{exec_query(tuple(argv), container, stdin=stdin)}",
            authorization=self.credentials.authorization(),
        )

    def run(
        self,
        *,
        namespace: str,
        pod: str,
        container: str,
        argv: list[str],
        limit: float,
        stdin: str | None = None,
    ) -> ExecResult:
        """Run `argv` within `limit` seconds, retries of a refused upgrade included; `stdin` is
        sent (UTF-8, binary frames on channel 0) once the stream is open.

        Every socket operation of the exec, the upgrade's answer included, ends with the budget
        (kube.transport), and the exec runs in a daemon thread that is given up a moment after it,
        so that no call the transport does not see (a bug, a C call) can hold the run."""
        budget = Deadline(limit)
        try:
            result = self._daemons.run(
                lambda: self._within(
                    budget,
                    namespace=namespace,
                    pod=pod,
                    container=container,
                    argv=argv,
                    limit=limit,
                    stdin=stdin,
                ),
                timeout=limit + _GIVE_UP_GRACE,
            )
        except Exception as e:  # a bug here is this container's verdict, never a hung run
            return _failed(f"exec failed: {type(e).__name__}")
        if result is not None:
            return result
        return ExecResult(error=_unanswered(limit))

    def _within(self, budget: Deadline, **kw: Any) -> ExecResult:
        """One exec, every socket operation of it ending with `budget`."""
        with bounded(time.monotonic() + budget.remaining()):
            return self._exec(budget, **kw)

    def _exec(
        self,
        budget: Deadline,
        *,
        namespace: str,
        pod: str,
        container: str,
        argv: list[str],
        limit: float,
        stdin: str | None,
    ) -> ExecResult:
        def open_once() -> ExecStream:
            try:
                return self._open(
                    namespace=namespace, pod=pod, container=container, argv=argv, stdin=stdin is not None
                )
            except ProxyRefused as e:  # the proxy's answer: asking again or a restart cannot change it
                raise _Final(Uninspectable("exec_failed", str(e), permanent=True)) from None
            except Unanswered:  # never answered, or cut at the budget's end (kube.transport) asking again
                raise _Refused(_unanswered(limit), None, cut=True) from None
            except HandshakeFailed as e:
                text = str(e)
                error = classify_handshake(text, namespace=namespace, pod=pod, container=container)
                again, hint = handshake_retry(text)
                if again:
                    raise _Refused(error, hint) from None
                raise _Final(error) from None

        try:
            ws = retry.call(open_once, deadline=budget, base=0.1, cap=2.0)
        except (_Refused, _Final) as e:  # refused for good, or still when the budget ran out
            return ExecResult(error=e.error)
        except Exception as e:
            return _failed(f"exec failed: {type(e).__name__}")
        try:
            left = budget.remaining()
            if left > 0 and stdin is not None:
                # bytes: a binary frame, as kubelets read channel 0 (a text frame would be refused)
                ws.write_stdin(stdin.encode("utf-8"))
            # every read, not only the wait for the first byte, ends with the budget
            if left <= 0 or not ws.read_until_closed(left):
                return _failed(f"exec did not finish within {limit:g}s (timed out)", "timeout")
            out = ws.channel(STDOUT)
            err_text = ws.channel(STDERR)
            raw_status = ws.channel(ERROR)
        except Exception as e:
            # a dropped or reset stream mid-exec is this container's verdict, not the run's crash
            return _failed(f"exec stream broke: {type(e).__name__}")
        finally:
            with contextlib.suppress(Exception):
                ws.close()
        try:
            status = (
                json.loads(raw_status) if raw_status else {"status": "Failure", "message": "no exec status"}
            )
        except ValueError:
            status = {"status": "Failure", "message": "unreadable exec status"}
        err = status_error(status, container=container)
        if err is not None:
            if err.code == "exec_failed" and err_text.strip():
                # the command's own shell errors (never env values: the probe prints none)
                first = "".join(c if c.isprintable() else "?" for c in err_text.strip().splitlines()[0][:160])
                err = Uninspectable(err.code, f"{err.reason}: {first}", err.permanent)
            return ExecResult(error=err)
        return ExecResult(stdout=out)
