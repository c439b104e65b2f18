"""rollout-verify through a real watch-cache compaction, no fault injected: while it waits for a
rollout, other Deployments change so often that the resourceVersion it watches from has left the
watch cache's window before its watch is served; kubesim answers 410 Expired as the apiserver
does, and the run must read the Deployment again and still see the rollout through."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.kubesim import Cluster
from tests.kubesim.storage.resources import BY_PATH
from tests.support.helpers import deployment, run_verify

DEPLOYMENTS = BY_PATH[("apps", "deployments")]


def held_rollout(cluster: Cluster) -> None:
    """web rolled out once, then changed so its new pods fit no node until the test lets them."""
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    held = deployment("web", replicas=2, env=[{"name": "A", "value": "2"}])
    held["spec"]["template"]["spec"]["nodeSelector"] = {"rollout-verify.test/hold": "true"}
    cluster.apply(held)


async def churn(cluster: Cluster, stop: threading.Event) -> None:
    """Another team's Deployment annotated twice every 20 ms, on the cluster's own loop: each
    request the run sends waits `api_latency` on that loop, during which the churn's next turn
    (due sooner) always runs, so the window has moved past whatever the run read before."""
    n = 0
    while not stop.is_set():
        for _ in range(2):
            n += 1
            tick = str(n)
            cluster.store.mutate(
                DEPLOYMENTS,
                "default",
                "noise",
                lambda d, tick=tick: d["metadata"].setdefault("annotations", {}).update(tick=tick),
            )
        await asyncio.sleep(0.02)


def test_the_run_rereads_and_passes_when_its_watch_resource_version_is_compacted(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    held_rollout(cluster)
    cluster.apply(deployment("noise", replicas=0))
    cluster.knobs.watch_cache_size = 1  # the watch cache keeps one Deployment event
    cluster.knobs.watch_cache_fresh = 0.0  # however recent
    cluster.knobs.api_latency = 0.1
    cluster.reset_counts()
    stop = threading.Event()
    assert cluster.loop is not None
    churning = asyncio.run_coroutine_threadsafe(churn(cluster, stop), cluster.loop)
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            running = pool.submit(
                run_verify,
                "--deployment",
                "web",
                "--expect-env",
                "A",
                kubeconfig=kubeconfig,
                tmp_path=tmp_path,
            )
            cluster.wait_for(
                lambda: (
                    running.done() or cluster.call(lambda: cluster.store.history.expired["deployments"]) >= 2
                ),
                timeout=90,
                what="the run's watch expired twice by the window",
            )
            stop.set()
            churning.result(10)
            cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "3"}]))  # fits: rolls out
            out = running.result(120)
    finally:
        stop.set()
        cluster.knobs.api_latency = 0.0
    expired = cluster.call(lambda: cluster.store.history.expired["deployments"])
    assert out.code == 0, out.everything
    assert expired >= 2  # served by the window itself...
    assert sum(cluster.injected.values()) == 0  # ...never by an injected fault
    assert cluster.requests[("get", "deployments")] >= expired  # each 410 made it read web again
    assert out.report is not None and out.report["workloads"][0]["attempts"][0]["revision"] == "3"
    assert "Expired" not in out.everything and "too old" not in out.everything
