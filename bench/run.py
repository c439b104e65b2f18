"""`make bench`: rollout-verify against the least possible client, side by side, in one run on kubesim.

Prints ratios measured in this run, never pass/fail thresholds, at each size (`--sizes`, 50, 200
and 1,000 pods in one Deployment by default):
  (b) rollout-verify checking one env key plus one file hash on every pod,
  (c) the floor (bench/floor.py): list the pods once, one WebSocket exec per pod with the same
      probe, the same concurrency, nothing else,
run alternately (b c, c b, ...) so the shared machine's drift falls on both; medians of wall and
CPU time, (b)/(c) for each, and each one's start-up: process start to its first API request.
Then per-pod cost (after start-up) and its growth between sizes, API requests (execs per
container, single-pod GETs), peak RSS, (a) the second seed's gate (`kubectl exec` per pod in a
shell loop) up to `--gate-max` pods, the old "exec latency x ceil(pods / concurrency)" figure as
context only, rollout-detection latency against `kubectl rollout status`, and `--help`'s time.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.floor import write_spec
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


def run_child(
    cmd: list[str], env: dict[str, str], *, started: Callable[[int], None] | None = None
) -> tuple[float, int, int, str]:
    """(wall seconds, exit code, peak RSS in KiB, stdout) of one child process; its CPU seconds
    are left in LAST_CPU. The RSS is only an upper bound (see `peak_rss`). `started` gets the
    child's pid as soon as it runs."""
    t0 = LAST_START[0] = time.monotonic()
    proc = subprocess.Popen(
        cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    if started is not None:
        started(proc.pid)
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


PART_OF = "app.kubernetes.io/part-of"


def web(cluster: Cluster, pods: int, *, workloads: int = 0) -> None:
    """One Deployment `web` of `pods` pods; or, with `workloads`, that many Deployments w0, w1, ...
    of `pods` pods each, labelled part-of=bench (Deployment and pods), found by --selector."""
    cluster.apply(configmap("web-config", {"app.conf": "mode=prod\n"}))
    names = [f"w{i}" for i in range(workloads)] if workloads else ["web"]
    for name in names:
        obj = _web_deployment(name, pods)
        if workloads:
            obj["metadata"]["labels"] = {PART_OF: "bench"}
            obj["spec"]["template"]["metadata"]["labels"][PART_OF] = "bench"
        cluster.apply(obj)

    def complete() -> bool:
        try:
            return all(cluster.rollout_complete(n) for n in names)
        except TimeoutError:  # kubesim's loop busy starting 1,000 pods' processes: ask again
            return False

    cluster.wait_for(complete, timeout=900, what=f"{len(names)} x {pods} pods")


def _web_deployment(name: str, pods: int) -> dict[str, Any]:
    return deployment(
        name,
        replicas=pods,
        env=[{"name": "FEATURE_CREDENTIAL", "value": "bench"}],
        volumes=[{"name": "conf", "configMap": {"name": "web-config"}}],
        mounts=[{"name": "conf", "mountPath": "/etc/web"}],
        strategy={
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": "100%"},
        },
    )


def verify_cmd(kc: str, concurrency: int, *, selector: bool = False) -> list[str]:
    digest = hashlib.sha256(b"mode=prod\n").hexdigest()
    return [
        sys.executable,
        "-m",
        "verify",
        "--kubeconfig",
        kc,
        *(["--selector", f"{PART_OF}=bench"] if selector else ["--deployment", "web"]),
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--expect-file",
        f"/etc/web/app.conf=sha256:{digest}",
        "--concurrency",
        str(concurrency),
        "--restart",
        "never",
    ]


def floor_cmd(kc: str, spec: str) -> list[str]:
    return [sys.executable, "-m", "bench.floor", kc, spec]


def floor_spec(concurrency: int, *, selector: str = "app=web") -> str:
    """The floor's SPEC.json: the product's own probe command and input for the bench's
    expectations (one env key, one file), so (b) and (c) ask the pods for exactly the same work."""
    from verify.findings import Expectations, ExpectedFile
    from verify.flow.probe.protocol import probe_argv, probe_input

    digest = hashlib.sha256(b"mode=prod\n").hexdigest()
    expected = Expectations(
        env=("FEATURE_CREDENTIAL",),
        files=(ExpectedFile(path="/etc/web/app.conf", sha256=digest, origin="sha256"),),
    )
    return write_spec(
        argv=probe_argv(),
        stdin=probe_input(expected),
        concurrency=concurrency,
        selector=selector,
        container="app",
    )


@dataclass
class Runs:
    """One client's runs at one size: wall and CPU seconds, seconds from start to its first API request."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    start: list[float] = field(default_factory=list)
    start_cpu: list[float] = field(default_factory=list)
    to_exec: list[float] = field(default_factory=list)  # first request -> first exec
    codes: list[int] = field(default_factory=list)

    def add(self, cluster: Cluster, cmd: list[str], env: dict[str, str]) -> None:
        cluster.mark()
        cpu_then: list[float] = []
        watcher: list[threading.Thread] = []

        def started(pid: int) -> None:
            watcher.append(threading.Thread(target=_cpu_at_first_request, args=(cluster, pid, cpu_then)))
            watcher[0].start()

        wall, code, _, _ = run_child(cmd, env, started=started)
        watcher[0].join()
        self.wall.append(wall)
        self.cpu.append(LAST_CPU[0])
        seen = cluster.first_seen or {}
        first = min(seen.values(), default=math.nan)
        self.start.append(first - LAST_START[0])
        self.to_exec.append(seen.get(("create", "pods/exec"), math.nan) - first)
        self.start_cpu.append(cpu_then[0] if cpu_then else math.nan)
        self.codes.append(code)

    def med(self, what: str) -> float:
        values: list[float] = getattr(self, what)
        return statistics.median(values)


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_at_first_request(cluster: Cluster, pid: int, out: list[float]) -> None:
    """The child's CPU seconds (user + system, /proc/PID/stat, 10 ms ticks) when kubesim sees its
    first request: start-up in CPU, which the shared machine's load stretches far less than wall."""
    stat = f"/proc/{pid}/stat"
    while True:
        try:
            with open(stat, encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return  # ended (reaped) before any request
        if fields[0] == "Z":
            return
        if cluster.first_seen:  # read just after: an upper bound (by the poll's 2 ms, and the load's delay)
            out.append((int(fields[11]) + int(fields[12])) / _TICK)
            return
        time.sleep(0.002)


def nodes_for(pods: int) -> int:
    """Enough kubesim nodes for `pods` under the scheduler's 110 pods per node (kubelet maxPods)."""
    return max(4, math.ceil(pods / 100))


def measure(
    pods: int, latency: float, concurrency: int, rounds: int, gate: bool, tmp: Path, *, workloads: int = 0
) -> dict[str, Any]:
    """(b) rollout-verify and (c) the floor, alternately (b c, c b, b c, ...) so drift in the
    shared machine's load falls on both; then one more (b) for its request counts and peak RSS.
    With `workloads`, that many Deployments of `pods` pods, verified through --selector."""
    total = pods * max(1, workloads)
    with Cluster(nodes=nodes_for(total), knobs=Knobs(exec_latency=latency, sync_period=600)) as cluster:
        kc = cluster.write_kubeconfig(tmp / f"kc-{total}-{workloads}")
        # the settle window (--min-ready) is a wait for pods that just turned ready, not work: the
        # first run after the rollout would wait it and the floor never does
        env = {**os.environ, "KUBECONFIG": kc, "HOME": str(tmp), "VERIFY_MIN_READY": "0"}
        web(cluster, pods, workloads=workloads)
        spec = floor_spec(concurrency, selector=f"{PART_OF}=bench" if workloads else "app=web")
        command = verify_cmd(kc, concurrency, selector=bool(workloads))
        b, c = Runs(), Runs()
        try:
            for i in range(rounds):
                pair = [(b, command), (c, floor_cmd(kc, spec))]
                for runs, cmd in pair if i % 2 == 0 else pair[::-1]:
                    runs.add(cluster, cmd, env)
        finally:
            os.unlink(spec)
        cluster.reset_counts()
        own0, kids0 = time.process_time(), _children_cpu()
        b_wall, b_code, _, _ = run_child(command, env)
        # kubesim runs in this process; the processes its execs start are its reaped children
        sim_cpu = time.process_time() - own0 + _children_cpu() - kids0 - LAST_CPU[0]
        counts = dict(cluster.requests.counts)
        rss = peak_rss(command, env)[2]
        a_wall, present = math.nan, -1
        if gate:
            a_wall, _, _, a_out = run_child(["bash", "-c", GATE], env)
            present = a_out.count("present")
    execs = counts.get(("create", "pods/exec"), 0)
    return {
        "pods": total,
        "workloads": workloads,
        "b": b,
        "c": c,
        "a": a_wall,
        "gate_present": present,
        "b_code": b_code,
        "b_wall_counted": b_wall,
        "sim_cpu": sim_cpu,
        "rss": rss,
        "requests": sum(counts.values()),
        "execs": execs,
        "pod_gets": counts.get(("get", "pods"), 0),
        "waves": latency * math.ceil(total / concurrency),
    }


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def detection(runs: int, tmp: Path) -> tuple[list[float], list[float]]:
    """Seconds from kubesim flipping the status to complete until each client notices."""
    ours: list[float] = []
    theirs: list[float] = []
    with Cluster(nodes=1, knobs=Knobs(bookmark_interval=30)) as cluster:
        kc = cluster.write_kubeconfig(tmp / "kc-detect")
        # only the watch is timed: no look at the pods while waiting (--fail-fast lists them every 5 s),
        # no settle window after
        env = {
            **os.environ,
            "KUBECONFIG": kc,
            "HOME": str(tmp),
            "VERIFY_FAIL_FAST": "false",
            "VERIFY_MIN_READY": "0",
        }
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


def report(r: dict[str, Any], concurrency: int) -> None:
    b, c, pods = r["b"], r["c"], r["pods"]
    bw, cw, bc, cc = b.med("wall"), c.med("wall"), b.med("cpu"), c.med("cpu")
    bs, cs = b.med("start"), c.med("start")
    codes = f"exit {','.join(str(x) for x in b.codes)}" + (
        "" if set(c.codes) == {0} else f"; (c) exit {c.codes}"
    )
    if r["workloads"]:
        print(f"{r['workloads']} Deployments of {pods // r['workloads']} pods, by --selector:")
    print(
        f"{pods:5d} pods  (b) {bw:6.2f} s wall {bc:5.2f} s CPU   (c) {cw:6.2f} s wall {cc:5.2f} s CPU   "
        f"(b)/(c) wall {bw / cw:.2f}  CPU {bc / cc:.2f}   ({codes})"
    )
    bsc, csc = b.med("start_cpu"), c.med("start_cpu")
    print(
        f"      start-up to the first API request: (b) {bs:.3f} s wall {bsc:.2f} s CPU  (c) {cs:.3f} s wall "
        f"{csc:.2f} s CPU   per pod after it: "
        f"(b) {(bw - bs) / pods * 1000:.2f} ms wall {(bc - bsc) / pods * 1000:.2f} ms CPU, "
        f"(c) {(cw - cs) / pods * 1000:.2f} ms wall {(cc - csc) / pods * 1000:.2f} ms CPU"
    )
    print(
        f"      first exec after the first request (waiting, listing, planning): (b) {b.med('to_exec'):.3f} s  "
        f"(c) {c.med('to_exec'):.3f} s"
    )
    others = r["requests"] - r["execs"]
    per_workload = f", {others / r['workloads']:.1f} per workload" if r["workloads"] else ""
    print(
        f"      API requests: {r['execs']} execs for {pods} containers + {others} others{per_workload} "
        f"({r['pod_gets']} single-pod GETs); peak RSS {r['rss']:.1f} MiB; kubesim CPU {r['sim_cpu']:.2f} s "
        f"beside (b)'s; context: latency x ceil(pods / {concurrency}) = {r['waves']:.2f} s, "
        f"(b) / that = {bw / r['waves']:.2f}"
    )
    if not math.isnan(r["a"]):
        print(
            f"      (a) shell gate, kubectl exec per pod: {r['a']:.2f} s ({r['gate_present']} present), "
            f"(a)/(b) = {r['a'] / bw:.1f}"
        )


def per_pod(r: dict[str, Any], runs: str) -> tuple[float, float]:
    """Wall and CPU seconds per pod after start-up (from the first API request on)."""
    x = r[runs]
    return (x.med("wall") - x.med("start")) / r["pods"], (x.med("cpu") - x.med("start_cpu")) / r["pods"]


def growth(results: list[dict[str, Any]]) -> None:
    """Per-pod cost of each size against the previous one: linear growth keeps it flat (x1.00).
    (b)'s growth over (c)'s is what the product adds; the rest is the machine's (kubesim's pods
    share these cores)."""
    for prev, cur in itertools.pairwise(results):
        bw0, bc0 = per_pod(prev, "b")
        bw1, bc1 = per_pod(cur, "b")
        cw0, cc0 = per_pod(prev, "c")
        cw1, cc1 = per_pod(cur, "c")
        print(
            f"per-pod cost after start-up, {cur['pods']} vs {prev['pods']} pods: (b) wall x{bw1 / bw0:.2f} "
            f"CPU x{bc1 / bc0:.2f}; (c) wall x{cw1 / cw0:.2f} CPU x{cc1 / cc0:.2f}; (b)'s growth over (c)'s: "
            f"wall x{bw1 / bw0 / (cw1 / cw0):.2f} CPU x{bc1 / bc0 / (cc1 / cc0):.2f}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.run", description="(b) rollout-verify against (c) the floor, side by side (make bench)"
    )
    ap.add_argument("--sizes", default="50,200,1000", help="pod counts, comma-separated")
    ap.add_argument("--pods", type=int, help="one size only (same as --sizes N)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating runs of (b) and (c) per size")
    ap.add_argument("--latency", type=float, default=0.1, help="seconds kubesim adds to every exec")
    ap.add_argument("--concurrency", type=int, default=32, help="parallel execs, for (b) and (c) alike")
    ap.add_argument("--gate-max", type=int, default=200, help="run the shell gate (a) up to this many pods")
    ap.add_argument(
        "--workloads", default="100x10", help="WxP: W Deployments of P pods by --selector (0 to skip)"
    )
    ap.add_argument(
        "--detect-runs", type=int, default=20, help="runs timing rollout detection against kubectl (0 to skip)"
    )
    args = ap.parse_args(argv)
    sizes = [args.pods] if args.pods else [int(n) for n in args.sizes.split(",") if n.strip()]
    print(
        f"exec_latency={args.latency * 1000:.0f}ms concurrency={args.concurrency}; medians of {args.rounds} "
        "alternating runs; (b) rollout-verify, (c) the floor: bench/floor.py, the least client doing the same "
        "list and execs"
    )
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rv-bench-") as d:
        tmp = Path(d)
        for pods in sizes:
            r = measure(pods, args.latency, args.concurrency, args.rounds, pods <= args.gate_max, tmp)
            report(r, args.concurrency)
            results.append(r)
        growth(results)
        if args.workloads not in ("", "0"):
            count, per = (int(n) for n in args.workloads.lower().split("x"))
            r = measure(per, args.latency, args.concurrency, args.rounds, False, tmp, workloads=count)
            report(r, args.concurrency)
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
