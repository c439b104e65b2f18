"""The deadline covers every byte (issue 29): a plugin's 20 MB stderr without a space, a server
trickling its headers, a body or a watch a byte at a time, a proxy trickling its CONNECT answer and
a 2 GiB list each end within --timeout + 2 s with one line, in under 200 MiB; SIGTERM in the middle
of any of them ends the run within 2 s with its reports written. Broken infrastructure (an SSO
login page, a proxy's 407, a token with a line break, a malformed or wrong ExecCredential) is
answered at once with its own line. Loopback servers and proxies (tests/support/hostile.py),
through real sockets; times are taken from the first byte the server or proxy saw (or the
plugin's own start), never from the interpreter's start on a loaded machine."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import hostile
from tests.support.helpers import REPO, Outcome, plant, run_verify

TIMEOUT = 2.0  # --timeout of the deadline runs: each must end within it + 2 s of its first byte
PEAK = (sys.executable, str(REPO / "bench" / "peak.py"))  # prints the run's own peak RSS on stderr
PROXY_PASSWORD = "proxy-password-7c1e9a"


@dataclass
class Setup:
    """One hostile situation, up: the run's kubeconfig and extra arguments, when its first byte
    was seen (monotonic), the exit code and the words of its one line."""

    kubeconfig: str
    args: tuple[str, ...]
    first_seen: Callable[[], float | None]
    code: int
    words: str
    env: dict[str, str]
    after: Callable[[], None] = lambda: None  # checks once the run has ended


def _plugin(tmp_path: Path, *, pace: float) -> tuple[Path, Path]:
    """A credential plugin that writes 20 MB without a space to stderr (a chunk each `pace`
    seconds) and fails; it notes its own start (monotonic) and pid."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    started = tmp_path / "plugin-started"
    plugin = bin_dir / "noisy-plugin"
    plugin.write_text(
        f"#!{sys.executable}\nimport os, sys, time\n"
        f"open({str(started)!r}, 'w').write(f'{{time.monotonic()}} {{os.getpid()}}')\n"
        "for _ in range(20):\n"
        "    sys.stderr.write('a' * 1_000_000); sys.stderr.flush()\n"
        f"    time.sleep({pace})\n"
        "sys.exit(1)\n"
    )
    plugin.chmod(0o755)
    return bin_dir, started


def _plugin_start(started: Path) -> float | None:
    try:
        return float(started.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


SCENARIOS = ("plugin-stderr", "headers", "body", "watch", "connect", "list-2gib")


@contextmanager
def situation(name: str, tmp_path: Path, *, slow: bool) -> Iterator[Setup]:
    """The scenario `name`; `slow` keeps it going long enough to be signalled in the middle."""
    with ExitStack() as stack:
        if name == "plugin-stderr":
            bin_dir, started = _plugin(tmp_path, pace=0.2 if slow else 0.0)
            api = stack.enter_context(hostile.HostileApi())
            user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "noisy-plugin"}}

            def plugin_gone() -> None:
                pid = int(started.read_text().split()[1])
                end = time.monotonic() + 5
                while (
                    Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid) and time.monotonic() < end
                ):
                    time.sleep(0.05)
                assert not Path(f"/proc/{pid}").exists() or "zombie" in _state(pid), (
                    "the plugin outlived the run"
                )
                assert api.requests == []

            yield Setup(
                api.kubeconfig(tmp_path / "kc", user=user),
                ("--deployment", "web"),
                lambda: _plugin_start(started),
                2,
                "kubeconfig exec plugin 'noisy-plugin' failed (exit 1)",
                {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
                plugin_gone,
            )
        elif name in ("headers", "body", "watch"):
            where = {"headers": "head", "body": "body", "watch": "watch"}[name]
            api = stack.enter_context(hostile.HostileApi(hostile.trickled(hostile.api, where=where)))
            words = (
                "timed out waiting for the rollout"
                if name == "watch"
                else "did not finish its answer in time"
            )
            yield Setup(
                api.kubeconfig(tmp_path / "kc"), ("--deployment", "web"), lambda: api.first_seen, 4, words, {}
            )
        elif name == "connect":
            proxy = stack.enter_context(hostile.HostileProxy(hostile.PROXY_OK, pace=0.05))
            path = hostile.kubeconfig(tmp_path / "kc", server=hostile.UNREACHED, proxy=proxy.url)
            yield Setup(path, ("--deployment", "web"), lambda: proxy.first_seen, 4, "through the proxy", {})
        else:
            size = 2 << 30
            route = hostile.huge_list(size=size, pace=0.05) if slow else hostile.huge_list(size=size)
            api = stack.enter_context(hostile.HostileApi(route))
            yield Setup(
                api.kubeconfig(tmp_path / "kc"),
                ("--selector", "app=web"),
                lambda: api.first_seen,
                3,
                "to GET /apis/apps/v1/namespaces/default/deployments is larger than 64 MiB: refused",
                {},
            )


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"  # gone


def _lines_with(out: Outcome, words: str) -> list[str]:
    return [ln for ln in (out.stdout + out.stderr).splitlines() if words in ln]


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_ends_within_the_timeout_and_2s_with_one_line_in_under_200_mib(
    tmp_path: Path, name: str
) -> None:
    with situation(name, tmp_path, slow=False) as s:
        out = run_verify(
            *s.args,
            "--timeout",
            f"{TIMEOUT:g}s",
            kubeconfig=s.kubeconfig,
            tmp_path=tmp_path,
            env=s.env,
            launcher=PEAK,
        )
        first = s.first_seen()
        assert first is not None, "the run never reached the hostile party"
        took = time.monotonic() - first
        s.after()
    rss_kib = int(out.stderr.rsplit("peak-rss-kib ", 1)[1])
    print(f"\n{name}: exit {out.code} {took:.2f}s after its first byte, peak RSS {rss_kib / 1024:.0f} MiB")
    assert out.code == s.code, out.everything
    assert took <= TIMEOUT + 2, took
    assert rss_kib < 200 * 1024, rss_kib
    assert len(_lines_with(out, s.words)) == 1, out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.everything
    assert out.report is not None and out.report["exit_code"] == s.code


@pytest.mark.parametrize("name", SCENARIOS)
def test_sigterm_in_the_middle_of_each_ends_the_run_within_2s_with_its_reports(
    tmp_path: Path, name: str
) -> None:
    with situation(name, tmp_path, slow=True) as s:

        def midway() -> bool:
            first = s.first_seen()
            return first is not None and time.monotonic() - first > 0.5

        out = run_verify(
            *s.args,
            "--timeout",
            "60s",
            kubeconfig=s.kubeconfig,
            tmp_path=tmp_path,
            env=s.env,
            signal_when=midway,
        )
        s.after()
    assert out.after_signal is not None and out.after_signal < 2, out.after_signal
    assert out.code == 143, out.everything
    assert "cancelled by SIGTERM" in out.stderr
    assert out.report is not None and out.report["exit_code"] == 143
    assert out.junit and out.summary  # every report asked for was written


# -- broken infrastructure, answered at once -------------------------------------------------------


def _exec_user(tmp_path: Path, printed: object) -> tuple[dict[str, object], dict[str, str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    plugin = bin_dir / "get-token"
    text = printed if isinstance(printed, str) else json.dumps(printed)
    plugin.write_text(f"#!{sys.executable}\nprint({text!r})\n")
    plugin.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "get-token"}}
    return user, {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_an_html_login_page_where_the_api_is_expected_is_exit_3_at_once(tmp_path: Path) -> None:
    with hostile.HostileApi(hostile.html) as api:
        out = run_verify("--deployment", "web", kubeconfig=api.kubeconfig(tmp_path / "kc"), tmp_path=tmp_path)
        took = api.since_first_byte()
        asked = len(api.requests)
    assert out.code == 3, out.everything
    assert took < 2, took
    line = f"{api.url} answered with an HTML page, not the Kubernetes API (a login or proxy page?)"
    assert len(_lines_with(out, line)) == 1, out.stderr
    assert "JSONDecodeError" not in out.everything and "Sign in" not in out.everything
    assert asked <= 2  # the one call, and the report's /version; never retried


def test_a_proxys_407_is_exit_3_at_once_naming_the_proxy_never_its_password(tmp_path: Path) -> None:
    plant(PROXY_PASSWORD)
    with hostile.HostileProxy(hostile.PROXY_AUTH) as proxy:
        url = f"http://ci-user:{PROXY_PASSWORD}@127.0.0.1:{proxy.port}"
        kubeconfig = hostile.kubeconfig(tmp_path / "kc", server=hostile.UNREACHED, proxy=url)
        out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
        took = proxy.since_first_byte()
        connects = proxy.connects
    assert out.code == 3, out.everything
    assert took < 2, took
    (line,) = _lines_with(out, "407 Proxy Authentication Required")
    assert f"the proxy {proxy.url} refused to connect to the API server" in line, line
    assert "did not accept the user and password in the proxy URL" in line
    assert PROXY_PASSWORD not in out.everything and "ci-user" not in out.everything
    assert len(connects) <= 2  # the one call, and the report's /version; never retried


@pytest.mark.parametrize(
    ("user", "words"),
    [
        (
            {"token": "abc.def\r\nX-Injected: 1"},
            'kubeconfig user "ci" (file "{kc}") token: the token holds a line break, which no HTTP header '
            "can carry",
        ),
        (
            "not json at all",
            "kubeconfig exec plugin 'get-token' printed a wrong ExecCredential (stdout): decoding stdout: "
            "not a JSON ExecCredential at line 1 column 1",
        ),
        (
            {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "kind": "ExecCredential",
                "status": {"token": "t"},
            },
            "kubeconfig exec plugin 'get-token' printed a wrong ExecCredential (apiVersion): exec plugin is "
            "configured to use API version client.authentication.k8s.io/v1, plugin returned version "
            "client.authentication.k8s.io/v1beta1",
        ),
    ],
    ids=["crlf-token", "malformed-execcredential", "wrong-apiversion-execcredential"],
)
def test_a_bad_credential_is_exit_2_naming_its_source_before_any_request(
    tmp_path: Path, user: object, words: str
) -> None:
    env: dict[str, str] = {}
    if not (isinstance(user, dict) and "token" in user):
        user, env = _exec_user(tmp_path, user)
    with hostile.HostileApi() as api:
        kubeconfig = api.kubeconfig(tmp_path / "kc", user=user)  # type: ignore[arg-type]
        out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path, env=env)
        asked = api.requests
    assert out.code == 2, out.everything
    assert asked == []  # nothing reached the server
    assert len(_lines_with(out, words.format(kc=kubeconfig))) == 1, out.stderr
    assert out.report is not None and out.report["duration_seconds"] < 2  # the run's own clock
    assert "X-Injected" not in out.everything
