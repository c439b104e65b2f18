"""`make demo`: the second seed on kubesim, with its own stack. The Secrets Store CSI Driver's
CRDs (as published) are applied, and Deployment web mounts a SecretProviderClass that syncs
vault objects into Secret web-secrets, its env source. Helm applies the Deployment before the
class (custom kinds last): the pods wait in ContainerCreating with the driver's FailedMount until
the class exists. Then the vault gains FEATURE_CREDENTIAL and a Helm-ordered upgrade leaves one
of two pods without it; the Service's /health stays green. rollout-verify, with no expectations
for web but its pods' /config, checks every pod of the Deployment and of a DaemonSet shipped with
it, names the pod, the class and the ordering, restarts the Deployment once and passes."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.kubesim import Cluster, Knobs
from tests.support import secretsstore as sss
from tests.support.helpers import REPO, daemonset, service
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


def show(k: sss.Kubectl, *args: str) -> None:
    print(f"$ kubectl {' '.join(args)}", flush=True)
    print(k(*args, check=False).rstrip(), flush=True)


def main() -> int:
    knobs = Knobs(
        sync_period=5, mount_backoff_max=2.0, secrets_store_rotation=True, rotation_poll_interval=1.0
    )
    with (
        tempfile.TemporaryDirectory(prefix="rollout-verify-demo-") as tmp,
        Cluster(nodes=2, knobs=knobs) as cluster,
    ):
        kc = cluster.write_kubeconfig(Path(tmp) / "kubeconfig")
        k = sss.Kubectl(kc, Path(tmp))
        say(f"kubesim is up at {cluster.url} (2 nodes); kubeconfig {kc} (removed when the demo ends)")
        sss.install(k, DB_URL="postgres://db/web")
        say("Secrets Store CSI Driver CRDs applied as published (1.6.0); the vault web-kv holds DB_URL")
        k.apply(sss.web("1"))
        k.apply(service("web"))
        cluster.apply(daemonset("agent", env=[{"name": "LOG_LEVEL", "value": "info"}]))
        sss.wait(
            lambda: bool(k("get", "events", "--field-selector", "reason=FailedMount", "-o", "name")),
            "FailedMount",
        )
        say("Release 1 in Helm's order: the Deployment first, so its pods cannot mount their volume yet")
        show(k, "get", "pods", "-l", "app=web")
        show(
            k,
            "get",
            "events",
            "--field-selector",
            "reason=FailedMount",
            "-o",
            "custom-columns=MESSAGE:.message",
        )
        k.apply(sss.provider_class(["DB_URL"]))
        k("rollout", "status", "deployment/web", "--timeout=90s")
        cluster.wait_daemonset("agent")
        say("then the SecretProviderClass: the pods mount it, and the driver creates Secret web-secrets")
        show(k, "get", "secretproviderclass,secretproviderclasspodstatus")
        say(
            "Release 2: the vault gains FEATURE_CREDENTIAL; helm upgrade applies the Deployment, then the class"
        )
        sss.set_vault(k, DB_URL="postgres://db/web", FEATURE_CREDENTIAL="demo-only-value")
        sss.upgrade_in_helm_order(k)
        say("kubectl rollout status deployment/web")
        show(k, "rollout", "status", "deployment/web", "--timeout=60s")
        say("The seed's own check, pod by pod (printenv | cut -d= -f1 | grep -qx FEATURE_CREDENTIAL):")
        for p in sss.pods(k):
            name = p["metadata"]["name"]
            print(f"  pod/{name}: {'present' if sss.has_key(k, name) else 'missing'}", flush=True)
        say("Every pod is Ready. The Service's /health, asked 3 times (each answer is from whichever pod):")
        for _ in range(3):
            answer = k("get", "--raw", "/api/v1/namespaces/default/services/web:80/proxy/health", check=False)
            print(f"  GET /health -> {answer.strip() or 'no answer'}", flush=True)
        config = Path(tmp) / "verify.yaml"
        config.write_text(CONFIG)
        say("Now: rollout-verify --config verify.yaml")
        print(CONFIG, flush=True)
        cmd = [sys.executable, "-m", "verify", "--kubeconfig", kc, "--config", str(config)]
        cluster.reset_counts()
        code = subprocess.call(cmd, cwd=REPO)
        restarts = cluster.requests[("patch", "deployments")] + cluster.requests[("patch", "daemonsets")]
        say(f"exit code {code}; restarts issued by rollout-verify: {restarts}")
        return code


if __name__ == "__main__":
    sys.exit(main())
