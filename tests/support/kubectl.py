"""The real kubectl, run against a kubeconfig with its own cache and HOME."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


class Kubectl:
    def __init__(self, kubeconfig: str, cache: Path, *, env: dict[str, str] | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.cache = cache
        self.env = env or {}  # added to (or, when empty, removing from) the process's environment

    def run(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **self.env, "KUBECONFIG": self.kubeconfig, "HOME": str(self.cache)}
        env = {k: v for k, v in env.items() if v}
        proc = subprocess.run(
            [KUBECTL, "--cache-dir", str(self.cache / "cache"), *args],
            capture_output=True,
            text=True,
            env=env,
            input=input,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc

    def __call__(self, *args: str, **kw: object) -> str:
        return self.run(*args, **kw).stdout  # type: ignore[arg-type]
