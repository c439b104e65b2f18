"""`make demo`: two short stories on kubesim (the small Kubernetes the tests run: a real API server
over HTTPS, kubelets and pods as local processes), told with the real kubectl, each ending with
rollout-verify and the lines of its output worth reading.

1. A Secret that arrives after the pods start. Deployment web reads its env from Secret
   web-secrets, which the Secrets Store CSI Driver fills from a vault. Helm applies the Deployment
   before the SecretProviderClass (custom kinds last), so after an upgrade one pod runs without
   FEATURE_CREDENTIAL while `kubectl rollout status` and the Service's /health are green.
   rollout-verify finds that pod, says why, restarts the Deployment once and passes.
2. A ConfigMap changed by deleting it and creating it again. ConfigMap shop-prices is immutable;
   the team deletes it, creates it with a new price and restarts Deployment shop, as the
   Kubernetes docs suggest. Every pod still reads the old price: the kubelet on each node keeps its
   copy of an immutable ConfigMap while a pod there uses it. rollout-verify fails at once, sends no
   restart (one would not help) and says what does: publish the content under a new name.

The configs rollout-verify runs with are printed and kept (see KEPT) for trying on a cluster of
your own.

    python -m tests.support.demo [--story 1|2] [--color auto|always|never] [-- FLAG ...]

The demo's own environment never reaches rollout-verify (a VERIFY_* variable left in a shell would
change the stories' endings); what a caller wants changed is said on this command line instead:
`--story` tells one story only, `--color` colours the headings and rollout-verify's output alike
(auto: on a terminal, and not when NO_COLOR is set), and the flags after `--` are added to every
rollout-verify run (`-- --restart never --summary /tmp/summary.md`: tools/docs_images.py makes the
docs' pictures so). The demo exits 0 when the stories it told ended as told; with flags after
`--` their endings are the flags', and it exits 0 once it has told them."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.kubesim import Cluster, Knobs
from tests.support import secretsstore as sss
from tests.support.helpers import REPO, daemonset, deployment, service
from verify.platforms import colour

# bold headings on a terminal only (NO_COLOR), or as --color says (see main)
PAINT = colour.Painter(on=colour.wanted(mode="auto", environ=os.environ, stream=sys.stdout))
KEPT = Path(tempfile.gettempdir()) / "rollout-verify-demo"  # the configs, left for the reader

WEB_CONFIG = """\
targets:
  - target: deployment/web           # expectations from the pod spec, plus each pod's /config
    expect-http: [8080/config]
  - target: daemonset/agent          # expectations from the pod spec
"""
SHOP_CONFIG = """\
targets:
  - target: deployment/shop          # expectations from the pod spec: what its ConfigMap holds
"""
OLD_PRICES, NEW_PRICES = "coffee=3.00\n", "coffee=3.50\n"


def say(text: str) -> None:
    print("\n" + PAINT(f"== {text}", "bold"), flush=True)


def show(k: sss.Kubectl, *args: str) -> None:
    print(f"$ kubectl {' '.join(args)}", flush=True)
    print(k(*args, check=False).rstrip(), flush=True)


def verify(*, kubeconfig: str, config: str, name: str, flags: Sequence[str]) -> tuple[int, list[str]]:
    """rollout-verify as a user runs it, with the config printed and kept, and the caller's `flags`;
    its output as shown (progress and problems on stderr, then the table and the verdict on
    stdout) and its lines."""
    KEPT.mkdir(exist_ok=True)
    path = KEPT / name
    path.write_text(config)
    say(f"Now: rollout-verify --config {name}   (kept at {path})")
    print(config, flush=True)
    cmd = [sys.executable, "-m", "verify", "--kubeconfig", kubeconfig, "--config", str(path), *flags]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_", "GITLAB_"))}
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    print(done.stderr + done.stdout, end="", flush=True)
    return done.returncode, (done.stderr + done.stdout).splitlines()


def recap(points: list[tuple[str, list[str], str]]) -> None:
    """The lines a reader should take away, each with what it tells them."""
    say("What to read in that output")
    for what, lines, fallback in points:
        print(f"  {what}:", flush=True)
        for line in lines or [fallback]:
            print(f"    {line}", flush=True)


def first(lines: list[str], *words: str) -> list[str]:
    return [line for line in lines if all(w in line for w in words)][:1]


def late_secret(cluster: Cluster, k: sss.Kubectl, kubeconfig: str, flags: Sequence[str]) -> tuple[int, int]:
    """Story 1: the exit code and the restarts rollout-verify sent."""
    say("Story 1: a Secret that arrives after the pods start")
    sss.install(k, DB_URL="postgres://db/web")
    print(
        "The Secrets Store CSI Driver (its CRDs as published, 1.6.0) fills Secret web-secrets from the "
        "vault web-kv,\nwhich holds DB_URL. Deployment web reads its env from that Secret.",
        flush=True,
    )
    k.apply(sss.web("1"))
    k.apply(service("web"))
    cluster.apply(daemonset("agent", env=[{"name": "LOG_LEVEL", "value": "info"}]))
    sss.wait(
        lambda: bool(k("get", "events", "--field-selector", "reason=FailedMount", "-o", "name")),
        "FailedMount",
    )
    say("Release 1, in Helm's order: the Deployment first, so its pods cannot mount their volume yet")
    show(k, "get", "pods", "-l", "app=web")
    show(k, "get", "events", "--field-selector", "reason=FailedMount", "-o", "custom-columns=MESSAGE:.message")
    k.apply(sss.provider_class(["DB_URL"]))
    k("rollout", "status", "deployment/web", "--timeout=90s")
    cluster.wait_daemonset("agent")
    say("then the SecretProviderClass: the pods mount it, and the driver creates Secret web-secrets")
    show(k, "get", "secretproviderclass,secretproviderclasspodstatus")
    say("Release 2: the vault gains FEATURE_CREDENTIAL; helm upgrade applies the Deployment, then the class")
    sss.set_vault(k, DB_URL="postgres://db/web", FEATURE_CREDENTIAL="demo-only-value")
    sss.upgrade_in_helm_order(k)
    show(k, "rollout", "status", "deployment/web", "--timeout=60s")
    say("A hand-written check, pod by pod (printenv | cut -d= -f1 | grep -qx FEATURE_CREDENTIAL):")
    for p in sss.pods(k):
        name = p["metadata"]["name"]
        print(f"  pod/{name}: {'present' if sss.has_key(k, name) else 'missing'}", flush=True)
    say("Every pod is Ready. The Service's /health, asked 3 times (each answer is from whichever pod):")
    for _ in range(3):
        answer = k("get", "--raw", "/api/v1/namespaces/default/services/web:80/proxy/health", check=False)
        print(f"  GET /health -> {answer.strip() or 'no answer'}", flush=True)
    cluster.reset_counts()
    code, lines = verify(kubeconfig=kubeconfig, config=WEB_CONFIG, name="verify.yaml", flags=flags)
    restarts = cluster.requests[("patch", "deployments")] + cluster.requests[("patch", "daemonsets")]
    recap(
        [
            ("which pod lacks what (named with its node)", first(lines, "lacks env FEATURE_CREDENTIAL"), "-"),
            ("why, and what fixes it", first(lines, "diagnosis:"), "-"),
            ("what rollout-verify did about it: one restart, as a restart fixes it", first(lines, "restarting once"), "-"),
            ("the verdict, after checking the restarted pods", lines[-1:], "-"),
        ]
    )
    say(f"Story 1 ends: exit code {code}; restarts sent by rollout-verify: {restarts}")
    return code, restarts


def _shop_volume() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [{"name": "prices", "configMap": {"name": "shop-prices"}}], [{"name": "prices", "mountPath": "/etc/shop"}]


def _prices(data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "shop-prices", "namespace": "default"},
        "data": {"prices.conf": data},
        "immutable": True,
    }


def recreated_configmap(
    cluster: Cluster, k: sss.Kubectl, kubeconfig: str, flags: Sequence[str]
) -> tuple[int, int]:
    """Story 2: the exit code and the restarts rollout-verify sent."""
    say("Story 2: an immutable ConfigMap changed by deleting it and creating it again")
    volumes, mounts = _shop_volume()
    k.apply(_prices(OLD_PRICES))
    k.apply(deployment("shop", replicas=2, volumes=volumes, mounts=mounts))
    k.apply(daemonset("shop-agent", volumes=volumes, mounts=mounts))  # reads the prices on every node
    k("rollout", "status", "deployment/shop", "--timeout=90s")
    k("rollout", "status", "daemonset/shop-agent", "--timeout=90s")
    print(
        "ConfigMap shop-prices (immutable: true, prices.conf: coffee=3.00) is mounted by Deployment shop\n"
        "and by DaemonSet shop-agent, which runs on every node.",
        flush=True,
    )
    say("The price changes. An immutable ConfigMap cannot be edited: delete it, create it again, restart")
    show(k, "delete", "configmap", "shop-prices")
    print("$ kubectl apply -f shop-prices.yaml     # immutable: true, prices.conf: coffee=3.50", flush=True)
    print(k.apply(_prices(NEW_PRICES)).rstrip(), flush=True)
    show(k, "rollout", "restart", "deployment/shop")
    show(k, "rollout", "status", "deployment/shop", "--timeout=90s")
    def shop_pods() -> list[str]:
        return sorted(k("get", "pods", "-l", "app=shop", "-o", "name").split())

    sss.wait(lambda: len(shop_pods()) == 2, "the old pods of shop to be gone")
    say("What each pod of shop reads (kubectl exec POD -- cat /etc/shop/prices.conf):")
    for p in shop_pods():
        print(f"  {p}: {k('exec', p, '--', 'cat', '/etc/shop/prices.conf', check=False).strip()}", flush=True)
    cluster.reset_counts()
    code, lines = verify(kubeconfig=kubeconfig, config=SHOP_CONFIG, name="shop.yaml", flags=flags)
    restarts = cluster.requests[("patch", "deployments")]
    recap(
        [
            ("which pods read what (named with their nodes)", first(lines, "differs from configmap shop-prices"), "-"),
            ("why a restart cannot help, and what does", first(lines, "diagnosis:"), "-"),
            ("the verdict: failed at once, nothing restarted", lines[-1:], "-"),
        ]
    )
    say(f"Story 2 ends: exit code {code}; restarts sent by rollout-verify: {restarts}")
    return code, restarts


def options(argv: Sequence[str]) -> argparse.Namespace:
    """The demo's command line (see the module's docstring): its own options, then `--` and the
    flags every rollout-verify run gets."""
    own, dash, flags = list(argv), [], []
    if "--" in own:
        at = own.index("--")
        own, dash, flags = own[:at], own[at : at + 1], own[at + 1 :]
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.demo",
        usage="%(prog)s [--story 1|2] [--color auto|always|never] [-- FLAG ...]",
        description="make demo: two short stories on kubesim, each ending with rollout-verify's run.",
        epilog="Flags after -- go to every rollout-verify run (-- --restart never --summary /tmp/s.md); "
        "the demo's own VERIFY_* environment never does.",
    )
    parser.add_argument("--story", type=int, choices=(1, 2), help="tell only this story (default: both)")
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour the headings and rollout-verify's output (auto: on a terminal, unless NO_COLOR)",
    )  # fmt: skip
    parsed = parser.parse_args(own)
    parsed.flags = [*(["--color", parsed.color] if parsed.color != "auto" else []), *flags]
    parsed.told_as_is = not (dash and flags)
    return parsed


def main(argv: Sequence[str] | None = None) -> int:
    global PAINT
    opts = options(sys.argv[1:] if argv is None else argv)
    PAINT = colour.Painter(on=colour.wanted(mode=opts.color, environ=os.environ, stream=sys.stdout))
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
        print(
            "rollout-verify looks inside every pod after a rollout and checks that each one runs the\n"
            "configuration you shipped. Two stories follow; both are ordinary days with Kubernetes.",
            flush=True,
        )
        ends = {}
        if opts.story in (None, 1):
            ends[1] = late_secret(cluster, k, kc, opts.flags)
        if opts.story in (None, 2):
            ends[2] = recreated_configmap(cluster, k, kc, opts.flags)
    say(f"The configs are kept in {KEPT}: point them at a cluster of yours with --kubeconfig or --context")
    # the stories went as told: a pass after one restart, then a failure with none
    told = {1: (0, 1), 2: (1, 0)}
    return 0 if not opts.told_as_is or all(ends[n] == told[n] for n in ends) else 1


if __name__ == "__main__":
    sys.exit(main())
