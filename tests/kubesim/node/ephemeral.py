"""The kubelet's side of ephemeral containers (pkg/kubelet/kuberuntime/kuberuntime_manager.go
computePodActions: `EphemeralContainersToStart`): each one added to a running pod's spec is
started once, after the pod's sandbox exists, and never restarted whatever it exits with
(its status stays `terminated`). Its status is in `ephemeralContainerStatuses`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ..storage.store import Obj
from .containers import ContainerRuntime, PodRuntime

Loop = Callable[[PodRuntime, Obj, str], Awaitable[int | None]]


def start_new(rt: PodRuntime, run: Loop) -> None:
    """Start the pod's ephemeral containers that are not known yet (each exactly once)."""
    for ec in rt.pod["spec"].get("ephemeralContainers") or []:
        if ec["name"] in rt.containers:
            continue
        rt.containers[ec["name"]] = ContainerRuntime(ec["name"], ec.get("image", ""))
        rt.ephemeral_tasks.append(asyncio.get_running_loop().create_task(_when_ready(rt, ec, run)))


async def _when_ready(rt: PodRuntime, ec: Obj, run: Loop) -> None:
    # an ephemeral container joins a pod whose sandbox runs: wait for it (a pod just created)
    while not rt.stopping and (rt.sandbox is None or not rt.sandbox.alive):
        await asyncio.sleep(0.05)
    if not rt.stopping:
        await run(rt, ec, "Never")
