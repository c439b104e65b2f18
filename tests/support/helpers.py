"""Object builders and a runner for the real rollout-verify CLI against kubesim."""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# the test HTTP app; containers see it at the same path through their overlay of the host root
CONFIGAPP = REPO / "tests" / "kubesim" / "apps" / "configapp.py"
# a container command that stops on SIGTERM: as a container's PID 1, a bare `sleep` installs no
# handler, ignores the kubelet's SIGTERM and holds its pod for the whole grace period (30 s)
STOPS_ON_TERM = ("sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done")

RESTARTED = "kubectl.kubernetes.io/restartedAt"

# The session-wide leak guard (tests/conftest.py `_nothing_leaks`): every value a test plants in a
# Secret, every bearer token a run is given, and every output a run produces. After each test the
# guard checks that no planted value or token (nor its base64) appears in any output of that test.
MIN_PLANTED = 8  # shorter values ("x", "1") would match ordinary text
PLANTED: set[str] = set()
OUTPUTS: list[str] = []


def plant(*values: str) -> None:
    """Declare secret values the guard must never find in an output."""
    PLANTED.update(v for v in values if len(v) >= MIN_PLANTED)


def seen(*texts: str) -> None:
    """Hand an output of rollout-verify that a test got some other way to the guard."""
    OUTPUTS.extend(texts)


def leaks(text: str, secrets: set[str]) -> list[str]:
    """What is wrong with one output: a secret (as itself, its base64 as a Secret's data holds it,
    or a 12-hex sha256 prefix) or a traceback. `::add-mask::` lines are exempt: masking a token
    on GitHub means naming it to the runner, which hides it."""
    import hashlib

    shown = "\n".join(line for line in text.splitlines() if not line.startswith("::add-mask::"))
    problems: list[str] = []
    for value in secrets:
        forms = {
            "value": value,
            "base64": base64.b64encode(value.encode()).decode(),
            "sha256 prefix": hashlib.sha256(value.encode()).hexdigest()[:12],
        }
        # the message names the form and the length, never the secret itself
        problems += [
            f"a planted secret ({len(value)} chars) appears as its {k}"
            for k, f in forms.items()
            if f in shown
        ]
    if "Traceback (most recent call last)" in shown:
        problems.append("rollout-verify printed a traceback")
    return problems


def kubeconfig_tokens(text: str) -> list[str]:
    """Credential strings of a kubeconfig (YAML/JSON): tokens, passwords, client keys."""
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    found: list[str] = []

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, str(k))
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key in ("token", "password", "client-key-data", "id-token"):
            found.append(node)

    walk(doc, "")
    return found


def deployment(
    name: str,
    *,
    replicas: int = 2,
    image: str = "busybox:1.36",
    command: list[str] | None = None,
    env: list[dict[str, Any]] | None = None,
    env_from: list[dict[str, Any]] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    mounts: list[dict[str, Any]] | None = None,
    containers: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    return _workload(
        "Deployment",
        name,
        image=image,
        command=command,
        env=env,
        env_from=env_from,
        volumes=volumes,
        mounts=mounts,
        containers=containers,
        spec={"replicas": replicas, **spec},
    )


def http_app_container(
    name: str = "app",
    *,
    port: int = 8080,
    required_env: list[str] | None = None,
    env: list[dict[str, Any]] | None = None,
    env_from: list[dict[str, Any]] | None = None,
    image: str = "kubesim.local/configapp:1",
    readiness: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """A container running tests/kubesim/apps/configapp.py on `port` (named `http`): `/health`
    always 200, `/config` 503 unless every `required_env` key is set (values never shown).
    With `readiness`, a readinessProbe on /health (every second): the pod turns Ready, and joins
    its Services' endpoints, once the app answers."""
    app_env = [{"name": "PORT", "value": str(port)}]
    if required_env:
        app_env.append({"name": "REQUIRED_ENV", "value": ",".join(required_env)})
    c: dict[str, Any] = {
        "name": name,
        "image": image,
        "command": ["python3", str(CONFIGAPP)],
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "env": app_env + list(env or []),
        **extra,
    }
    if readiness:
        c["readinessProbe"] = {
            "httpGet": {"path": "/health", "port": "http"},
            "periodSeconds": 1,
            "failureThreshold": 3,
        }
    if env_from:
        c["envFrom"] = env_from
    return c


def http_app_deployment(
    name: str,
    *,
    replicas: int = 2,
    port: int = 8080,
    required_env: list[str] | None = None,
    env: list[dict[str, Any]] | None = None,
    env_from: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Deployment (labels app=NAME) whose one container `app` is `http_app_container(...)`."""
    d = deployment(name, replicas=replicas, **spec)
    d["spec"]["template"]["spec"]["containers"] = [
        http_app_container(port=port, required_env=required_env, env=env, env_from=env_from)
    ]
    return d


def service(
    name: str,
    *,
    selector: dict[str, str] | None = None,
    port: int = 80,
    target_port: int | str = "http",
    **spec: Any,
) -> dict[str, Any]:
    """A ClusterIP Service selecting app=NAME (by default) on one port named `http`."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": selector or {"app": name},
            "ports": [{"name": "http", "port": port, "targetPort": target_port}],
            **spec,
        },
    }


def secret(name: str, data: dict[str, str], **extra: Any) -> dict[str, Any]:
    plant(*data.values())
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "default"},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
        **extra,
    }


def configmap(name: str, data: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
        **extra,
    }


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None
    junit: str = ""
    summary: str = ""
    outputs: str = ""  # every file --output-dir wrote, concatenated
    files: dict[str, str] = field(default_factory=dict)  # --output-dir: file name -> content
    after_signal: float | None = None  # seconds from the signal (if any) to the process's exit

    @property
    def everything(self) -> str:
        """Every output a user or a pipeline could see: secrets must appear in none of them."""
        return "\n".join(
            [self.stdout, self.stderr, json.dumps(self.report or {}), self.junit, self.summary, self.outputs]
        )


@functools.cache
def report_schema() -> Any:
    """The `jsonschema` library's validator for the report's published schema (the product's
    own small validator is held to it in tests/unit/test_report_schema.py)."""
    import jsonschema

    path = REPO / "verify" / "report" / "schema" / "report-v1.json"
    return jsonschema.Draft202012Validator(json.loads(path.read_text()))


def run_verify(
    *args: str,
    kubeconfig: str,
    tmp_path: Path,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    signal_when: Callable[[], bool] | None = None,
    signum: int = signal.SIGTERM,
    launcher: tuple[str, ...] = (),
) -> Outcome:
    """Run `python -m verify` as a user would, with every report it can write. With `signal_when`,
    `signum` is sent as soon as it returns true (a cancelled CI job), and the time from the signal
    to the exit is measured. `launcher` goes before the command (bench/peak.py: its peak RSS)."""
    tag = os.urandom(4).hex()
    report = tmp_path / f"report-{tag}.json"
    junit = tmp_path / f"junit-{tag}.xml"
    summary = tmp_path / f"summary-{tag}.md"
    outdir = tmp_path / f"out-{tag}"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_"))}
    # no settle window unless a test asks for one (--min-ready, VERIFY_MIN_READY): the default 5 s
    # would be waited after nearly every rollout of the suite; the containers must still hold still
    full_env.update({"KUBECONFIG": kubeconfig, "HOME": str(tmp_path), "VERIFY_MIN_READY": "0"})
    full_env.update(env or {})
    wanted = {"--report-json": report, "--junit": junit, "--summary": summary, "--output-dir": outdir}
    reports: list[str] = []
    for flag in list(wanted):
        if flag in args:  # the test asked for this output itself: read it from there
            wanted[flag] = Path(args[args.index(flag) + 1])
        else:
            reports += [flag, str(wanted[flag])]
    report, junit, summary, outdir = wanted.values()
    popen = subprocess.Popen(
        [*launcher, sys.executable, "-m", "verify", *args, *reports],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        cwd=REPO,
    )
    after_signal = None
    if signal_when is not None:
        end = time.monotonic() + timeout
        while not signal_when():
            assert popen.poll() is None, "rollout-verify ended before the moment to signal it"
            assert time.monotonic() < end, "the moment to signal never came"
            time.sleep(0.02)
        popen.send_signal(signum)
        sent = time.monotonic()
        popen.wait(timeout=timeout)
        after_signal = time.monotonic() - sent
    out, err = popen.communicate(timeout=timeout)
    proc = subprocess.CompletedProcess(popen.args, popen.returncode, out, err)
    data = json.loads(report.read_text()) if report.exists() else None
    files = sorted(outdir.iterdir()) if outdir.is_dir() else []
    for written in [report, *(f for f in files if f.name == "report.json")]:
        if written.exists():  # every report the suite makes holds to the published schema
            report_schema().validate(json.loads(written.read_text()))
    with contextlib.suppress(OSError):
        plant(*kubeconfig_tokens(Path(kubeconfig).read_text()))
    outcome = Outcome(
        proc.returncode,
        proc.stdout,
        proc.stderr,
        data,
        junit.read_text() if junit.exists() else "",
        summary.read_text() if summary.exists() else "",
        "\n".join(f.read_text(errors="replace") for f in files if f.is_file()),
        {f.name: f.read_text(errors="replace") for f in files if f.is_file()},
        after_signal,
    )
    seen(outcome.everything)
    return outcome


def cache_keepers(cluster: Any, configmap_name: str, nodes: list[str]) -> None:
    """One bare pod per node that mounts `configmap_name` and never goes away, as another
    workload sharing the object would: it holds the kubelet's cache entry on that node, so a
    rolling restart cannot happen to drain the node's last reference (which would release it)."""
    for node in nodes:
        cluster.apply(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"keeper-{node}", "namespace": "default", "labels": {"app": "keeper"}},
                "spec": {
                    "nodeName": node,
                    "terminationGracePeriodSeconds": 1,
                    "volumes": [{"name": "c", "configMap": {"name": configmap_name}}],
                    "containers": [
                        {
                            "name": "keep",
                            "image": "busybox:1.36",
                            "command": ["sleep", "3600"],
                            "volumeMounts": [{"name": "c", "mountPath": "/c"}],
                        }
                    ],
                },
            }
        )
    cluster.wait_for(
        lambda: all(
            (cluster.get("Pod", f"keeper-{n}") or {}).get("status", {}).get("phase") == "Running"
            for n in nodes
        ),
        what="cache keepers",
    )


def restarts_meet_a_late_sync(cluster: Any, *, secret_name: str, key: str) -> Callable[[], None]:
    """From now on, every restart of a workload (its template's `kubectl.kubernetes.io/restartedAt`
    changes) takes `key` out of Secret `secret_name` as it is stored, before any new pod starts (a
    sync racing the restart): a restart judged to deliver `key` does not, and the run still fails
    after it. Returns `put_back()`, which restores the same content (same data, same uid: only the
    resourceVersion moves), so that a later run sees the revision exactly as the restart left it."""
    from tests.kubesim.storage.resources import BY_KIND

    secrets = BY_KIND["Secret"]
    taken: dict[str, str] = {}

    def restarted(ev: Any) -> bool:
        if ev.type != "MODIFIED" or ev.res.kind not in ("Deployment", "StatefulSet", "DaemonSet"):
            return False

        def stamp(obj: Any) -> str:
            template = ((obj or {}).get("spec") or {}).get("template") or {}
            return str(((template.get("metadata") or {}).get("annotations") or {}).get(RESTARTED, ""))

        return stamp(ev.obj) != stamp(ev.old)

    def take(obj: dict[str, Any]) -> None:
        if key in (obj.get("data") or {}):
            taken[key] = obj["data"].pop(key)

    def hook(ev: Any) -> None:
        if restarted(ev):  # on kubesim's loop, as the restart is stored: before any controller acts
            cluster.store.mutate(secrets, ev.namespace, secret_name, take)

    def put_back() -> None:
        if key in taken:
            value = taken.pop(key)
            cluster.call(
                lambda: cluster.store.mutate(
                    secrets, "default", secret_name, lambda o: o.setdefault("data", {}).__setitem__(key, value)
                )
            )

    cluster.call(lambda: cluster.store.hooks.append(hook))
    return put_back


def _workload(
    kind: str,
    name: str,
    *,
    image: str,
    command: list[str] | None,
    env: list[dict[str, Any]] | None,
    env_from: list[dict[str, Any]] | None,
    volumes: list[dict[str, Any]] | None,
    mounts: list[dict[str, Any]] | None,
    containers: list[dict[str, Any]] | None,
    spec: dict[str, Any],
) -> dict[str, Any]:
    app: dict[str, Any] = {"name": "app", "image": image, "command": command or ["sleep", "3600"]}
    if env:
        app["env"] = env
    if env_from:
        app["envFrom"] = env_from
    if mounts:
        app["volumeMounts"] = mounts
    pod_spec: dict[str, Any] = {"terminationGracePeriodSeconds": 1, "containers": [app, *(containers or [])]}
    if volumes:
        pod_spec["volumes"] = volumes
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
            **spec,
        },
    }


def statefulset(
    name: str,
    *,
    replicas: int = 3,
    image: str = "busybox:1.36",
    command: list[str] | None = None,
    env: list[dict[str, Any]] | None = None,
    env_from: list[dict[str, Any]] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    mounts: list[dict[str, Any]] | None = None,
    containers: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A StatefulSet like `deployment(...)`: container `app`, label `app=NAME`, serviceName NAME; extra
    keyword arguments go into its spec (`podManagementPolicy=`, `updateStrategy=`, ...)."""
    return _workload(
        "StatefulSet",
        name,
        image=image,
        command=command,
        env=env,
        env_from=env_from,
        volumes=volumes,
        mounts=mounts,
        containers=containers,
        spec={"replicas": replicas, "serviceName": name, **spec},
    )


def daemonset(
    name: str,
    *,
    image: str = "busybox:1.36",
    command: list[str] | None = None,
    env: list[dict[str, Any]] | None = None,
    env_from: list[dict[str, Any]] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    mounts: list[dict[str, Any]] | None = None,
    containers: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A DaemonSet like `deployment(...)`; extra keyword arguments go into its spec (`updateStrategy=`, ...)."""
    return _workload(
        "DaemonSet",
        name,
        image=image,
        command=command,
        env=env,
        env_from=env_from,
        volumes=volumes,
        mounts=mounts,
        containers=containers,
        spec=spec,
    )


def since_first_request(cluster: Any) -> float:
    """Seconds from the first API request the cluster saw (after `cluster.mark()`) until now.

    A deadline test measures from here, not from the process spawn: the interpreter's start under a
    loaded machine (2 cores shared with other test workers) is not the run's budget, and timing it
    made such tests fail at load 10+ while the product kept its deadline."""
    seen_at = list(cluster.first_seen.values()) if cluster.first_seen else []
    assert seen_at, "the run sent no request to the cluster (call cluster.mark() before it)"
    return time.monotonic() - min(seen_at)
