"""The debug probe (verify/flow/probe/debug_probe.sh) under dash, bash and busybox sh, as it runs
in a debug container: in the target's PID namespace, in a mount namespace of its own, reading the
target's /proc/1. The target here is a chroot'd `sleep` that is PID 1 of a new PID namespace, its
root a temporary directory whose config file is an absolute link (which must resolve inside the
target's root, not the probe's)."""

from __future__ import annotations

import hashlib
import hmac
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.test_probe import SHELL_PREFIXES, _busybox
from verify.findings import Expectations, ExpectedEnv, ExpectedFile
from verify.flow.probe.protocol import RunKey, debug_probe_argv, parse_probe, probe_input

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or _busybox() is None or not shutil.which("unshare"),
    reason="needs root, unshare and a static busybox (namespaces, a chroot'd target)",
)
VALUE = "only-in-the-target-3f1c"


@pytest.fixture
def target(tmp_path: Path) -> Iterator[int]:
    """A target container: PID 1 of its PID namespace, chroot'd into `tmp_path/root`."""
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    (root / "etc" / "app").mkdir(parents=True)
    (root / "data" / "app.conf").write_text("mode=fast\n")
    os.symlink("/data/app.conf", root / "etc" / "app" / "conf")  # absolute: inside the target's root
    shutil.copy(str(_busybox()), root / "busybox")
    proc = subprocess.Popen(
        [
            "unshare",
            "-p",
            "-f",
            "-m",
            "--mount-proc",
            "--propagation",
            "private",
            "--",
            "env",
            "-i",
            f"GREETING={VALUE}",
            "MULTI=a\nb",
            "/usr/sbin/chroot",
            str(root),
            "/busybox",
            "sleep",
            "60",
        ],
        start_new_session=True,
    )
    try:
        pid = None
        for _ in range(400):
            kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            if kids and os.readlink(f"/proc/{kids[0]}/root") != "/":
                pid = int(kids[0])
                break
            time.sleep(0.01)
        assert pid is not None, "the target never started"
        yield pid
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()


def run_probe(prefix: tuple[str, ...], pid: int, exp: Expectations, key: RunKey) -> str:
    """The probe in the target's PID namespace and a mount namespace of its own (its /proc shows
    the target's namespace), as the debug container runs it."""
    argv = debug_probe_argv()
    inner = " ".join(f"'{a}'" for a in prefix)
    return subprocess.run(
        [
            "nsenter",
            "-t",
            str(pid),
            "-p",
            "--",
            "unshare",
            "-m",
            "--propagation",
            "private",
            "--",
            "/bin/sh",
            "-c",
            f'mount -t proc proc /proc && exec {inner} -c "$1" rollout-verify',
            "x",
            argv[2],
        ],
        input=probe_input(exp, key),
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
        timeout=30,
        check=True,
    ).stdout


@pytest.mark.parametrize("prefix", SHELL_PREFIXES)
def test_the_debug_probe_reads_the_targets_environment_and_files_through_its_proc(
    prefix: tuple[str, ...], target: int
) -> None:
    key = RunKey()
    digest = hmac.new(key.key, VALUE.encode(), hashlib.sha256).hexdigest()
    multi = hmac.new(key.key, b"a\nb", hashlib.sha256).hexdigest()
    conf = hashlib.sha256(b"mode=fast\n").hexdigest()
    exp = Expectations(
        env=("GREETING", "MULTI", "PATH"),
        env_values=(
            ExpectedEnv("GREETING", digest, "the pod spec"),
            ExpectedEnv("MULTI", multi, "the pod spec"),
        ),
        files=(
            ExpectedFile("/etc/app/conf", conf, "sha256"),
            ExpectedFile("/etc/app/absent", conf, "sha256"),
        ),
    )
    out = run_probe(prefix, target, exp, key)
    obs = parse_probe(container="app", stdout=out, expectations=exp, run_key=key)
    assert obs.error is None, out
    # the target's environment, not the probe's (which has PATH and no GREETING)
    assert obs.env_present == frozenset({"GREETING", "MULTI"}), out
    assert obs.env_digests == {"GREETING": digest, "MULTI": multi}, out
    # the absolute link resolved inside the target's root
    assert obs.file_hashes == {"/etc/app/conf": conf, "/etc/app/absent": None}, out
    assert obs.resolved_files == {"/etc/app/conf": "/data/app.conf"}, out
    assert VALUE not in out


def test_without_a_shared_process_namespace_it_refuses_to_read_itself(tmp_path: Path) -> None:
    key = RunKey()
    exp = Expectations(env=("GREETING",))
    argv = debug_probe_argv()
    # PID 1 of its own namespace is the probe's own shell: nothing of a target to read
    out = subprocess.run(
        ["unshare", "-p", "-f", "--mount-proc", "--", "/bin/sh", "-c", argv[2], "rollout-verify"],
        input=probe_input(exp, key),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    obs = parse_probe(container="app", stdout=out, expectations=exp, run_key=key)
    assert obs.error is not None and obs.error.code == "debug_failed", out
    assert "does not share the target's process namespace" in obs.error.reason


@pytest.mark.parametrize("prefix", SHELL_PREFIXES)
def test_the_debug_probe_lists_the_targets_env_names_never_its_values(prefix: tuple[str, ...], target: int) -> None:
    exp = Expectations(env=("GREETING",), env_from=(("configmap", "app", ""),))
    out = run_probe(prefix, target, exp, RunKey())
    obs = parse_probe(container="app", stdout=out, expectations=exp)
    assert obs.env_names == frozenset({"GREETING", "MULTI"}), out  # the target's, not the probe's PATH
    assert VALUE not in out
