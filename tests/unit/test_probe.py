"""The exec probe script, run by the local /bin/sh exactly as a pod's sh would run it."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
from pathlib import Path

import pytest

from verify.findings import Expectations, ExpectedEnv, ExpectedFile
from verify.flow.probe.protocol import RunKey, parse_probe, probe_argv, probe_input

TRICKY = "va'l\"ue $(not run) `nor this` %s %% \\n\nline2 ü"


@pytest.mark.parametrize("shell", ["/bin/sh", "/bin/bash"])
def test_probe_reports_keys_hmacs_and_file_digests_without_values(shell: str, tmp_path: Path) -> None:
    key = RunKey()
    f = tmp_path / "conf file.txt"
    f.write_bytes(b"content7")
    exp = Expectations(
        env=("PRESENT", "ABSENT", "dotted.name-x", "gone.name"),
        env_values=(
            ExpectedEnv("PRESENT", hmac.new(key.key, TRICKY.encode(), hashlib.sha256).hexdigest(), "x"),
        ),
        files=(
            ExpectedFile(str(f), hashlib.sha256(b"content7").hexdigest(), "sha256"),
            ExpectedFile("/nope", "0" * 64, "sha256"),
        ),
    )
    argv, stdin = probe_argv(), probe_input(exp, key)
    argv[0] = shell
    proc = subprocess.run(
        input=stdin,
        args=argv,
        capture_output=True,
        text=True,
        env={"PRESENT": TRICKY, "dotted.name-x": "1", "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert TRICKY not in proc.stdout and "line2" not in proc.stdout
    obs = parse_probe(container="app", stdout=proc.stdout, expectations=exp, run_key=key)
    assert obs.error is None
    assert obs.env_present == frozenset({"PRESENT", "dotted.name-x"})
    assert obs.env_digests["PRESENT"] == exp.env_values[0].digest
    assert obs.file_hashes == {str(f): hashlib.sha256(b"content7").hexdigest(), "/nope": None}


def test_truncated_probe_output_is_uninspectable() -> None:
    obs = parse_probe(container="app", stdout="env 1 A\n", expectations=Expectations(env=("A",)))
    assert obs.error is not None and obs.error.code == "exec_failed"


def test_image_without_sha256sum_is_a_permanent_failure() -> None:
    obs = parse_probe(container="app", stdout="notool sha256sum\n", expectations=Expectations())
    assert obs.error is not None and obs.error.permanent


def test_probe_variables_and_markers_do_not_shadow_expected_keys(tmp_path: Path) -> None:
    odd = tmp_path / "a\\nb" / "f"
    odd.parent.mkdir()
    odd.write_bytes(b"x")
    exp = Expectations(
        env=("mode", "ipad", "a", "h", "v", "l"),
        files=(ExpectedFile(str(odd), hashlib.sha256(b"x").hexdigest(), "sha256"),),
    )
    for shell in ("/bin/sh", "/bin/bash"):
        argv, stdin = probe_argv(), probe_input(exp, RunKey())
        argv[0] = shell
        out = subprocess.run(
            input=stdin, args=argv, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, check=True
        ).stdout
        obs = parse_probe(container="app", stdout=out, expectations=exp)
        assert obs.env_present == frozenset(), (shell, out)
        assert obs.file_hashes == {str(odd): hashlib.sha256(b"x").hexdigest()}, (shell, out)


def test_the_wire_probe_is_the_script_without_comments_or_indentation() -> None:
    from verify.flow.probe.protocol import PROBE, WIRE_PROBE

    lines = WIRE_PROBE.splitlines()
    assert all(line == line.strip() and line and not line.startswith("#") for line in lines)
    kept = [line.strip() for line in PROBE.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert lines == kept and len(WIRE_PROBE) < len(PROBE)


def test_exec_query_is_encoded_as_the_official_client_encodes_it() -> None:
    from kubernetes.stream import ws_client

    from verify.kube.exec import exec_query as _exec_query

    argv = probe_argv()
    query = [("command", a) for a in argv]
    query += [
        ("container", "app"),
        ("stderr", "true"),
        ("stdin", "true"),
        ("stdout", "true"),
        ("tty", "false"),
    ]
    official = ws_client.get_websocket_url("https://h:6443/api/v1/namespaces/n/pods/p/exec", query)
    ours = ws_client.get_websocket_url(
        f"https://h:6443/api/v1/namespaces/n/pods/p/exec?{_exec_query(tuple(argv), 'app', stdin=True)}"
    )
    assert ours == official
    # a second container with the same probe reuses the encoded command, not its name
    other = _exec_query(tuple(argv), "side", stdin=True)
    assert other.endswith("&container=side&stderr=true&stdin=true&stdout=true&tty=false")


def test_an_env_name_that_looks_like_a_probe_marker_is_just_a_name() -> None:
    # `-` is allowed in env names, so `--rv-file` is one; it must not switch the probe's section
    exp = Expectations(env=("--rv-file", "PRESENT", "--rv-env"))
    argv, stdin = probe_argv(), probe_input(exp, RunKey())
    out = subprocess.run(
        input=stdin,
        args=argv,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PRESENT": "1"},
        check=True,
    ).stdout
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.error is None, out
    assert obs.env_present == frozenset({"PRESENT"}), out


SHELLS = ("/bin/sh", "/bin/bash")


def _run_probe(exp: Expectations, shell: str, env: dict[str, str], *, prefix: tuple[str, ...] = ()) -> str:
    argv, stdin = probe_argv(), probe_input(exp, RunKey())
    argv[0] = shell
    return subprocess.run(
        input=stdin, args=[*prefix, *argv], capture_output=True, text=True, env=env, check=True
    ).stdout


@pytest.mark.parametrize("shell", SHELLS)
def test_file_paths_with_line_breaks_of_any_kind_keep_their_digests(shell: str, tmp_path: Path) -> None:
    names = ["new\nline", "carriage\rreturn", "unicode\u2028sep", "next\x85line", "plain"]
    files = []
    for i, name in enumerate(names):
        (tmp_path / name).write_bytes(f"c{i}".encode())
        files.append(
            ExpectedFile(str(tmp_path / name), hashlib.sha256(f"c{i}".encode()).hexdigest(), "sha256")
        )
    exp = Expectations(files=tuple(files))
    out = _run_probe(exp, shell, {"PATH": "/usr/bin:/bin"})
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.error is None
    assert obs.file_hashes == {f.path: f.sha256 for f in files}


@pytest.mark.parametrize("shell", SHELLS)
def test_names_the_shell_sets_itself_count_only_when_the_container_has_them(shell: str) -> None:
    shell_made = (
        "PWD",
        "IFS",
        "PPID",
        "OPTIND",
        "OPTERR",
        "PS1",
        "SHLVL",
        "SHELL",
        "SHELLOPTS",
        "TERM",
        "PATH",
        "DIRSTACK",
        "__rv_a",
        "__rv_m",
    )
    exp = Expectations(env=(*shell_made, "LANG"))
    out = _run_probe(exp, shell, {"LANG": "C"})  # the exec's whole environment: no PATH either
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.env_present == frozenset({"LANG"}), out
    out = _run_probe(exp, shell, {"PWD": "/srv", "PATH": "/usr/bin:/bin", "LANG": "C"})
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.env_present == frozenset({"PWD", "PATH", "LANG"}), out


@pytest.mark.parametrize("shell", SHELLS)
def test_a_value_holding_a_line_break_cannot_fake_another_entry(shell: str) -> None:
    exp = Expectations(env=("ghost.key", "real.key"))
    out = _run_probe(exp, shell, {"PATH": "/usr/bin:/bin", "real.key": "x\nghost.key=1"})
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.env_present == frozenset({"real.key"}), out


def test_a_file_the_execs_user_cannot_read_is_reported_unreadable_not_missing(tmp_path: Path) -> None:
    import os
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="rv-probe-"))
    try:
        shared.chmod(0o755)
        secret = shared / "key.pem"
        secret.write_bytes(b"k")
        secret.chmod(0o600)  # root's; the probe runs as nobody
        exp = Expectations(
            files=(
                ExpectedFile(str(secret), hashlib.sha256(b"k").hexdigest(), "sha256"),
                ExpectedFile(str(shared / "absent"), "0" * 64, "sha256"),
            )
        )
        if os.geteuid() != 0:
            pytest.skip("needs root to run the probe as another user")
        nobody = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        out = _run_probe(exp, "/bin/sh", {"PATH": "/usr/bin:/bin"}, prefix=nobody)
        obs = parse_probe(container="app", stdout=out, expectations=exp)
        assert obs.unreadable_files == frozenset({str(secret)}), out
        assert obs.file_hashes == {str(secret): None, str(shared / "absent"): None}
    finally:
        for p in sorted(shared.glob("*"), reverse=True):
            p.unlink()
        shared.rmdir()


def _busybox() -> str | None:
    import os
    import shutil

    beside = Path(sys.executable).parent / "busybox"  # `make venv` puts Debian's static build there
    found = os.environ.get("RV_BUSYBOX") or shutil.which("busybox") or (str(beside) if beside.exists() else None)
    if found is None and os.environ.get("CI") == "true":
        raise RuntimeError("CI runs the probe under busybox sh: `make busybox` fetches it")
    return found if found and Path(found).exists() else None


# (argv prefix that runs `sh`), busybox only where the machine has it (RV_BUSYBOX=/path/busybox)
SHELL_PREFIXES = [
    pytest.param(("/bin/dash",), id="dash"),
    pytest.param(("/bin/bash",), id="bash"),
    pytest.param(
        (str(_busybox()), "sh"),
        id="busybox",
        marks=pytest.mark.skipif(_busybox() is None, reason="no busybox (set RV_BUSYBOX)"),
    ),
]


def _probe_under(
    prefix: tuple[str, ...], exp: Expectations, key: RunKey, env: dict[str, str], cwd: Path
) -> str:
    argv, stdin = probe_argv(), probe_input(exp, key)
    return subprocess.run(
        input=stdin, args=[*prefix, *argv[1:]], capture_output=True, text=True, env=env, cwd=cwd, check=True
    ).stdout


@pytest.mark.parametrize("prefix", SHELL_PREFIXES)
def test_names_the_shell_manages_set_as_literal_env_are_read_from_the_real_environment(
    prefix: tuple[str, ...], tmp_path: Path
) -> None:
    literal = {
        "PWD": "/srv/app",  # the shell sets it to the working directory, tmp_path here
        "IFS": ":",
        "SHLVL": "7",
        "_": "/usr/local/bin/app",
        "OPTIND": "5",
        "PPID": "1",
        "RANDOM": "3",
        "LINENO": "9",
        "OLDPWD": "/",
        "PS4": "multi\nline",
    }
    key = RunKey()
    names = tuple(literal)
    exp = Expectations(
        env=(*names, "HOME"),
        env_values=tuple(
            ExpectedEnv(n, hmac.new(key.key, v.encode(), hashlib.sha256).hexdigest(), "the pod spec")
            for n, v in literal.items()
        ),
    )
    out = _probe_under(prefix, exp, key, {"PATH": "/usr/bin:/bin", **literal}, tmp_path)
    obs = parse_probe(container="app", stdout=out, expectations=exp, run_key=key)
    assert obs.error is None, out
    assert obs.env_present == frozenset(names), out  # HOME is not set
    assert obs.env_digests == {v.key: v.digest for v in exp.env_values}, out


@pytest.mark.parametrize("prefix", SHELL_PREFIXES)
def test_a_shell_managed_name_the_exec_did_not_set_has_no_value_and_a_wrong_one_differs(
    prefix: tuple[str, ...], tmp_path: Path
) -> None:
    key = RunKey()
    want = hmac.new(key.key, b"/srv/app", hashlib.sha256).hexdigest()
    exp = Expectations(env=("PWD",), env_values=(ExpectedEnv("PWD", want, "the pod spec"),))
    unset = _probe_under(prefix, exp, key, {"PATH": "/usr/bin:/bin"}, tmp_path)
    obs = parse_probe(container="app", stdout=unset, expectations=exp, run_key=key)
    assert obs.env_present == frozenset() and "PWD" not in obs.env_digests, unset
    other = _probe_under(prefix, exp, key, {"PATH": "/usr/bin:/bin", "PWD": "/srv/other"}, tmp_path)
    obs = parse_probe(container="app", stdout=other, expectations=exp, run_key=key)
    assert obs.env_digests["PWD"] != want, other


@pytest.mark.parametrize("prefix", SHELL_PREFIXES)
def test_a_missing_helper_tool_is_a_permanent_tool_missing_naming_it(
    prefix: tuple[str, ...], tmp_path: Path
) -> None:
    import shutil

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sha = shutil.which("sha256sum")
    assert sha is not None
    (bin_dir / "sha256sum").symlink_to(sha)  # sha256sum, but no tr and no env
    exp = Expectations(env=("dotted.name",))
    out = _probe_under(prefix, exp, RunKey(), {"PATH": str(bin_dir), "dotted.name": "1"}, tmp_path)
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    if "busybox" in prefix[0]:
        # busybox's static sh runs its own tr and env applets whatever PATH holds: nothing missing
        assert obs.error is None and obs.env_present == frozenset({"dotted.name"}), out
        return
    assert obs.error is not None and obs.error.code == "tool_missing" and obs.error.permanent, out
    assert obs.error.reason.startswith("tool missing: tr"), obs.error.reason


def test_the_exec_url_is_the_same_for_1_key_or_1000_and_holds_no_key_pad_or_path() -> None:
    from verify.kube.exec import exec_query

    key = RunKey()
    one = Expectations(env=("A",), env_values=(ExpectedEnv("A", "0" * 64, "x"),))
    many = Expectations(
        env=tuple(f"KEY_{i}" for i in range(1000)),
        env_values=tuple(ExpectedEnv(f"KEY_{i}", "0" * 64, "x") for i in range(1000)),
        files=(ExpectedFile("/etc/app/secret-path.conf", "0" * 64, "sha256"),),
    )
    assert probe_input(many, key) != probe_input(one, key)  # the expectations travel on stdin
    url = exec_query(tuple(probe_argv()), "app", stdin=True)
    assert "KEY_" not in url and "secret-path" not in url
    assert key.ipad_format()[:40] not in url and "%5C066" not in url.upper()


def test_input_cut_short_before_its_end_line_checks_nothing() -> None:
    exp = Expectations(env=("PATH",))
    whole = probe_input(exp, RunKey())
    out = subprocess.run(
        probe_argv(), input=whole.removesuffix("e\n"), capture_output=True, text=True, env={"PATH": "/bin"}
    ).stdout
    assert out == ""
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.error is not None and obs.error.code == "exec_failed"


@pytest.mark.parametrize("prefix", SHELL_PREFIXES)
def test_the_probe_reports_where_each_file_leads_once_every_link_is_followed(
    prefix: tuple[str, ...], tmp_path: Path
) -> None:
    # /var/run/pin/pin as the kubelet lays a Secret out (pin -> ..data/pin, ..data -> ..2025),
    # reached through `run` -> `var/run` and through an app's own link `app/pin` -> it
    secret_dir = tmp_path / "var" / "run" / "pin"
    (secret_dir / "..2025").mkdir(parents=True)
    (secret_dir / "..2025" / "pin").write_bytes(b"123456")
    (secret_dir / "..data").symlink_to("..2025")
    (secret_dir / "pin").symlink_to("..data/pin")
    (tmp_path / "run").symlink_to("var/run")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "pin").symlink_to(tmp_path / "run" / "pin" / "pin")
    odd = tmp_path / "odd\ndir"
    odd.mkdir()
    (odd / "f").write_bytes(b"x")
    (tmp_path / "via-odd").symlink_to(odd / "f")
    paths = [str(tmp_path / "run/pin/pin"), str(tmp_path / "app/pin"), str(tmp_path / "via-odd")]
    exp = Expectations(files=tuple(ExpectedFile(p, "0" * 64, "sha256") for p in paths))
    out = _probe_under(prefix, exp, RunKey(), {"PATH": "/usr/bin:/bin"}, tmp_path)
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    real = str(secret_dir / "..2025" / "pin")
    # a resolved path holding a line break is not reported: no proof, so no digest will be shown
    assert obs.resolved_files == {paths[0]: real, paths[1]: real}
    assert obs.file_hashes[paths[0]] == obs.file_hashes[paths[1]] == hashlib.sha256(b"123456").hexdigest()
    assert obs.file_hashes[paths[2]] == hashlib.sha256(b"x").hexdigest()


@pytest.mark.parametrize("prefix", SHELL_PREFIXES)
def test_zero_config_lists_every_env_name_and_never_a_value(prefix: tuple[str, ...], tmp_path: Path) -> None:
    """Names only, each once: a value holding a line break that looks like another entry, or a
    name the shell manages, shows nothing of the value; a name that is no identifier is left out."""
    exp = Expectations(env=("DB_URL",), env_from=(("secret", "web-env", ""),))
    env = {
        "PATH": "/usr/bin:/bin",
        "DB_URL": "postgres://x",
        "API_TOKEN": "tok\nFORGED_NAME=from-a-value",
        "PWD": "/srv",
        "app.conf": "1",
    }
    out = _probe_under(prefix, exp, RunKey(), env, tmp_path)
    assert "from-a-value" not in out and "postgres" not in out and "tok" not in out
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.error is None, out
    assert obs.env_names == frozenset({"PATH", "DB_URL", "API_TOKEN", "PWD"}), out
    # not asked (no envFrom to compare with): not listed, and not known
    plain = Expectations(env=("DB_URL",))
    out = _probe_under(prefix, plain, RunKey(), env, tmp_path)
    assert "name " not in out and parse_probe(container="app", stdout=out, expectations=plain).env_names is None
