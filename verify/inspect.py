"""The exec probe: one exec per container reports which expected env keys are set and the
sha256 of each expected file. Values never leave the pod; only key names and digests do."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from verify.model import (
    ContainerObservation,
    Expectations,
    PodObservation,
    PodTarget,
    Uninspectable,
)

# POSIX sh only: busybox, dash and bash images all run it. Arguments are data, never code:
# env names are validated identifiers, paths are passed as argv.
PROBE = r"""
mode=
for a in "$@"; do
  case "$a" in --env) mode=env; continue;; --file) mode=file; continue;; esac
  if [ "$mode" = env ]; then
    if eval "[ -n \"\${$a+x}\" ]"; then echo "env 1 $a"; else echo "env 0 $a"; fi
  else
    if [ -f "$a" ] && [ -r "$a" ]; then
      command -v sha256sum >/dev/null 2>&1 || { echo "notool sha256sum"; exit 0; }
      h=$(sha256sum < "$a") || { echo "file - $a"; continue; }
      echo "file ${h%% *} $a"
    else
      echo "file - $a"
    fi
  fi
done
echo end
"""

_HANDSHAKE = re.compile(r"Handshake status (\d{3})")
_MESSAGE = re.compile(r'"message":\s*"((?:[^"\\]|\\.)*)"')


def probe_argv(expectations: Expectations) -> list[str]:
    argv = ["sh", "-c", PROBE, "rollout-verify"]
    if expectations.env:
        argv += ["--env", *expectations.env]
    if expectations.files:
        argv += ["--file", *(f.path for f in expectations.files)]
    return argv


def parse_probe(*, container: str, stdout: str, expectations: Expectations) -> ContainerObservation:
    """Turn the probe's lines into an observation; anything unexpected is uninspectable."""
    present: set[str] = set()
    hashes: dict[str, str | None] = {}
    ended = False
    for line in stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "env":
            flag, _, key = rest.partition(" ")
            if flag == "1":
                present.add(key)
        elif kind == "file":
            digest, _, path = rest.partition(" ")
            hashes[path] = None if digest == "-" else digest.lower()
        elif kind == "notool":
            return ContainerObservation(
                container=container,
                error=Uninspectable("tool_missing", f"the image has no {rest} to hash files", permanent=True),
            )
        elif kind == "end":
            ended = True
    if not ended:
        return ContainerObservation(
            container=container,
            error=Uninspectable("exec_failed", "the probe's output was cut short", permanent=False),
        )
    return ContainerObservation(
        container=container,
        env_present=frozenset(present & set(expectations.env)),
        file_hashes=hashes,
    )


def _status_error(status: dict[str, Any], *, namespace: str, pod: str) -> Uninspectable | None:
    """Classify the error-channel Status of a finished exec (None: success)."""
    if status.get("status") == "Success":
        return None
    msg = str(status.get("message", ""))
    if "executable file not found" in msg or "no such file or directory" in msg:
        return Uninspectable(
            "no_shell", "the image has no shell (sh): exec cannot run the probe", permanent=True
        )
    if status.get("reason") == "NonZeroExitCode":
        causes = (status.get("details") or {}).get("causes") or [{}]
        return Uninspectable(
            "exec_failed",
            f"the probe exited with code {causes[0].get('message', '?')}",
            permanent=False,
        )
    return Uninspectable("exec_failed", f"exec failed: {msg[:200]}", permanent=False)


def classify_handshake(text: str, *, namespace: str, pod: str, container: str) -> Uninspectable:
    """Map a refused exec upgrade (the client folds status and body into one string) to a reason."""
    m = _HANDSHAKE.search(text)
    code = int(m.group(1)) if m else 0
    mm = _MESSAGE.search(text)
    msg = mm.group(1).encode().decode("unicode_escape") if mm else ""
    if code == 403:
        user = re.search(r'User "([^"]*)"', msg)
        who = f" for {user.group(1)}" if user else ""
        return Uninspectable(
            "forbidden",
            f"exec forbidden{who}: missing RBAC rule `create pods/exec` in namespace {namespace}",
            permanent=True,
        )
    if code == 404:
        return Uninspectable("pod_gone", f"pod {pod} no longer exists", permanent=False)
    if "container not found" in msg or "does not have a host assigned" in msg or "is waiting to start" in msg:
        return Uninspectable("not_running", f"container {container} is not running", permanent=False)
    if code == 400 and "is not valid for pod" in msg:
        return Uninspectable("not_running", f"container {container} is not in the pod", permanent=False)
    if code == 0:
        return Uninspectable("exec_failed", "exec connection failed before the upgrade", permanent=False)
    return Uninspectable("exec_failed", f"exec refused (HTTP {code}): {msg[:200]}", permanent=False)


class Inspector:
    """Runs the probe in every selected container with bounded parallelism."""

    def __init__(self, *, configuration: Any, exec_timeout: float, concurrency: int) -> None:
        self.configuration = configuration
        self.exec_timeout = exec_timeout
        self.concurrency = concurrency
        self._local = threading.local()
        self.execs = 0
        self._lock = threading.Lock()

    def _core(self) -> Any:
        # `stream()` swaps the ApiClient's call_api while it runs: one client per thread.
        core = getattr(self._local, "core", None)
        if core is None:
            from kubernetes import client

            core = client.CoreV1Api(client.ApiClient(self.configuration))
            self._local.core = core
        return core

    def inspect_container(
        self, *, namespace: str, pod: PodTarget, container: str, expectations: Expectations
    ) -> ContainerObservation:
        from kubernetes.client.exceptions import ApiException
        from kubernetes.stream import stream

        with self._lock:
            self.execs += 1
        try:
            ws = stream(
                self._core().connect_get_namespaced_pod_exec,
                pod.name,
                namespace,
                container=container,
                command=probe_argv(expectations),
                stderr=True,
                stdin=False,
                stdout=True,
                tty=False,
                _preload_content=False,
                _request_timeout=self.exec_timeout,
            )
        except ApiException as e:
            return ContainerObservation(
                container=container,
                error=classify_handshake(
                    str(e.reason), namespace=namespace, pod=pod.name, container=container
                ),
            )
        except Exception as e:
            return ContainerObservation(
                container=container,
                error=Uninspectable("exec_failed", f"exec failed: {type(e).__name__}", permanent=False),
            )
        try:
            ws.run_forever(timeout=self.exec_timeout)
            if ws.is_open():
                return ContainerObservation(
                    container=container,
                    error=Uninspectable(
                        "timeout",
                        f"exec did not finish within {self.exec_timeout:g}s",
                        permanent=False,
                    ),
                )
            out = ws.read_stdout() or ""
            raw_status = ws.read_channel(3) or ""
        finally:
            ws.close()
        try:
            status = (
                json.loads(raw_status) if raw_status else {"status": "Failure", "message": "no exec status"}
            )
        except ValueError:
            status = {"status": "Failure", "message": "unreadable exec status"}
        err = _status_error(status, namespace=namespace, pod=pod.name)
        if err is not None:
            return ContainerObservation(container=container, error=err)
        return parse_probe(container=container, stdout=out, expectations=expectations)

    def inspect(
        self, *, namespace: str, pods: Sequence[PodTarget], expectations: Expectations
    ) -> list[PodObservation]:
        jobs = [(p, c) for p in pods for c in p.containers]
        with ThreadPoolExecutor(max_workers=max(1, min(self.concurrency, len(jobs) or 1))) as pool:
            results = list(
                pool.map(
                    lambda pc: self.inspect_container(
                        namespace=namespace, pod=pc[0], container=pc[1], expectations=expectations
                    ),
                    jobs,
                )
            )
        by_pod: dict[str, list[ContainerObservation]] = {}
        for (p, _), obs in zip(jobs, results, strict=True):
            by_pod.setdefault(p.name, []).append(obs)
        return [PodObservation(pod=p, containers=tuple(by_pod.get(p.name, []))) for p in pods]
