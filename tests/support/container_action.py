"""A GitHub container action, as the runner starts one: only the workspace, `_temp/_github_home`
and `_temp/_github_workflow` are mounted (at /github/workspace, /github/home, /github/workflow),
while the environment still names the runner's paths. Each run gets its own mount namespace
(util-linux `unshare`) in which tmp folders are bound at the /github/... mount points."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.helpers import REPO

MOUNTS = ("workspace", "home", "workflow")
RUNNER_WORKSPACE = "/home/runner/work/shop/shop"  # the checkout of a repository named shop
RUNNER_HOME = "/home/runner/work/_temp/_github_home"
# by their full paths: the run's own PATH may be one without them (no cloud CLI on it)
UNSHARE = shutil.which("unshare") or "/usr/bin/unshare"
MOUNT = shutil.which("mount") or "/bin/mount"


def mounts(tmp_path: Path) -> dict[str, Path]:
    """The folders the runner would mount, as tmp folders (the mount points are created once)."""
    if not Path(UNSHARE).exists():
        raise AssertionError("util-linux unshare is needed to mount /github/* for this test")
    dirs = {name: tmp_path / "runner" / name for name in MOUNTS}
    for name, path in dirs.items():
        path.mkdir(parents=True)
        Path("/github", name).mkdir(parents=True, exist_ok=True)
    return dirs


def run(folders: dict[str, Path], env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m verify ARGS` inside the container action's mounts, with the action's environment
    (GITHUB_ACTIONS, GITHUB_WORKSPACE=/github/workspace, HOME=/github/home) over `env`."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_", "KUBECONFIG"))}
    full.update(GITHUB_ACTIONS="true", GITHUB_WORKSPACE="/github/workspace", HOME="/github/home")
    full.update(env)
    binds = " && ".join(f"{MOUNT} --bind {folders[name]} /github/{name}" for name in MOUNTS)
    return subprocess.run(
        [UNSHARE, "--mount", "--propagation", "private", "/bin/sh", "-c", f'{binds} && exec "$@"', "sh",
         sys.executable, "-m", "verify", *args],
        env=full, cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def left_nothing() -> bool:
    """The mounts were the run's own: nothing of them is visible outside it."""
    return not any(any(Path("/github", name).iterdir()) for name in MOUNTS)
