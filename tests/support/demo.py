"""`make demo`: the second seed on kubesim. A Secret gains FEATURE_CREDENTIAL after the pods
started, one pod is replaced and sees it, the other does not. The Service's /health stays green;
rollout-verify checks every pod of the Deployment and of a DaemonSet shipped with it, finds the
stale pod (by its env and by its own /config answer), restarts the Deployment once and passes."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import REPO, daemonset, http_app_deployment, secret, service
from verify.platforms import colour

# bold headings on a terminal only (NO_COLOR, VERIFY_COLOR=always|never as for rollout-verify)
_MODE = os.environ.get("VERIFY_COLOR", "auto")
PAINT = colour.Painter(
    on=colour.wanted(
        mode=_MODE if _MODE in ("always", "never") else "auto", environ=os.environ, stream=sys.stdout
    )
)

CONFIG = """\
targets:
  - target: deployment/web           # expectations from the pod spec, plus each pod's /config
    expect-http: [8080/config]
  - target: daemonset/agent          # expectations from the pod spec
"""


def say(text: str) -> None:
    print("\n" + PAINT(f"== {text}", "bold"), flush=True)


def main() -> int:
    with (
        tempfile.TemporaryDirectory(prefix="rollout-verify-demo-") as tmp,
        Cluster(nodes=2, knobs=Knobs(sync_period=5)) as cluster,
    ):
        kc = cluster.write_kubeconfig(Path(tmp) / "kubeconfig")
        say(f"kubesim is up at {cluster.url} (2 nodes); kubeconfig {kc} (removed when the demo ends)")
        cluster.apply(secret("web-secrets", {"DB_URL": "postgres://db/web"}))
        cluster.apply(
            http_app_deployment(
                "web",
                replicas=2,
                env_from=[{"secretRef": {"name": "web-secrets"}}],
                required_env=["FEATURE_CREDENTIAL"],
            )
        )
        cluster.apply(service("web"))
        cluster.apply(daemonset("agent", env=[{"name": "LOG_LEVEL", "value": "info"}]))
        cluster.wait_rollout("web")
        cluster.wait_daemonset("agent")
        say(
            "deployment web and daemonset agent rolled out; then the Secrets Store CSI driver syncs FEATURE_CREDENTIAL"
        )
        cluster.apply(
            secret("web-secrets", {"DB_URL": "postgres://db/web", "FEATURE_CREDENTIAL": "demo-only-value"})
        )
        pods = sorted(
            p["metadata"]["name"] for p in cluster.list("Pod") if p["metadata"]["name"].startswith("web-")
        )
        cluster.delete("Pod", pods[0])
        cluster.wait_rollout("web")
        env = {"KUBECONFIG": kc, "HOME": tmp, "PATH": "/usr/bin:/bin"}
        say("kubectl rollout status deployment/web")
        subprocess.call(["kubectl", "rollout", "status", "deployment/web", "--timeout=60s"], env=env)
        say("Every pod is Ready. The Service's /health, asked 3 times (each answer is from whichever pod):")
        for _ in range(3):
            answer = subprocess.run(
                ["kubectl", "get", "--raw", "/api/v1/namespaces/default/services/web:80/proxy/health"],
                env=env,
                capture_output=True,
                text=True,
            )
            print(f"  GET /health -> {(answer.stdout or answer.stderr).strip()}", flush=True)
        config = Path(tmp) / "verify.yaml"
        config.write_text(CONFIG)
        say("Now: rollout-verify --config verify.yaml")
        print(CONFIG, flush=True)
        cmd = [sys.executable, "-m", "verify", "--kubeconfig", kc, "--config", str(config)]
        code = subprocess.call(cmd, cwd=REPO)
        restarts = cluster.requests[("patch", "deployments")] + cluster.requests[("patch", "daemonsets")]
        say(f"exit code {code}; restarts issued by rollout-verify: {restarts}")
        return code


if __name__ == "__main__":
    sys.exit(main())
