"""The connection path, step by step: lists paginated as kubectl reads them, answers bounded by
the caller's end whatever the server trickles, a credential's origin and expiry said when it is
refused, a token that no header can carry refused by its source, a proxy named without its
password. Servers are loopback ones through real sockets (tests/support/hostile.py)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support import hostile
from verify import errors
from verify.errors import KubeConfigError
from verify.kube import credentials, loading, transport
from verify.kube.api import Api
from verify.kube.connection import connect
from verify.kube.exec import Exec
from verify.kube.retry import Deadline


def _pages(total: int, *, expire_continue: bool = False) -> Callable[[hostile.Request], hostile.Answer]:
    """A pods list of `total` items served as the API server pages it (`limit`, `continue`); with
    `expire_continue`, the first continue token is answered 410 as after an etcd compaction."""
    expired = [False]

    def route(request: hostile.Request) -> hostile.Answer:
        query = {k: v[0] for k, v in parse_qs(urlsplit(request.target).query).items()}
        start = int(query.get("continue", "0") or 0)
        if start and expire_continue and not expired[0]:
            expired[0] = True
            gone = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "Expired",
                "code": 410,
            }
            return hostile.json_answer({**gone, "message": "continue too old"}, status="410 Gone")
        limit = int(query.get("limit", "0") or 0) or total
        items = [{"metadata": {"name": f"p{i}"}} for i in range(start, min(total, start + limit))]
        more = start + limit < total
        meta = {"resourceVersion": "9", **({"continue": str(start + limit)} if more else {})}
        return hostile.json_answer({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items})

    return route


def _api(server: hostile.HostileApi, tmp_path: Path, seconds: float = 20) -> Api:
    conn = connect(kubeconfig=server.kubeconfig(tmp_path / "kc"), context=None, environ={})
    return Api(conn, Deadline(seconds))


def test_a_list_is_read_in_pages_of_500_as_kubectl_reads_it(tmp_path: Path) -> None:
    with hostile.HostileApi(_pages(1201)) as server:
        items = _api(server, tmp_path).list("/api/v1/namespaces/default/pods", labelSelector="app=web")
        asked = [parse_qs(urlsplit(r.target).query) for r in server.requests]
    assert [i["metadata"]["name"] for i in items] == [f"p{i}" for i in range(1201)]
    assert [q["limit"] for q in asked] == [["500"]] * 3
    assert [q.get("continue") for q in asked] == [None, ["500"], ["1000"]]
    assert all(q["labelSelector"] == ["app=web"] for q in asked)


def test_an_expired_continue_token_reads_the_list_again_whole_as_client_gos_pager(tmp_path: Path) -> None:
    with hostile.HostileApi(_pages(700, expire_continue=True)) as server:
        items = _api(server, tmp_path).list("/api/v1/namespaces/default/pods")
        asked = [parse_qs(urlsplit(r.target).query) for r in server.requests]
    assert len(items) == 700 and len({i["metadata"]["name"] for i in items}) == 700
    assert asked[-1].get("limit") is None and asked[-1].get("continue") is None  # the full list


def test_a_trickled_answer_ends_with_the_run_deadline_not_the_idle_timeout(tmp_path: Path) -> None:
    with hostile.HostileApi(hostile.trickled(hostile.api, where="body", pace=0.05)) as server:
        api = _api(server, tmp_path, seconds=1.0)
        started = time.monotonic()
        with pytest.raises(errors.DeadlineExceeded) as e:
            api.get("/apis/apps/v1/namespaces/default/deployments/web")
        took = time.monotonic() - started
    assert took < 1.0 + 2, took  # the deadline, then the last read's return
    assert "did not finish its answer in time" in str(e.value)


def _busy_once_then_trickled() -> Callable[[hostile.Request], hostile.Answer]:
    """REST calls: the first refused as a throttled apiserver refuses it (503, its Status), every
    later one answered with a body a byte at a time, never to its end."""
    calls = [0]
    trickled = hostile.trickled(hostile.api, where="body", pace=0.05)

    def route(request: hostile.Request) -> hostile.Answer:
        calls[0] += 1
        if calls[0] == 1:
            status = {"kind": "Status", "status": "Failure", "code": 503, "message": "the server is busy"}
            return hostile.json_answer(status, status="503 Service Unavailable")
        return trickled(request)

    return route


def test_a_rest_call_cut_by_the_deadline_while_asking_again_keeps_the_refusal_it_was_asked_again_for(
    tmp_path: Path,
) -> None:
    """The retry after a 503 starts with what the backoff left of --timeout and is cut at its end
    (kube.transport): its verdict is the 503 it was asked again for, as for an exec (kube.exec),
    not the cut read's "did not finish its answer in time" (a trickle alone still says that:
    test_a_trickled_answer_ends_with_the_run_deadline_not_the_idle_timeout)."""
    with hostile.HostileApi(_busy_once_then_trickled()) as server:
        api = _api(server, tmp_path, seconds=1.5)
        with pytest.raises(errors.DeadlineExceeded) as e:
            api.get("/apis/apps/v1/namespaces/default/deployments/web")
        asked = len(server.requests)
    assert asked >= 2  # asked again, and that attempt was cut
    assert "the server is busy (HTTP 503)" in str(e.value), e.value
    assert "did not finish its answer in time" not in str(e.value)


def test_bounded_cuts_every_read_to_the_callers_end_and_the_earlier_end_wins() -> None:
    with transport.bounded(time.monotonic() - 1), pytest.raises(TimeoutError):
        transport._left(30.0, TimeoutError)
    with transport.bounded(time.monotonic() + 100), transport.bounded(time.monotonic() + 1):
        left = transport._left(30.0, TimeoutError)
        assert left is not None and left <= 1
    assert transport._left(30.0, TimeoutError) == 30.0  # outside: the operation's own timeout


def _refused_once_then_trickled() -> Callable[[hostile.Request], hostile.Answer]:
    """Exec upgrades: the first refused as a throttled apiserver refuses it (503, its Status),
    every later one answered a byte at a time, never to the end of its head."""
    execs = [0]

    def route(request: hostile.Request) -> hostile.Answer:
        if not request.path.endswith("/exec"):
            return hostile.api(request)
        execs[0] += 1
        if execs[0] == 1:
            status = {"kind": "Status", "status": "Failure", "code": 503, "message": "the server is busy"}
            return hostile.json_answer(status, status="503 Service Unavailable")
        return hostile.Answer(status="503 Service Unavailable", head_pace=0.05)

    return route


@pytest.mark.parametrize("refused_first", [True, False], ids=["refused-then-cut", "never-answered"])
def test_an_exec_cut_by_its_budget_while_asking_again_keeps_the_refusal_it_was_asked_again_for(
    tmp_path: Path, refused_first: bool
) -> None:
    """The attempt after a refusal starts with what the backoff left of the budget and is cut at
    its end (kube.transport): that is no server that never answered. Only an exec whose every
    attempt went unanswered says so."""
    route = _refused_once_then_trickled() if refused_first else hostile.trickled(hostile.api, where="head")
    with hostile.HostileApi(route) as server:
        conn = connect(kubeconfig=server.kubeconfig(tmp_path / "kc"), context=None, environ={})
        result = Exec(transport=conn.transport, credentials=conn.credentials).run(
            namespace="default", pod="web-1", container="app", argv=["true"], limit=2.0
        )
        execs = sum(r.path.endswith("/exec") for r in server.requests)
    assert result.error is not None
    if refused_first:
        assert execs >= 2  # asked again, and that attempt was cut
        assert (result.error.code, result.error.reason) == (
            "exec_failed",
            "exec refused by the API server (HTTP 503): the server is busy",
        )
    else:
        assert (result.error.code, result.error.reason) == (
            "timeout",
            "exec did not finish within 2s (timed out: the API server never answered)",
        )


def test_a_proxy_refusal_names_the_proxy_and_never_its_password() -> None:
    said = transport.proxy_refusal(
        "http://ci:hunter2-pw@proxy.corp:3128", "407 Proxy Authentication Required"
    )
    assert said.startswith("the proxy http://proxy.corp:3128 refused to connect to the API server (407 ")
    assert "hunter2" not in said and "ci:" not in said
    assert "it wants credentials" in transport.proxy_refusal("http://proxy.corp:3128", "407 Proxy Auth")


def _jwt(claims: dict[str, object]) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.sig"


def test_only_a_jwts_exp_is_read_of_a_token() -> None:
    assert credentials.jwt_expiry(_jwt({"exp": 1893456000, "sub": "x"})) == dt.datetime(
        2030, 1, 1, tzinfo=dt.UTC
    )
    for token in ("opaque-token", _jwt({"sub": "x"}), _jwt({"exp": "soon"}), _jwt({"exp": True}), "a.!!!.c"):
        assert credentials.jwt_expiry(token) is None, token


@pytest.mark.parametrize(
    ("token", "what"), [("a\r\nb", "a line break"), ("a\x1b[31mb", "a control character")]
)
def test_a_token_no_header_can_carry_is_refused_naming_its_source(token: str, what: str) -> None:
    with pytest.raises(KubeConfigError) as e:
        credentials.checked_token(token, source='kubeconfig user "ci" (file "/k") token')
    assert str(e.value).startswith(f'kubeconfig user "ci" (file "/k") token: the token holds {what}')
    assert "\r" not in str(e.value) and "\x1b" not in str(e.value)


def test_a_token_file_is_trimmed_as_client_go_trims_it_and_named_when_refused(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("  file-token-value\n")
    doc = {
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"tokenFile": str(tmp_path / "tok")}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    selection = loading.select_context(doc, context=None, user_files={"u": "/home/ci/.kube/config"})
    from verify.kube import endpoint

    who = credentials.resolve(
        selection, endpoint=endpoint.resolve(selection, environ={}), timeout=5, environ={}
    )
    assert who.authorization() == "Bearer file-token-value"
    assert who.refused() == (
        f'the cluster did not accept the token in {tmp_path / "tok"} (kubeconfig user "u" (file '
        f'"/home/ci/.kube/config") tokenFile); renew the token in {tmp_path / "tok"}'
    )


def test_an_expired_token_says_when_it_expired() -> None:
    past = _jwt({"exp": int(time.time()) - 2 * 86400 - 30})
    who = credentials.Credentials(origin="the token of X", fix="renew it", read=lambda: f"Bearer {past}")
    who.authorization()
    assert who.refused().startswith("the cluster did not accept the token of X; it expired ")
    assert who.refused().endswith(" UTC (2 d ago); renew it")


STEPS = ("connection", "loading", "endpoint", "credentials", "transport")


def test_the_connection_path_visits_each_step_once_in_order(tmp_path: Path) -> None:
    """kubeconfig -> endpoint -> credentials -> transport, each step entered once and never again
    after the next began (the path used to go back to connection.py seven times and to loading.py
    five): the modules whose functions run during `connect`, in the order they run."""
    path = hostile.kubeconfig(tmp_path / "kc", server="http://127.0.0.1:9", user={"token": "path-test-token"})
    entered: list[str] = []

    def trace(frame: FrameType, event: str, arg: object) -> None:  # function entries only
        module = str(frame.f_globals.get("__name__", ""))
        step = module.rpartition(".")[2] if module.startswith("verify.kube.") else ""
        if step in STEPS and (not entered or entered[-1] != step):
            entered.append(step)

    sys.settrace(trace)
    try:
        conn = connect(kubeconfig=path, context=None, environ={})
    finally:
        sys.settrace(None)
    conn.close()
    # connect() calls each step in turn, then builds the Connection
    assert entered == ["connection", "loading", "endpoint", "credentials", "transport", "connection"], entered
