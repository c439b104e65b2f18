"""`make demo`: the second seed on kubesim. A Secret gains FEATURE_CREDENTIAL after the pods
started, one pod is replaced and sees it, the other does not; rollout-verify finds the stale pod,
restarts the Deployment once and passes."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers import REPO, deployment, secret
from tests.kubesim.cluster import Cluster, Knobs


def say(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m", flush=True)


def main() -> int:
    with (
        tempfile.TemporaryDirectory(prefix="rollout-verify-demo-") as tmp,
        Cluster(nodes=2, knobs=Knobs(sync_period=5)) as cluster,
    ):
        kc = cluster.write_kubeconfig(Path(tmp) / "kubeconfig")
        say(f"kubesim is up at {cluster.url} (2 nodes); kubeconfig {kc}")
        cluster.apply(secret("web-secrets", {"DB_URL": "postgres://db/web"}))
        cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-secrets"}}]))
        cluster.wait_rollout("web")
        say("deployment web rolled out; then the Secrets Store CSI driver syncs FEATURE_CREDENTIAL")
        cluster.apply(
            secret("web-secrets", {"DB_URL": "postgres://db/web", "FEATURE_CREDENTIAL": "demo-only-value"})
        )
        pods = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))
        cluster.delete("Pod", pods[0])
        cluster.wait_rollout("web")
        say("kubectl rollout status says complete; every pod is Ready. Now: rollout-verify")
        cmd = [
            sys.executable,
            "-m",
            "verify",
            "--kubeconfig",
            kc,
            "--deployment",
            "web",
        ]
        # no --expect-*: the expectations come from the pod spec and the live Secret
        print("$ rollout-verify --deployment web", flush=True)
        code = subprocess.call(cmd, cwd=REPO)
        say(
            f"exit code {code}; restarts issued by rollout-verify: {cluster.requests[('patch', 'deployments')]}"
        )
        return code


if __name__ == "__main__":
    sys.exit(main())
