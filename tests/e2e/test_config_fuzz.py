"""1,000 bad configurations (hypothesis): each exits 2 with exactly one line on stderr naming the
field (its flag or env var), and not one request reaches kubesim.

The bulk calls `verify.cli.run(argv=..., environ=...)` in-process (pure configuration handling;
the environment points at a real kubesim kubeconfig, so a configuration wrongly taken as good
would connect and be counted); a handful go through the real `python -m verify`.
"""

from __future__ import annotations

import contextlib
import io
import string
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.kubesim import Cluster
from tests.support.helpers import run_verify
from verify import cli
from verify.config.naming import FLAGS as _FLAGS
from verify.config.naming import env_var

EXAMPLES = 1000
HEX = "0123456789abcdef"
GOOD_DIGEST = "a" * 64
LOWER = string.ascii_lowercase + string.digits
# never in a DNS-1123 name, an env var name or a config key; no separators (`,` `\n`), no space
BAD_CHARS = "ABCXYZ_/:@!#$%^&*()+=[]{}|;'\"<>?~`é中\t"


@dataclass(frozen=True)
class Case:
    kind: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    names: tuple[str, ...]  # the error line must contain one of these


def _field(name: str) -> tuple[str, ...]:
    flag = _FLAGS.get(name)
    return (flag, env_var(name)) if flag else (env_var(name),)


chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
junk = st.text(chars, max_size=12).map(lambda t: t + "x")  # never a number, duration or bool
lower = st.text(LOWER, max_size=10)
bad_name = st.one_of(
    st.tuples(lower, st.sampled_from(BAD_CHARS), lower).map("".join),
    lower.map(lambda t: "-" + t),
    lower.map(lambda t: t + "-"),
    st.just("web..x"),
    st.integers(254, 300).map(lambda n: "a" * n),
)
bad_label = st.one_of(bad_name, st.just("a.b"), st.integers(64, 80).map(lambda n: "a" * n))
bad_env_name = st.one_of(
    st.tuples(st.sampled_from(string.digits), st.text(string.ascii_uppercase, max_size=6)).map("".join),
    st.tuples(st.text(string.ascii_uppercase, min_size=1, max_size=6), st.sampled_from("-.=$/é:"), lower).map(
        "".join
    ),
    st.tuples(st.text(string.ascii_uppercase, min_size=1, max_size=4), st.just(" "), st.just("B")).map(
        "".join
    ),
)
bad_hex = st.one_of(
    st.text(HEX, max_size=63),
    st.text(HEX, min_size=65, max_size=80),
    st.tuples(st.text(HEX, min_size=63, max_size=63), st.sampled_from("gxz-")).map("".join),
)
path = st.text(LOWER, min_size=1, max_size=8).map(lambda t: f"/etc/{t}")
bad_spec = st.one_of(
    path,  # no =SPEC
    st.tuples(st.text(LOWER, min_size=1, max_size=8), st.just(f"=sha256:{GOOD_DIGEST}")).map(
        "".join
    ),  # relative
    st.tuples(path, st.just("=sha256:"), bad_hex).map("".join),
    st.tuples(path, st.just("="), st.sampled_from(["md5", "sha1", "file", "cm"]), st.just(":x/y")).map(
        "".join
    ),
    st.tuples(path, st.just("="), lower).map("".join),  # no source
    st.tuples(path, st.sampled_from(["=configmap:", "=secret:"]), lower).map("".join),  # no /key
    st.tuples(path, st.sampled_from(["=configmap:", "=secret:"]), bad_name, st.just("/key")).map("".join),
    st.tuples(
        path, st.sampled_from(["=configmap:web/", "=secret:web/"]), st.sampled_from(["a b", "k/v", "é", "?"])
    ).map("".join),
    st.just(f"=sha256:{GOOD_DIGEST}"),
)
bad_duration = st.one_of(
    junk,
    st.sampled_from(["nan", "inf", "-inf", "1e400", "25h", "86401", "1441m", "1h30", "ten", "m", " "]),
    st.integers(-(10**6), -1).map(str),
    st.integers(-100, -1).map(lambda n: f"{n}s"),
)
bad_positive = st.one_of(bad_duration, st.sampled_from(["0", "0s", "0m", "0.0", "0ms"]))
bad_concurrency = st.one_of(
    junk,
    st.integers().filter(lambda n: not 1 <= n <= 512).map(str),
    st.sampled_from(["1.5", "1e2", "0x10", "", " "]),
)
not_a_mode = st.text(chars, min_size=1, max_size=10).filter(lambda v: v not in ("once", "never"))
bad_target = st.one_of(
    bad_name.map(lambda n: f"deployment/{n}"),
    st.tuples(
        st.sampled_from(["cronjob", "job", "pod", "replicaset", "svc", "Deploy ment"]), st.just("/web")
    ).map("".join),
    lower.map(lambda n: n or "web"),  # no KIND/
    st.sampled_from(["deployment/", "/web", "sts//db"]),
)
bad_selector = st.one_of(
    # something on both sides of the bad character: `app=x ` and `app= x` are valid selectors (the
    # API server's lexer skips the space)
    st.tuples(
        st.just("app=a"), lower, st.sampled_from("!@#$%^&*+ :é()"), lower.map(lambda t: t + "x")
    ).map("".join),
    st.tuples(st.sampled_from("!@#$%^&*+:é"), lower).map(lambda t: f"ap{t[0]}p={t[1]}"),
    st.sampled_from(["=web", "tier in web", "a b=c", "tier notin (a", "app=x,,y", "!", "app!=a b", ",app=x"]),
)
bad_http = st.one_of(
    st.tuples(
        junk.filter(lambda t: "/" not in t and "," not in t and "\n" not in t and not t.strip().isdigit()),
        st.just("/health"),
    ).map("".join),
    st.sampled_from(["0/x", "70000/x", "-1/x", "8080/a b", "8080/x=999", "8080/x=099", "healthz", "8080"]),
)
BAD_CONFIGS = {
    "not-yaml.yaml": "targets: [deployment/web\n",
    "not-a-mapping.yaml": "- deployment/web\n",
    "no-targets.yaml": "targets: []\n",
    "unknown-key.yaml": "targets:\n  - target: deployment/web\n    expect-envs: [A]\n",
    "bad-kind.yaml": "targets:\n  - target: cronjob/web\n",
    "bad-env.yaml": "targets:\n  - target: deployment/web\n    expect-env: [1BAD]\n",
    "bad-http.yaml": "targets:\n  - target: sts/db\n    expect-http: [{port: 8080, path: /c, json: {field: v}}]\n",
    "no-target.yaml": "targets:\n  - expect-env: [A]\n",
    "missing.yaml": None,
}
UNKNOWN = st.one_of(
    st.sampled_from(["--bogus", "--expect", "--deployments", "--restart-never", "-x", "--timeout-s"]),
    st.text(string.ascii_lowercase, min_size=1, max_size=8).map(lambda w: f"--zz{w}"),
    # a stray positional that is no workload name (a lowercase word is a Deployment's name)
    st.text(string.ascii_uppercase, min_size=1, max_size=8),
)


def _flag_or_env(field: str, value: str, kind: str) -> st.SearchStrategy[Case]:
    """The bad value through the flag (`--flag=value`) or through the env var."""
    flag = _FLAGS.get(field)
    options = [Case(kind, (f"{flag}={value}",), (), _field(field))] if flag else []
    if value.strip() or field in ("restart",):
        options.append(Case(kind, (), ((env_var(field), value),), _field(field)))
    return st.sampled_from(options) if options else st.nothing()


@st.composite
def bad_case(draw: st.DrawFn, dirs: tuple[str, str, str]) -> Case:
    a_dir, a_file, configs = dirs
    kind = draw(
        st.sampled_from(
            [
                "deployment",
                "namespace",
                "containers",
                "expect_env",
                "expect_file",
                "duplicate_file",
                "restart",
                "timeout",
                "exec_timeout",
                "volume_grace",
                "min_ready",
                "concurrency",
                "from_spec",
                "fail_fast",
                "no_from_spec",
                "missing_deployment",
                "unknown_flag",
                "both_kubeconfigs",
                "kubeconfig_data",
                "output_path",
                "missing_kubeconfig",
                "flag_without_value",
                "target",
                "selector",
                "expect_http",
                "config_file",
            ]
        )
    )
    value: str
    if kind == "deployment":
        value = draw(bad_name)
        case = draw(_flag_or_env("deployment", value, kind))
        return Case(kind, case.argv, case.env, case.names)
    base_argv: tuple[str, ...] = ("--deployment", "web") if draw(st.booleans()) else ()
    base_env: tuple[tuple[str, str], ...] = () if base_argv else ((env_var("deployment"), "web"),)

    def with_base(c: Case) -> Case:
        return Case(c.kind, base_argv + c.argv, base_env + c.env, c.names)

    if kind in ("namespace", "containers"):
        value = draw(bad_label)
        if kind == "containers" and draw(st.booleans()):
            value = "app," + value
        return with_base(draw(_flag_or_env(kind, value, kind)))
    if kind == "expect_env":
        value = draw(bad_env_name)
        if draw(st.booleans()):
            value = "DB_URL," + value
        return with_base(draw(_flag_or_env(kind, value, kind)))
    if kind == "expect_file":
        value = draw(bad_spec)
        return with_base(draw(_flag_or_env(kind, value, kind)))
    if kind == "duplicate_file":
        spec = f"/etc/app.conf=sha256:{GOOD_DIGEST}"
        if draw(st.booleans()):
            return with_base(
                Case(kind, ("--expect-file", spec, "--expect-file", spec), (), _field("expect_file"))
            )
        return with_base(
            Case(kind, (), ((env_var("expect_file"), f"{spec}\n{spec}"),), _field("expect_file"))
        )
    if kind == "restart":
        return with_base(draw(_flag_or_env(kind, draw(not_a_mode), kind)))
    if kind in ("timeout", "exec_timeout"):
        return with_base(draw(_flag_or_env(kind, draw(bad_positive), kind)))
    if kind in ("volume_grace", "min_ready"):
        return with_base(draw(_flag_or_env(kind, draw(bad_duration), kind)))
    if kind == "concurrency":
        return with_base(draw(_flag_or_env(kind, draw(bad_concurrency), kind)))
    if kind == "from_spec":
        if draw(st.booleans()):
            return with_base(Case(kind, (f"--from-spec={draw(junk)}",), (), ("--from-spec",)))
        return with_base(Case(kind, (), ((env_var("from_spec"), draw(junk)),), _field("from_spec")))
    if kind == "fail_fast":
        if draw(st.booleans()):
            return with_base(Case(kind, (f"--fail-fast={draw(junk)}",), (), ("--fail-fast",)))
        return with_base(Case(kind, (), ((env_var("fail_fast"), draw(junk)),), _field("fail_fast")))
    if kind == "no_from_spec":
        return with_base(Case(kind, ("--no-from-spec",), (), _field("from_spec")))
    if kind == "target":
        return with_base(draw(_flag_or_env("targets", draw(bad_target), kind)))
    if kind == "selector":
        return with_base(draw(_flag_or_env("selector", draw(bad_selector), kind)))
    if kind == "expect_http":
        return with_base(draw(_flag_or_env("expect_http", draw(bad_http), kind)))
    if kind == "config_file":
        name = draw(st.sampled_from(sorted(BAD_CONFIGS)))
        return with_base(draw(_flag_or_env("config", f"{configs}/{name}", kind)))
    if kind == "missing_deployment":
        return Case(kind, ("--expect-env", "A"), (), _field("deployment"))
    if kind == "unknown_flag":
        word = draw(UNKNOWN)
        # a stray positional may be a value (a token after an unknown flag): it is never echoed
        named = word if word.startswith("-") else "is not KIND/NAME or a Deployment name (not shown)"
        return with_base(Case(kind, (word,), (), (named,)))
    if kind == "both_kubeconfigs":
        return with_base(
            Case(
                kind,
                ("--kubeconfig", a_file),
                ((env_var("kubeconfig_data"), "apiVersion: v1"),),
                _field("kubeconfig"),
            )
        )
    if kind == "kubeconfig_data":
        data = draw(st.one_of(junk, st.just(" "), st.just("{unclosed"), st.just("kind: Config\n  - bad: [")))
        return with_base(Case(kind, (), ((env_var("kubeconfig_data"), data),), _field("kubeconfig_data")))
    if kind == "output_path":
        field = draw(st.sampled_from(["report_json", "junit", "summary", "output_dir", "kubeconfig"]))
        bad = draw(
            st.one_of(
                st.just(""),
                st.tuples(lower, st.sampled_from("\n\r\t\x1b"), lower).map(lambda t: f"/tmp/{''.join(t)}"),
                st.just(a_file if field == "output_dir" else a_dir if field != "kubeconfig" else ""),
            )
        )
        flag = _FLAGS[field]
        return with_base(Case(kind, (f"{flag}={bad}",), (), _field(field)))
    if kind == "missing_kubeconfig":
        return with_base(
            Case(kind, ("--kubeconfig", f"/nonexistent/{draw(lower)}"), (), _field("kubeconfig"))
        )
    # a value-taking flag at the very end, with nothing after it
    flag = draw(st.sampled_from(["--namespace", "--container", "--timeout", "--expect-file", "--restart"]))
    return with_base(Case(kind, (flag,), (), (flag,)))


def _run_in_process(case: Case, environ: dict[str, str]) -> tuple[int, str, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = cli.run(argv=list(case.argv), environ={**environ, **dict(case.env)})
    return code, out.getvalue(), err.getvalue()


def test_1000_bad_configurations_exit_2_with_one_line_naming_the_field_and_send_nothing(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    a_dir = tmp_path / "a-dir"
    a_dir.mkdir()
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    configs = tmp_path / "configs"
    configs.mkdir()
    for name, text in BAD_CONFIGS.items():
        if text is not None:
            (configs / name).write_text(text)
    environ = {"KUBECONFIG": kubeconfig, "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    cluster.reset_counts()
    kinds: Counter[str] = Counter()
    started = time.monotonic()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(bad_case((str(a_dir), str(a_file), str(configs))))
    def check(case: Case) -> None:
        kinds[case.kind] += 1
        code, out, err = _run_in_process(case, environ)
        lines = err.splitlines()
        assert code == 2, (case, err)
        assert len(lines) == 1, (case, err)
        assert lines[0].startswith("rollout-verify: error: "), (case, err)
        assert any(name in lines[0] for name in case.names), (case, err)
        assert lines[0].isprintable(), (case, err)  # no terminal escapes or stray control characters
        assert out == ""
        assert cluster.requests.total() == 0, (case, cluster.requests.counts)

    check()
    elapsed = time.monotonic() - started
    print(f"\n{sum(kinds.values())} bad configurations in {elapsed:.1f}s: {dict(sorted(kinds.items()))}")
    assert sum(kinds.values()) >= EXAMPLES
    assert len(kinds) == 26  # every kind of mistake was tried
    assert cluster.requests.total() == 0
    assert elapsed < 60, elapsed


def test_bad_configurations_through_the_real_cli_exit_2_before_any_request(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cases = [
        (("--deployment", "Web_App"), {}, "--deployment"),
        (("--deployment", "web", "--timeout", "10x"), {}, "--timeout"),
        (("--deployment", "web"), {"VERIFY_EXPECT_FILE": "/etc/a=sha256:abc"}, "VERIFY_EXPECT_FILE"),
        (("--deployment", "web", "--concurrency", "0"), {}, "--concurrency"),
        (("--deployment", "web", "--bogus"), {}, "--bogus"),
        (("--deployment", "web"), {"VERIFY_RESTART": "always"}, "VERIFY_RESTART"),
    ]
    cluster.reset_counts()
    for argv, env, name in cases:
        out = run_verify(*argv, kubeconfig=kubeconfig, tmp_path=tmp_path, env=env)
        lines = out.stderr.splitlines()
        assert out.code == 2, out.everything
        assert len(lines) == 1 and name in lines[0], out.stderr
    assert cluster.requests.total() == 0
