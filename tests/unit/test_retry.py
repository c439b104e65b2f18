"""The one retry policy: what is asked again (and for how long), what never is."""

from __future__ import annotations

import itertools
import json
import time

import pytest

from verify.kube import retry
from verify.kube.refusal import classify_handshake, handshake_retry, status_error

RBAC = (
    'deployments.apps "web" is forbidden: User "system:serviceaccount:ci:deployer" cannot patch resource '
    '"deployments" in API group "apps" in the namespace "prod"'
)


@pytest.mark.parametrize(
    "message",
    [
        'deployments.apps "web" is forbidden: not yet ready to handle request',  # NamespaceLifecycle on update
        'pods "web-1" is forbidden: not yet ready to handle request',  # admission webhooks on CONNECT (exec)
        "forbidden: not yet ready to handle request",
    ],
)
def test_the_warming_up_apiservers_403_is_transient(message: str) -> None:
    assert retry.transient_forbidden(message)
    assert retry.retryable(403, message)


@pytest.mark.parametrize(
    "message",
    [
        RBAC,
        RBAC + ': RBAC: role.rbac.authorization.k8s.io "deployer" not found',
        RBAC + ": not yet ready to handle request",  # an RBAC denial stays one, whatever follows
        'pods "x" is forbidden: unable to create new content in namespace prod because it is being terminated',
        "",
    ],
)
def test_authorization_denials_and_other_403s_are_final(message: str) -> None:
    assert not retry.retryable(403, message)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (500, True),
        (502, True),
        (503, True),
        (504, True),
        (429, True),
        (400, False),
        (401, False),
        (404, False),
        (409, False),
        (410, False),
        (422, False),
    ],
)
def test_status_codes(status: int, expected: bool) -> None:
    assert retry.retryable(status, "the server is currently unable to handle the request") is expected


def test_call_retries_transient_failures_until_one_succeeds() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise retry.Transient("503")
        return "ok"

    assert retry.call(flaky, deadline=retry.Deadline(10), base=0.01, cap=0.02) == "ok"
    assert len(calls) == 3


def test_call_gives_up_at_the_deadline_and_never_waits_past_it() -> None:
    calls = []

    def down() -> None:
        calls.append(1)
        raise retry.Transient("429", retry_after=30)  # a hint longer than the run has left

    t0 = time.monotonic()
    with pytest.raises(retry.Transient):
        retry.call(down, deadline=retry.Deadline(0.5), base=0.01, cap=0.02)
    assert 0.45 < time.monotonic() - t0 < 1.5  # waited what was left, then gave up
    assert len(calls) == 1  # the (clamped) wait ended at the deadline: no request past it


def test_backoff_waits_grow_honour_retry_after_and_start_over_after_progress() -> None:
    waits: list[float] = []
    pause = retry.Backoff(deadline=retry.Deadline(60), base=0.001, cap=0.004)
    real_sleep = time.sleep
    try:
        time.sleep = waits.append  # type: ignore[assignment]
        for _ in range(4):
            pause.sleep(retry.Transient("503"))
        pause.sleep(retry.Transient("429", retry_after=0.25))
        pause.reset()
        pause.sleep(retry.Transient("503"))
    finally:
        time.sleep = real_sleep
    floor = (retry.MIN_PAUSE, retry.MIN_PAUSE + retry.MIN_PAUSE_JITTER)
    # the computed waits (at most 4 ms here) are raised to the jittered minimum pause
    assert all(floor[0] <= w <= floor[1] for w in waits[:4]) and waits[4] == 0.25
    assert floor[0] <= waits[5] <= floor[1]  # the first wait again
    assert len(set(waits[:4])) > 1  # jittered, not one fixed pause


def test_retry_after_zero_still_pauses_at_least_the_minimum() -> None:
    waits: list[float] = []
    pause = retry.Backoff(deadline=retry.Deadline(60))
    real_sleep = time.sleep
    try:
        time.sleep = waits.append  # type: ignore[assignment]
        for _ in range(20):
            pause.sleep(retry.Transient("429", retry_after=0))
    finally:
        time.sleep = real_sleep
    assert min(waits) >= retry.MIN_PAUSE and max(waits) <= retry.MIN_PAUSE + retry.MIN_PAUSE_JITTER


def test_call_asks_at_most_once_per_minimum_pause_and_never_after_the_deadline() -> None:
    calls: list[float] = []

    def down() -> None:
        calls.append(time.monotonic())
        raise retry.Transient("429", retry_after=0)

    deadline = retry.Deadline(0.55)
    with pytest.raises(retry.Transient):
        retry.call(down, deadline=deadline)
    gaps = [b - a for a, b in itertools.pairwise(calls)]
    assert len(calls) <= 6 and min(gaps) >= retry.MIN_PAUSE * 0.95
    assert calls[-1] <= deadline.end


def test_backoff_never_waits_past_the_deadline() -> None:
    pause = retry.Backoff(deadline=retry.Deadline(0.2))
    t0 = time.monotonic()
    pause.sleep(retry.Transient("429", retry_after=30))
    assert time.monotonic() - t0 < 0.5


def test_call_does_not_retry_other_errors() -> None:
    calls = []

    def broken() -> None:
        calls.append(1)
        raise ValueError("404")

    with pytest.raises(ValueError):
        retry.call(broken, deadline=retry.Deadline(5), base=0.01)
    assert len(calls) == 1


def _handshake(code: int, reason: str, message: str, headers: str = "", *, as_bytes: bool = False) -> str:
    """websocket-client's handshake error text: status, headers, body (its text since 1.9, its
    bytes' repr before)."""
    body = json.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code},
        ensure_ascii=False,
    )
    shown = repr(body.encode()) if as_bytes else body
    return f"Handshake status {code} {reason} -+-+- {{'content-type': 'application/json'{headers}}} -+-+- {shown}"


def test_refused_exec_upgrades_follow_the_same_policy() -> None:
    assert handshake_retry(
        _handshake(503, "Service Unavailable", "the server is currently unable to handle the request")
    ) == (True, None)
    assert handshake_retry(_handshake(429, "Too Many Requests", "slow down", ", 'retry-after': '2'")) == (
        True,
        2.0,
    )
    assert handshake_retry(
        _handshake(403, "Forbidden", 'pods "p" is forbidden: not yet ready to handle request')
    )[0]
    assert handshake_retry("[Errno 111] Connection refused")[0]  # no answer at all
    # states and decisions are final: asking again cannot change them
    assert not handshake_retry(_handshake(500, "Internal Server Error", 'container not found ("app")'))[0]
    assert not handshake_retry(_handshake(403, "Forbidden", RBAC.replace("patch", "create")))[0]
    assert not handshake_retry(_handshake(404, "Not Found", 'pods "p" not found'))[0]
    assert not handshake_retry(_handshake(400, "Bad Request", "container c is not valid for pod p"))[0]


def test_a_refused_exec_is_reported_by_its_status_message_never_headers_or_body() -> None:
    text = _handshake(
        502,
        "Bad Gateway",
        "error dialing backend: dial tcp 10.0.0.7:10250: connect: connection refused",
        ", 'set-cookie': 'session=topsecret-cookie-value'",
    )
    err = classify_handshake(text, namespace="ns", pod="p", container="c")
    assert (
        err.reason
        == "exec failed: the API server could not reach the kubelet (HTTP 502): error dialing backend: dial tcp "
        "10.0.0.7:10250: connect: connection refused"
    )
    assert "topsecret" not in err.reason and "Handshake" not in err.reason


@pytest.mark.parametrize(
    ("code", "message", "verdict", "permanent", "reason"),
    [
        (
            403,
            'pods "p" is forbidden: User "ci" cannot create resource "pods/exec" in API group ""',
            "forbidden",
            True,
            "exec forbidden for ci: missing RBAC rule `create pods/exec` in namespace ns",
        ),
        # a warming-up apiserver that never warmed up within the exec's budget: not an RBAC verdict
        (
            403,
            'pods "p" is forbidden: not yet ready to handle request',
            "exec_failed",
            False,
            "exec refused by the API server (HTTP 403): it was not ready to handle requests yet "
            '(pods "p" is forbidden: not yet ready to handle request)',
        ),
        # a policy engine's admission webhook: its own words, and no RBAC advice
        (
            403,
            'admission webhook "validate.kyverno.svc" denied the request: exec is not allowed',
            "forbidden",
            True,
            'exec refused by the API server (HTTP 403): admission webhook "validate.kyverno.svc" denied the '
            "request: exec is not allowed",
        ),
        (404, 'pods "p" not found', "pod_gone", False, "pod p no longer exists"),
        # a 404 from something in the way (a proxy without WebSocket support) is not a deleted pod,
        # and restarting the pods cannot change it
        (404, "404 page not found", "exec_failed", True, "exec refused by the API server (HTTP 404): 404 page not found"),
        # the request itself refused: an expired token, a method, URL or headers a proxy refuses
        (400, "bad request", "exec_failed", True, "exec refused by the API server (HTTP 400): bad request"),
        (401, "Unauthorized", "exec_failed", True, "exec refused by the API server (HTTP 401): Unauthorized"),
        (405, "not allowed", "exec_failed", True, "exec refused by the API server (HTTP 405): not allowed"),
        (414, "URI Too Long", "exec_failed", True, "exec refused by the API server (HTTP 414): URI Too Long"),
        (431, "too large", "exec_failed", True, "exec refused by the API server (HTTP 431): too large"),
        # "not now": a restart is not the fix either, but the pods may be fine in a moment
        (429, "too many", "exec_failed", False, "exec refused by the API server (HTTP 429): too many"),
        (503, "unavailable", "exec_failed", False, "exec refused by the API server (HTTP 503): unavailable"),
    ],
)
def test_refused_execs_are_classified_by_who_refused_them(
    code: int, message: str, verdict: str, permanent: bool, reason: str
) -> None:
    err = classify_handshake(_handshake(code, "x", message), namespace="ns", pod="p", container="c")
    assert (err.code, err.permanent, err.reason) == (verdict, permanent, reason)


def test_the_kubelets_plain_text_refusal_passed_through_on_v4_is_a_container_not_running() -> None:
    for body in ('container not found ("app")', repr(b'container not found ("app")')):
        text = (
            f"Handshake status 500 Internal Server Error -+-+- {{'content-type': 'text/plain'}} -+-+- {body}"
        )
        assert handshake_retry(text) == (False, None)  # a state, not a fault
        err = classify_handshake(text, namespace="ns", pod="p", container="app")
        assert (err.code, err.reason) == ("not_running", "container app is not running")


def test_a_refusal_without_a_body_says_only_its_status() -> None:
    text = "Handshake status 502 Bad Gateway -+-+- {'content-length': '0'} -+-+- None"
    err = classify_handshake(text, namespace="ns", pod="p", container="c")
    assert err.reason == "exec refused by a proxy in front of the API server (HTTP 502)"


def test_an_untrusted_certificate_on_exec_is_final_and_said_plainly() -> None:
    text = "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate (_ssl.c:1006)"
    assert handshake_retry(text) == (False, None)
    err = classify_handshake(text, namespace="ns", pod="p", container="c")
    assert err.permanent and "certificate is not trusted by the kubeconfig's CA" in err.reason


def test_a_refusal_message_is_one_printable_line_with_its_utf8_kept() -> None:
    err = classify_handshake(
        _handshake(502, "x", "Knoten nicht erreichbar\n\u001b[31mrot\u001b[0m"),
        namespace="n",
        pod="p",
        container="c",
    )
    assert err.reason == "exec refused by the API server (HTTP 502): Knoten nicht erreichbar \\x1b[31mrot\\x1b[0m"
    for as_bytes in (False, True):
        text = _handshake(502, "x", 'Verbindung "verweigert": Größe', as_bytes=as_bytes)
        err = classify_handshake(text, namespace="n", pod="p", container="c")
        assert err.reason == 'exec refused by the API server (HTTP 502): Verbindung "verweigert": Größe'
        assert classify_handshake(
            _handshake(
                403,
                "x",
                'pods "p" is forbidden: User "ci" cannot create resource "pods/exec"',
                as_bytes=as_bytes,
            ),
            namespace="n",
            pod="p",
            container="c",
        ).reason.startswith("exec forbidden for ci:")


def test_an_api_error_is_its_status_message_cut_to_one_line_never_the_body() -> None:
    from verify.kube.api import MAX_MESSAGE, status_message

    body = json.dumps(
        {
            "kind": "Status",
            "message": "line one\nline two\x1b[31m " + "x" * 5000,
            "reason": "Invalid",
            "details": {"causes": [{"message": "the-whole-object-and-its-secret-data"}]},
        }
    )
    msg, reason = status_message(body, "HTTP 422")
    assert msg.startswith("line one line two?[31m x") and msg.endswith("...") and len(msg) == MAX_MESSAGE
    assert "secret-data" not in msg and reason == "Invalid"
    assert status_message(b"<html>proxy error: token=abc</html>", "HTTP 502") == ("HTTP 502", "")



NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
    "</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)


@pytest.mark.parametrize(
    ("text", "permanent", "again", "reason"),
    [
        # a proxy's own error page: no Status, markup never shown
        (
            f"Handshake status 502 Bad Gateway -+-+- {{'content-type': 'text/html'}} -+-+- {NGINX_502}",
            False,
            True,
            "exec refused by a proxy in front of the API server (HTTP 502, an HTML page)",
        ),
        (
            "Handshake status 408 Request Time-out -+-+- {'content-type': 'text/html'} -+-+- <html>408</html>",
            False,
            False,
            "exec refused by a proxy in front of the API server (HTTP 408, an HTML page)",
        ),
        # Envoy's plain text 503
        (
            "Handshake status 503 Service Unavailable -+-+- {} -+-+- upstream connect error or disconnect/reset "
            "before headers. reset reason: connection failure",
            False,
            True,
            "exec refused by a proxy in front of the API server (HTTP 503): upstream connect error or "
            "disconnect/reset before headers. reset reason: connection failure",
        ),
        # the kubelet's streaming.WriteError, passed through by the API server (v4)
        (
            "Handshake status 429 Too Many Requests -+-+- {'retry-after': '60'} -+-+- rpc error: code = "
            "ResourceExhausted desc = maximum number of in-flight requests exceeded",
            False,
            True,
            "exec refused by the kubelet (HTTP 429): rpc error: code = ResourceExhausted desc = maximum "
            "number of in-flight requests exceeded",
        ),
        # an upgrade a proxy answered as a plain GET: no WebSocket will ever come back through it
        (
            "Handshake status 200 OK -+-+- {'content-type': 'text/html'} -+-+- <html>login</html>",
            True,
            False,
            "the exec's WebSocket upgrade failed: a proxy in front of the API server answered HTTP 200 "
            "instead of 101 Switching Protocols (it does not pass WebSocket upgrades)",
        ),
        # a 101 whose Sec-WebSocket-Accept is wrong (websocket-client's words)
        (
            "Invalid WebSocket Header",
            False,
            True,
            "the exec's WebSocket upgrade failed: the answer to the upgrade was no valid WebSocket handshake",
        ),
    ],
)
def test_a_refusal_names_who_refused_and_the_status(
    text: str, permanent: bool, again: bool, reason: str
) -> None:
    err = classify_handshake(text, namespace="ns", pod="p", container="c")
    assert (err.reason, err.permanent, err.code) == (reason, permanent, "exec_failed")
    assert handshake_retry(text)[0] is again
    assert "<" not in err.reason


def test_the_kubelets_refusal_through_the_stream_translator_names_the_kubelet() -> None:
    # apiserver >= 1.30 with v5: upgraded, then the kubelet's refusal as an InternalError Status
    cause = "unable to upgrade connection: rpc error: code = Unknown desc = the runtime is busy"
    status = {"status": "Failure", "reason": "InternalError", "code": 500, "message": f"Internal error occurred: {cause}"}
    err = status_error(status, container="app")
    assert err is not None and not err.permanent
    assert err.reason == "exec refused by the kubelet (HTTP 500): rpc error: code = Unknown desc = the runtime is busy"


def test_a_refused_connection_is_said_in_the_operating_systems_words_never_the_exceptions_text() -> None:
    import httpx

    from verify.kube.api import connect_reason

    with pytest.raises(httpx.ConnectError) as refused:
        httpx.get("https://admin:pw-in-url@127.0.0.1:1/api", timeout=2)  # nothing listens on port 1
    assert connect_reason(refused.value) == "connection refused"
    # no OSError under it: its type, never its text
    assert connect_reason(httpx.ConnectError("https://admin:pw-in-url@host")) == "ConnectError"
