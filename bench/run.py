"""`make bench`: rollout-verify against the seed's shell gate, side by side, in one run on kubesim.

Prints ratios measured in this run, never pass/fail thresholds:
  (a) the second seed's gate: `kubectl exec` per pod in a shell loop,
  (b) rollout-verify checking the same key plus one file hash on the same pods,
  (c) the physical limit: exec latency x ceil(pods / concurrency);
then API requests per pod, peak RSS, rollout-detection latency against `kubectl rollout status`,
and the time of `rollout-verify --help`.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import REPO, configmap, deployment

KUBECTL = "/usr/bin/kubectl"
LAST_CPU = [0.0]
LAST_START = [0.0]
GATE = r"""
for pod in $(kubectl get pods -l app=web -o name)
do
  printf '%s: ' "$pod"
  kubectl exec "$pod" -c app -- printenv \
    | cut -d= -f1 \
    | grep -qx FEATURE_CREDENTIAL \
    && echo present || echo missing
done
"""


def run_child(cmd: list[str], env: dict[str, str]) -> tuple[float, int, int, str]:
    """(wall seconds, exit code, peak RSS in KiB, stdout) of one child process; its CPU seconds
    are left in LAST_CPU. The RSS is only an upper bound (see `peak_rss`)."""
    t0 = LAST_START[0] = time.monotonic()
    proc = subprocess.Popen(
        cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, proc.returncode, usage.ru_maxrss, out


def peak_rss(cmd: list[str], env: dict[str, str]) -> tuple[float, int, float]:
    """(wall seconds, exit code, peak RSS in MiB) of `cmd` started by a small launcher, so the
    peak is the child's own and not this process's (see bench/peak.py)."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "bench.peak", *cmd],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.monotonic() - t0
    kib = int(proc.stderr.rstrip().rsplit("peak-rss-kib ", 1)[1])
    return wall, proc.returncode, kib / 1024


def nodes_for(pods: int, least: int) -> int:
    """Enough nodes for `pods` at 100 a node: kubesim's kubelets take the upstream --max-pods
    (110), so 1,000 pods need 10 nodes, as on a real cluster."""
    return max(least, math.ceil(pods / 100))


def web(cluster: Cluster, pods: int) -> None:
    cluster.apply(configmap("web-config", {"app.conf": "mode=prod\n"}))
    cluster.apply(
        deployment(
            "web",
            replicas=pods,
            env=[{"name": "FEATURE_CREDENTIAL", "value": "bench"}],
            volumes=[{"name": "conf", "configMap": {"name": "web-config"}}],
            mounts=[{"name": "conf", "mountPath": "/etc/web"}],
            strategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": "100%"},
            },
        )
    )
    cluster.wait_for(lambda: cluster.rollout_complete("web"), timeout=600, what=f"{pods} pods")


def verify_cmd(kc: str, concurrency: int) -> list[str]:
    digest = hashlib.sha256(b"mode=prod\n").hexdigest()
    return [
        sys.executable,
        "-m",
        "verify",
        "--kubeconfig",
        kc,
        "--deployment",
        "web",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--expect-file",
        f"/etc/web/app.conf=sha256:{digest}",
        "--concurrency",
        str(concurrency),
        "--restart",
        "never",
    ]


def throughput(pods: int, latency: float, concurrency: int, sweep: list[int], tmp: Path) -> dict[str, Any]:
    with Cluster(nodes=nodes_for(pods, 4), knobs=Knobs(exec_latency=latency, sync_period=60)) as cluster:
        kc = cluster.write_kubeconfig(tmp / "kc")
        env = {**os.environ, "KUBECONFIG": kc, "HOME": str(tmp)}
        web(cluster, pods)
        cluster.reset_counts()
        cluster.mark()
        own0, kids0 = time.process_time(), _children_cpu()
        b_wall, b_code, _, _ = run_child(verify_cmd(kc, concurrency), env)
        b_cpu = LAST_CPU[0]
        # kubesim runs in this process; the processes its execs start are its reaped children
        sim_cpu = time.process_time() - own0 + _children_cpu() - kids0 - b_cpu
        first_request = min((cluster.first_seen or {}).values(), default=math.nan) - LAST_START[0]
        b_requests = cluster.requests.total()
        b_execs = cluster.requests[("create", "pods/exec")]
        b_rss_mib = peak_rss(verify_cmd(kc, concurrency), env)[2]
        # the same run with each exec's command started only once its latency has passed
        cluster.knobs.exec_command_after_latency = True
        serial_wall, _, _, _ = run_child(verify_cmd(kc, concurrency), env)
        cluster.knobs.exec_command_after_latency = False
        swept = {n: run_child(verify_cmd(kc, n), env)[0] for n in sweep}
        a_wall, _, _, a_out = run_child(["bash", "-c", GATE], env)
        present = a_out.count("present")
    c = latency * math.ceil(pods / concurrency)
    return {
        "pods": pods,
        "latency": latency,
        "concurrency": concurrency,
        "a": a_wall,
        "b": b_wall,
        "b_serial": serial_wall,
        "c": c,
        "b_code": b_code,
        "b_rss_mib": b_rss_mib,
        "b_cpu": b_cpu,
        "sim_cpu": sim_cpu,
        "first_request": first_request,
        "sweep": swept,
        "requests": b_requests,
        "execs": b_execs,
        "gate_present": present,
    }


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def rss_only(pods: int, concurrency: int, tmp: Path) -> tuple[float, int, float]:
    with Cluster(nodes=nodes_for(pods, 8), knobs=Knobs(sync_period=600)) as cluster:
        kc = cluster.write_kubeconfig(tmp / "kc-rss")
        web(cluster, pods)
        return peak_rss(verify_cmd(kc, concurrency), {**os.environ, "HOME": str(tmp)})


def detection(runs: int, tmp: Path) -> tuple[list[float], list[float]]:
    """Seconds from kubesim flipping the status to complete until each client notices."""
    ours: list[float] = []
    theirs: list[float] = []
    with Cluster(nodes=1, knobs=Knobs(bookmark_interval=30)) as cluster:
        kc = cluster.write_kubeconfig(tmp / "kc-detect")
        env = {**os.environ, "KUBECONFIG": kc, "HOME": str(tmp)}
        for i in range(runs):
            name = f"d{i}"
            cluster.apply(deployment(name, replicas=1, env=[{"name": "A", "value": "1"}]))
            cluster.wait_for(lambda n=name: cluster.rollout_complete(n), what="pods")
            done = cluster.get("Deployment", name)
            assert done is not None
            complete = done["status"]
            cluster.freeze_deployment(name)
            pending = {**complete, "availableReplicas": 0, "readyReplicas": 0, "unavailableReplicas": 1}
            cluster.set_deployment_status(name, pending)
            cluster.mark()
            verify = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "verify",
                    "--deployment",
                    name,
                    "--expect-env",
                    "A",
                    "--restart",
                    "never",
                ],
                env=env,
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            kubectl = subprocess.Popen(
                [KUBECTL, "rollout", "status", f"deployment/{name}", "--timeout=60s"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            # both are watching once each has issued its watch
            cluster.wait_for(lambda: cluster.requests[("watch", "deployments")] >= 2, what="two watches")
            time.sleep(0.2)
            flipped = cluster.set_deployment_status(name, complete)
            kubectl.wait(60)
            kubectl_seen = time.monotonic()
            cluster.wait_for(
                lambda: ("list", "replicasets") in (cluster.first_seen or {}), what="verify noticed"
            )
            verify.wait(60)
            ours.append((cluster.first_seen or {})[("list", "replicasets")] - flipped)
            theirs.append(kubectl_seen - flipped)
            cluster.reset_counts()
    return ours, theirs


def help_time() -> float:
    best = math.inf
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "verify", "--help"], stdout=subprocess.DEVNULL, check=True, cwd=REPO
        )
        best = min(best, time.monotonic() - t0)
    return best


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="make bench")
    ap.add_argument("--pods", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.1, help="seconds kubesim adds to every exec")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rss-pods", type=int, default=1000, help="0 to skip the memory run")
    ap.add_argument("--detect-runs", type=int, default=20)
    ap.add_argument(
        "--sweep", default="16,24,64", help="other --concurrency values to time (b) at, comma-separated"
    )
    args = ap.parse_args(argv)
    sweep = [int(n) for n in args.sweep.split(",") if n.strip()]
    with tempfile.TemporaryDirectory(prefix="rv-bench-") as d:
        tmp = Path(d)
        r = throughput(args.pods, args.latency, args.concurrency, sweep, tmp)
        print(f"pods={r['pods']} exec_latency={r['latency'] * 1000:.0f}ms concurrency={r['concurrency']}")
        print(f"(a) shell gate, kubectl exec per pod : {r['a']:8.2f} s  ({r['gate_present']} present)")
        print(f"(b) rollout-verify                   : {r['b']:8.2f} s  (exit {r['b_code']})")
        print(f"(c) limit latency*ceil(pods/conc)    : {r['c']:8.2f} s")
        print(f"ratio (a)/(b) = {r['a'] / r['b']:.1f}   ratio (b)/(c) = {r['b'] / r['c']:.2f}")
        print(
            f"    of (b): {r['first_request']:.2f} s from start to the first API request (interpreter, "
            f"imports, kubeconfig), then waiting, listing, {r['execs']} execs and the report"
        )
        print(
            f"(b) with each exec's command started only after its latency: {r['b_serial']:.2f} s, "
            f"(b)/(c) = {r['b_serial'] / r['c']:.2f} (the pods' processes then meet the client on "
            "these cores all at once)"
        )
        for n, wall in r["sweep"].items():
            limit = args.latency * math.ceil(args.pods / n)
            print(
                f"(b) at --concurrency {n:3d}: {wall:5.2f} s, (c) {limit:4.2f} s, "
                f"(b)/(c) = {wall / limit:.2f}, (a)/(b) = {r['a'] / wall:.1f}"
            )
        print(
            f"API requests: {r['requests']} total, {r['execs']} execs for {r['pods']} containers, "
            f"{r['requests'] - r['execs']} others -> {r['requests'] / r['pods']:.3f} per pod"
        )
        cores = os.cpu_count() or 1
        print(
            f"CPU during (b): rollout-verify {r['b_cpu']:.2f} s, kubesim {r['sim_cpu']:.2f} s (with the "
            f"processes its execs start) on {cores} cores: that CPU alone needs at least "
            f"{(r['b_cpu'] + r['sim_cpu']) / cores:.2f} s of wall time; the limit (c) counts none"
        )
        # start-up runs alone (kubesim waits for the first request), on one core
        start = r["first_request"]
        floor = start + max(0.0, r["b_cpu"] + r["sim_cpu"] - start) / cores
        print(
            f"    with start-up ({start:.2f} s) on one core and the rest spread over all {cores}: (b) >= "
            f"{floor:.2f} s even with every core busy throughout, (b)/(c) >= {floor / r['c']:.2f}"
        )
        print(f"peak RSS of rollout-verify at {r['pods']} pods: {r['b_rss_mib']:.1f} MiB")
        if args.rss_pods:
            wall, code, rss = rss_only(args.rss_pods, args.concurrency, tmp)
            print(
                f"peak RSS of rollout-verify at {args.rss_pods} pods: {rss:.1f} MiB (wall {wall:.2f} s, exit {code})"
            )
        if args.detect_runs:
            ours, theirs = detection(args.detect_runs, tmp)
            print(
                f"rollout detection over {len(ours)} runs: rollout-verify median {statistics.median(ours) * 1000:.1f} ms "
                f"p95 {p95(ours) * 1000:.1f} ms; kubectl rollout status median {statistics.median(theirs) * 1000:.1f} ms "
                f"p95 {p95(theirs) * 1000:.1f} ms"
            )
        print(f"rollout-verify --help: {help_time():.3f} s (best of 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
