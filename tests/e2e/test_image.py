"""The container image without a Docker engine: what the Dockerfile says, what it copies, and its
install steps reproduced in a clean venv (the hash-pinned lock, then the entrypoint)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.helpers import REPO
from tools.lockfile import runtime_closure

DOCKERFILE = (REPO / "Dockerfile").read_text()
LOCK = REPO / "requirements.lock"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def lock_pins() -> dict[str, str]:
    return {
        canonicalize_name(m.group(1)): m.group(2)
        for m in re.finditer(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)", LOCK.read_text(), re.M)
    }


def dockerignored(path: str) -> bool:
    """Docker's rule: the last matching pattern wins; a path is also matched through its parents."""
    patterns = [p.strip() for p in (REPO / ".dockerignore").read_text().splitlines()]
    ignored = False
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in (p for p in patterns if p and not p.startswith("#")):
        negate = pattern.startswith("!")
        pat = pattern.lstrip("!").rstrip("/")
        if any(fnmatch.fnmatchcase(prefix, pat) for prefix in prefixes):
            ignored = not negate
    return ignored


def test_base_image_is_pinned_by_version_and_digest() -> None:
    (arg,) = [a for i, a in instructions() if i == "ARG" and a.startswith("PYTHON_IMAGE=")]
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", arg)
    froms = [a for i, a in instructions() if i == "FROM"]
    assert len(froms) == 2 and all(f.startswith("${PYTHON_IMAGE}") for f in froms)  # multi-stage


def test_runtime_stage_settings() -> None:
    ins = instructions()
    assert ("ENTRYPOINT", '["python", "-m", "verify"]') in ins
    assert not [a for i, a in ins if i == "USER"], "GitHub runs container actions as root"
    env = " ".join(a for i, a in ins if i == "ENV")
    assert "PYTHONUNBUFFERED=1" in env
    labels = " ".join(a for i, a in ins if i == "LABEL")
    for key in ("title", "description", "version", "revision", "licenses"):
        assert f"org.opencontainers.image.{key}=" in labels
    (install,) = [a for i, a in ins if i == "RUN" and "requirements.lock" in a]
    assert "--require-hashes" in install and "--no-deps" in install


def test_every_copied_file_exists_and_is_in_the_build_context() -> None:
    sources = []
    for ins, args in instructions():
        if ins == "COPY" and not args.startswith("--from"):
            sources += args.split()[:-1]
    assert sources == ["requirements.lock", "verify"]
    for src in sources:
        assert (REPO / src).exists(), src
        assert not dockerignored(src), f".dockerignore excludes {src}"
    assert (REPO / "verify" / "__main__.py").exists()
    for secret_like in ("admin.kubeconfig", ".venv", ".git", "tests"):
        assert dockerignored(secret_like), f"{secret_like} would be sent to the build"


def test_lock_pins_the_tested_runtime_closure_with_hashes() -> None:
    pins = lock_pins()
    assert pins == runtime_closure(), "requirements.lock is stale: run python -m tools.lockfile"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for text in project["dependencies"]:
        req = Requirement(text)
        assert req.specifier.contains(pins[canonicalize_name(req.name)]), text
    entries = re.split(r"\n(?=[A-Za-z])", LOCK.read_text().split("\n", 2)[2].strip())
    assert all("--hash=sha256:" in e for e in entries) and len(entries) == len(pins)


def pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


@pytest.mark.timeout(900)
@pytest.mark.skipif(not pypi_reachable(), reason="PyPI is unreachable")
def test_image_install_steps_work_in_a_clean_venv(tmp_path: Path) -> None:
    venv = tmp_path / "opt" / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    pip = [str(py), "-m", "pip", "install", "-q", "--require-hashes", "--no-deps", "--only-binary=:all:"]
    subprocess.run([*pip, "-r", str(LOCK)], check=True, timeout=800)
    subprocess.run([str(py), "-m", "pip", "check"], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    assert (site / "httpx" / "__pycache__").is_dir(), "pip compiles the locked packages"
    app = tmp_path / "opt" / "rollout-verify"
    shutil.copytree(REPO / "verify", app / "verify", ignore=shutil.ignore_patterns("__pycache__"))
    (compile_step,) = [a for i, a in instructions() if i == "RUN" and "compileall" in a]
    argv = compile_step.replace("/opt/rollout-verify", str(app)).split()
    subprocess.run([str(py), *argv[1:]], check=True, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert sorted(p.name for p in (app / "verify" / "__pycache__").glob("*.pyc")) == sorted(
        f"{p.stem}.{sys.implementation.cache_tag}.pyc" for p in (app / "verify").glob("*.py")
    ), "every module is compiled in the image, though nothing may be written at run time"
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "PYTHONPATH": str(app),
        "PYTHONUNBUFFERED": "1",
        "HOME": str(tmp_path),
    }
    entrypoint = json.loads(next(a for i, a in instructions() if i == "ENTRYPOINT"))
    assert shutil.which(entrypoint[0], path=env["PATH"]) == str(venv / "bin" / "python")
    help_run = subprocess.run([*entrypoint, "--help"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert help_run.returncode == 0, help_run.stderr
    assert "VERIFY_DEPLOYMENT" in help_run.stdout
    # past argument parsing: the run's imports (httpx, the flow, the client) load from the lock alone
    run = subprocess.run(
        [*entrypoint, "--deployment", "web", "--kubeconfig", str(tmp_path / "missing")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2, run.stderr
    assert "does not exist" in run.stderr and "Traceback" not in run.stderr
    assert not any(p.name == "tests" for p in (app).iterdir())
    assert os.path.exists(app / "verify" / "__main__.py")
