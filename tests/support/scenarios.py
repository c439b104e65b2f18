"""The five core scenarios as reusable setups, for the fault suite (`tests/e2e/test_faults.py`) and
its full-size run (`bench/faults.py`, `make faults`).

Each builds its state through kubesim's own object helpers (no HTTP, so injected faults never hit
the setup), waits until the rollout is complete, and returns the rollout-verify arguments. The
expected verdicts are those of the fault-free end-to-end tests (`tests/e2e/test_verify_e2e.py`,
`tests/e2e/test_from_spec_e2e.py`, `tests/e2e/test_restart_safety_e2e.py`): a restart is sent only
when it can make every failing check pass.
"""

from __future__ import annotations

import copy
import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import cache_keepers, configmap, deployment, run_verify, secret

MANIFESTS = Path(__file__).parent.parent / "manifests"
PLANTED = "s3cr3t-planted-faults-5e21"
FAULT_RATE = 0.2


@dataclass(frozen=True)
class Verdict:
    """What a pipeline branches on: the exit code, the result and how many restarts were made."""

    code: int
    result: str
    restarts: int

    def __str__(self) -> str:
        return f"exit {self.code} {self.result}, {self.restarts} restart{'s' if self.restarts != 1 else ''}"


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    setup: Callable[[Cluster], list[str]]
    expected: Verdict


def _healthy(cluster: Cluster) -> list[str]:
    cluster.apply(configmap("web-config", {"app.conf": "mode=prod\n"}))
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://faults", "FEATURE_CREDENTIAL": PLANTED}))
    cluster.apply(
        deployment(
            "web",
            replicas=3,
            env_from=[{"secretRef": {"name": "web-secrets"}}],
            volumes=[{"name": "conf", "configMap": {"name": "web-config"}}],
            mounts=[{"name": "conf", "mountPath": "/etc/web"}],
        )
    )
    cluster.wait_rollout("web")
    digest = hashlib.sha256(b"mode=prod\n").hexdigest()
    return [
        "--deployment",
        "web",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--expect-env",
        "DB_URL",
        "--expect-file",
        f"/etc/web/app.conf=sha256:{digest}",
    ]


def _late_secret(cluster: Cluster) -> list[str]:
    """A pod started before the Secret sync lacks the key; one restart fixes it (zero-config)."""
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://faults"}))
    cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-secrets"}}]))
    cluster.wait_rollout("web")
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://faults", "FEATURE_CREDENTIAL": PLANTED}))
    first = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))[0]
    cluster.delete("Pod", first)
    cluster.wait_for(lambda: cluster.get("Pod", first) is None, what=f"pod {first} gone")
    cluster.wait_rollout("web")
    return ["--deployment", "web"]


def _recreated_configmap(cluster: Cluster) -> list[str]:
    """A recreated immutable ConfigMap: nodes that cached it keep serving the old content, and
    under a RollingUpdate with other pods holding every node's copy a restart cannot change that:
    judged so before any restart, the run fails without one."""
    docs = list(yaml.safe_load_all((MANIFESTS / "cm-test.yaml").read_text()))
    dep = next(d for d in docs if d["kind"] == "Deployment")
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    dep["metadata"]["namespace"] = cm["metadata"]["namespace"] = "default"
    cluster.apply(cm)
    cluster.apply(dep)
    cluster.wait_rollout("cm-test")
    cache_keepers(cluster, "testcm", ["node-1", "node-2", "node-3"])
    cluster.delete("ConfigMap", "testcm")
    fresh = copy.deepcopy(cm)
    fresh["data"] = {"script.py": "content8"}
    cluster.apply(fresh)
    live = cluster.get("Deployment", "cm-test")
    assert live is not None
    annotations = live["spec"]["template"]["metadata"].setdefault("annotations", {})
    annotations["kubectl.kubernetes.io/restartedAt"] = "2026-01-01T00:00:00Z"  # `kubectl rollout restart`
    cluster.apply(live)
    cluster.wait_for(
        lambda: (
            (cluster.get("Deployment", "cm-test") or {}).get("status", {}).get("observedGeneration", 0)
            >= live["metadata"]["generation"] + 1
        ),
        what="restart observed",
    )
    cluster.wait_rollout("cm-test")
    return ["--deployment", "cm-test", "--expect-file", "/cm/script.py=configmap:testcm/script.py"]


def _distroless(cluster: Cluster) -> list[str]:
    cluster.apply(
        deployment("static", replicas=2, image="gcr.io/distroless/static:nonroot", command=["/server"])
    )
    cluster.wait_rollout("static")
    return ["--deployment", "static", "--expect-env", "PORT"]


def _missing_key(cluster: Cluster) -> list[str]:
    """The key is in no Secret at all: a restart cannot bring it, the run fails without one."""
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://faults"}))
    cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-secrets"}}]))
    cluster.wait_rollout("web")
    return ["--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL"]


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("healthy", "healthy rollout passes", _healthy, Verdict(0, "passed", 0)),
    Scenario(
        "late-secret",
        "pod started before the Secret sync: one restart, pass",
        _late_secret,
        Verdict(0, "passed", 1),
    ),
    Scenario(
        "recreated-cm",
        "recreated immutable ConfigMap: a restart cannot help, fails without restart",
        _recreated_configmap,
        Verdict(1, "failed", 0),
    ),
    Scenario(
        "distroless", "no shell: uninspectable, fails without restart", _distroless, Verdict(1, "failed", 0)
    ),
    Scenario(
        "missing-key",
        "key no source provides: a restart cannot add it, fails without restart",
        _missing_key,
        Verdict(1, "failed", 0),
    ),
)
BY_NAME = {s.name: s for s in SCENARIOS}


@dataclass
class Run:
    """One rollout-verify run of one scenario under one fault seed, and what kubesim saw."""

    scenario: str
    seed: int | None  # None: no faults
    verdict: Verdict
    requests: int
    injected: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    stderr: str = ""
    everything: str = ""


def verdict_of(code: int, report: dict[str, Any] | None) -> Verdict:
    if report is None:
        return Verdict(code, "no report", -1)
    attempts = report["workloads"][0]["attempts"] if report.get("workloads") else []
    restarts = max(len(attempts) - 1, 0)
    assert bool(report.get("restarted")) == (restarts > 0) or report.get("result") == "error", report
    return Verdict(code, str(report["result"]), restarts)


def run_on(
    cluster: Cluster,
    scenario: Scenario,
    *,
    seed: int | None,
    tmp_path: Path,
    rate: float = FAULT_RATE,
    mix: tuple[str, ...] | None = None,
) -> Run:
    """Set `scenario` up on a fresh `cluster`, then verify it with seeded faults (none if seed is None)."""
    args = scenario.setup(cluster)
    kubeconfig = cluster.write_kubeconfig(tmp_path / f"{scenario.name}-{os.urandom(3).hex()}.kubeconfig")
    cluster.reset_counts()
    cluster.set_faults(rate if seed is not None else 0.0, seed or 0, mix)
    t0 = time.monotonic()
    try:
        out = run_verify(*args, kubeconfig=kubeconfig, tmp_path=tmp_path, timeout=240)
    finally:
        seconds = time.monotonic() - t0
        injected = Counter(cluster.injected)
        cluster.set_faults(0.0, 0)
    return Run(
        scenario=scenario.name,
        seed=seed,
        verdict=verdict_of(out.code, out.report),
        requests=cluster.requests.total(),
        injected=injected,
        seconds=seconds,
        stderr=out.stderr,
        everything=out.everything,
    )


def run_fresh(
    scenario: Scenario,
    *,
    seed: int | None,
    workdir: Path,
    rate: float = FAULT_RATE,
    mix: tuple[str, ...] | None = None,
) -> Run:
    """`run_on` with a cluster of its own (what the benchmark does once per run)."""
    workdir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(nodes=3, knobs=Knobs(sync_period=1.0), root=str(workdir / "kubesim")).start()
    try:
        return run_on(cluster, scenario, seed=seed, tmp_path=workdir, rate=rate, mix=mix)
    finally:
        cluster.stop()
