"""`python -m tests.kubesim serve --kubeconfig PATH [--nodes N] [--audit-log FILE]`: a standalone
cluster, with the kube-system pods a kind cluster runs (`--no-system-pods` leaves them out)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .apiserver.audit import AuditLog
from .cluster import Cluster
from .knobs import Knobs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.kubesim")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="run a cluster until SIGTERM/SIGINT")
    s.add_argument("--kubeconfig", required=True, help="where to write an admin kubeconfig")
    s.add_argument("--nodes", type=int, default=3)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--exec-latency", type=float, default=0.0, help="seconds added to every exec")
    s.add_argument("--api-latency", type=float, default=0.0, help="seconds added to every request")
    s.add_argument("--sync-period", type=float, default=60.0, help="kubelet volume refresh period")
    s.add_argument("--audit-log", metavar="FILE", help="one JSON line per request, as --audit-log-path")
    s.add_argument("--no-system-pods", action="store_true", help="no coredns, etcd, kube-proxy, ... pods")
    args = p.parse_args(argv)
    knobs = Knobs(
        exec_latency=args.exec_latency,
        api_latency=args.api_latency,
        sync_period=args.sync_period,
        system_pods=not args.no_system_pods,
    )
    cluster = Cluster(nodes=args.nodes, seed=args.seed, knobs=knobs)
    if args.audit_log:
        cluster.audit = AuditLog(args.audit_log)
    cluster.start()
    cluster.write_kubeconfig(args.kubeconfig)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    print(f"kubesim ready {cluster.url} nodes={args.nodes} kubeconfig={args.kubeconfig}", flush=True)
    try:
        done.wait()
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
