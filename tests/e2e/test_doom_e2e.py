"""Rollouts that cannot succeed, on kubesim through the real CLI: a container that crashes or
turns unready is never verified (issue #30: a crash-looping pod used to pass), and a pod that no
waiting heals (a missing image tag, a missing command) ends the wait with exit 4 long before
--timeout, naming the pod and the kubelet's reason, while a Secret synced late is waited for."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify, secret

# prints one line (with a terminal escape that must reach no output raw) and exits 3
CRASH = ["sh", "-c", r"printf 'starting with config v2 \033[31mred\n'; exit 3"]


def patches(cluster: Cluster) -> int:
    return cluster.requests[("patch", "deployments")]


def test_a_crash_looping_container_is_never_verified_and_its_last_line_is_shown(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("crash", replicas=1, command=CRASH))
    # the default settle window (5 s): the pod is Ready only for an instant after each start
    out = run_verify(
        "crash", "--min-ready", "5s", "--timeout", "5m", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code in (1, 4), out.everything
    assert "PASSED" not in out.stdout
    assert "log: starting with config v2 \\x1b[31mred" in out.stderr, out.everything
    assert "\x1b" not in out.everything  # escaped through the one escape, in every output
    assert patches(cluster) == 0  # a restart recreates the same crash


def test_a_container_between_two_crashes_is_never_verified_however_long_its_runs_last(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    # each run outlasts the settle window: inspected while it runs again after its first crash,
    # it is the same container, running and ready, from selection to the end of its inspection
    cluster.apply(deployment("slowcrash", replicas=1, command=["sh", "-c", "sleep 12; exit 3"]))

    def running_again() -> bool:
        for p in cluster.list("Pod"):
            if p["metadata"]["name"].startswith("slowcrash-"):
                (c,) = p.get("status", {}).get("containerStatuses") or [{}]
                return c.get("restartCount", 0) >= 1 and c.get("ready") is True
        return False

    cluster.wait_for(running_again, timeout=60, what="the container to run again after its crash")
    out = run_verify("slowcrash", "--min-ready", "1s", "--timeout", "60s", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert "PASSED" not in out.stdout
    assert "container app is not stable: " in out.stderr, out.everything
    assert patches(cluster) == 0  # a restart recreates the same crash


def test_a_readiness_probe_that_passes_once_then_fails_is_never_verified(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    web = deployment("flaky", replicas=1, command=["sleep", "3600"])
    # passes once, so the pod is Ready for one period (4 s: long enough for the rollout to count it
    # on a loaded machine), shorter than the settle window
    web["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = {
        "exec": {"command": ["sh", "-c", "test ! -e /tmp/seen && touch /tmp/seen"]},
        "periodSeconds": 4,
        "failureThreshold": 1,
    }
    cluster.apply(web)
    out = run_verify(
        "flaky", "--min-ready", "10s", "--timeout", "90s", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code in (1, 4), out.everything
    assert "container app is not stable:" in out.stderr, out.everything
    assert "running but not ready" in out.stderr
    assert "event: Unhealthy" in out.stderr  # the probe's failure, from the pod's events
    assert patches(cluster) == 0


def test_a_missing_tag_a_missing_command_and_no_matching_node_end_the_wait_with_exit_4_naming_pod_and_reason(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("badtag", replicas=1, image="busybox:doesnotexist"))
    cluster.apply(deployment("nocmd", replicas=1, command=["no-such-binary"]))
    # and a pod no node will ever take (its node selector matches none; not a shortage of room)
    nowhere = deployment("nowhere", replicas=1)
    nowhere["spec"]["template"]["spec"]["nodeSelector"] = {"disktype": "ssd"}
    cluster.apply(nowhere)
    out = run_verify(
        "deploy/badtag",
        "deploy/nocmd",
        "deploy/nowhere",
        "--timeout",
        "5m",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 4, out.everything
    assert out.report is not None and out.report["duration_seconds"] < 60, out.report
    verdicts = {w["name"]: w["error"] for w in out.report["workloads"]}
    assert "(--fail-fast): pod badtag-" in verdicts["badtag"], verdicts
    assert "container app: ErrImagePull: " in verdicts["badtag"]
    assert "busybox:doesnotexist: not found" in verdicts["badtag"]
    assert "container app: StartError: " in verdicts["nocmd"], verdicts
    assert 'exec: "no-such-binary": executable file not found in $PATH' in verdicts["nocmd"]
    assert (
        "pod nowhere-" in verdicts["nowhere"]
        and ": FailedScheduling: 0/3 nodes are available: 3 node(s) "
        "didn't match Pod's node affinity/selector."
        in verdicts["nowhere"]
    ), verdicts
    assert 'event: Failed (x2): Failed to pull image "busybox:doesnotexist"' in out.stderr, out.stderr
    assert patches(cluster) == 0

    waited = run_verify(
        "deploy/nocmd", "--no-fail-fast", "--timeout", "12s", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert waited.code == 4, waited.everything
    assert "timed out waiting for the rollout" in waited.stdout
    assert waited.report is not None and waited.report["duration_seconds"] >= 12


def test_a_secret_created_after_the_deployment_is_waited_for_not_doomed(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(
        deployment(
            "late",
            replicas=1,
            command=["sleep", "3600"],
            env=[{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "late-env", "key": "TOKEN"}}}],
        )
    )
    applied = time.monotonic()
    cluster.mark()
    stop = threading.Event()

    def sync_late() -> None:
        """The Secret 15 s after the Deployment, and only once the run has waited 13 s (two looks
        at the pod and its "still waiting" line, at 10 s, however slowly it started)."""
        while not stop.wait(0.2):
            watching = (cluster.first_seen or {}).get(("watch", "deployments"))
            now = time.monotonic()
            if watching is not None and now - watching >= 13 and now - applied >= 15:
                cluster.apply(secret("late-env", {"TOKEN": "synced-late-1234"}))
                return

    later = threading.Thread(target=sync_late, daemon=True)
    later.start()
    try:
        out = run_verify(
            "late", "--expect-env", "TOKEN", "--timeout", "90s", kubeconfig=kubeconfig, tmp_path=tmp_path
        )
    finally:
        stop.set()
        later.join()
    assert out.code == 0, out.everything
    # named while it waited, and looked at (twice at least) without being judged final
    assert "still waiting" in out.stderr and "CreateContainerConfigError" in out.stderr, out.stderr
    assert cluster.requests[("list", "replicasets")] >= 3
    assert "--fail-fast" not in out.everything
