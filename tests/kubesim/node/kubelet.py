"""One kubelet per node: pods from the API to running containers and back to their status.
Containers are real processes in their own mount namespace (the image catalogue, the runtime,
the ConfigMap/Secret cache, env, volumes, probes, events and the status are in their own modules).

A container joins its pod's network namespace (a pause process, see sandbox.py), then is
`unshare -m` + an overlay of the host root + bind mounts of its volumes + `chroot` (runtime.py),
so `md5sum /cm/script.py` inside it reads exactly the bytes this kubelet put there. Its process
is the image's ENTRYPOINT/CMD as the pod's command/args override them; a program that cannot be
found fails to start (StartError) and the kubelet restarts it with its back-off
(CrashLoopBackOff). Startup, liveness and readiness probes decide `started`, restarts and `ready`.
The kubelet records its events (Pulling, Pulled, Created, Started, Failed, BackOff, Killing,
Unhealthy) through a client-go style recorder.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from typing import TYPE_CHECKING

from ..controllers.filters import admission_error
from ..record import Recorder, container_ref, go_duration
from ..storage.resources import BY_PATH
from ..storage.store import Event, Obj, now_rfc3339
from .containers import ContainerRuntime, PodRuntime
from .environment import (
    ConfigError,
    expand,
    hosts_file,
    pod_hostname,
    process_env,
    resolve_env,
    service_env,
)
from .ephemeral import start_new as start_ephemeral
from .hooks import run_handler
from .identity import read_only_root, run_as
from .images import NoCommand, home, lookup, process_args
from .kubeproxy import close_relay, open_relay
from .lease import renew_forever
from .memory import memory_limit, watch_memory
from .objectcache import ObjectCache
from .probes import probe_container
from .puller import ImagePuller
from .runtime import StartError, close_stdin, exit_code, start_process
from .sandbox import Ipam, Sandbox, SandboxError, create_sandbox, destroy_sandbox, pod_cidr
from .secretsstore import SecretsStore
from .status import apply_status
from .tokens import TokenManager
from .volumemanager import VolumeManager
from .volumes import MountError

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
NODES = BY_PATH[("", "nodes")]
HOOK_TIMEOUT = 300.0  # upstream runs postStart without a timeout; a hook hanging this long is stopped
SERVICES = BY_PATH[("", "services")]


class Kubelet:
    def __init__(self, cluster: Cluster, node: str, index: int) -> None:
        self.cluster = cluster
        self.node = node
        self.index = index
        self.cache = ObjectCache(cluster.store)
        self.tokens = TokenManager(cluster)  # projected service account tokens
        self.pods: dict[str, PodRuntime] = {}
        self.root = cluster.root / "nodes" / node
        self.root.mkdir(parents=True, exist_ok=True)
        self.ipam = Ipam(pod_cidr(index))
        self.by_ip: dict[str, PodRuntime] = {}
        self._sync_task: asyncio.Task[None] | None = None
        self._lease_task: asyncio.Task[None] | None = None
        self.recorder = Recorder(cluster.store, "kubelet", node)
        self.puller = ImagePuller(cluster.knobs.node_images)
        self.csi = SecretsStore(self)  # the Secrets Store CSI Driver's node plugin
        self.volumes = VolumeManager(self)

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> None:
        self._sync_task = asyncio.get_running_loop().create_task(self._sync_loop())
        self._lease_task = asyncio.get_running_loop().create_task(renew_forever(self.cluster, self.node))

    async def shutdown(self) -> None:
        if self._sync_task:
            self._sync_task.cancel()
        if self._lease_task:
            self._lease_task.cancel()
        self.csi.stop()
        await asyncio.gather(
            *(self._kill(rt, grace=0) for rt in list(self.pods.values())), return_exceptions=True
        )

    def restart(self) -> None:
        """A kubelet restart drops its object cache and its event correlator; running containers
        are untouched."""
        self.cache = ObjectCache(self.cluster.store)
        self.recorder = Recorder(self.cluster.store, "kubelet", self.node)
        for rt in self.pods.values():
            self.cache.register(rt.pod)

    def on_event(self, ev: Event) -> None:
        if ev.res is not PODS:
            return
        pod = ev.obj
        uid = pod["metadata"]["uid"]
        if pod["spec"].get("nodeName") != self.node:
            return
        rt = self.pods.get(uid)
        if ev.type == "DELETED":
            if rt is not None and not rt.stopping:
                rt.stopping = True
                asyncio.get_running_loop().create_task(self._terminate(rt, grace=0, remove=False))
            return
        if rt is None and not pod["metadata"].get("deletionTimestamp"):
            if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded") or self._rejected(pod):
                return
            rt = PodRuntime(
                uid,
                pod["metadata"]["namespace"],
                pod["metadata"]["name"],
                pod,
                self.root / "pods" / uid,
            )
            self.pods[uid] = rt
            self.cache.register(pod)
            rt.task = asyncio.get_running_loop().create_task(self._run_pod(rt))
            return
        if rt is not None:
            rt.pod = pod
            start_ephemeral(rt, self._container_loop)
            if pod["spec"].get("readinessGates") and not rt.stopping:
                self._publish(rt)  # a readiness gate's condition may have changed: Ready again
            if pod["metadata"].get("deletionTimestamp") and not rt.stopping:
                rt.stopping = True
                grace = int(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
                asyncio.get_running_loop().create_task(self._terminate(rt, grace=grace, remove=True))
        elif pod["metadata"].get("deletionTimestamp"):
            # never started here: finish the deletion at once
            self.cluster.finalize_pod(pod["metadata"]["namespace"], pod["metadata"]["name"], uid)

    def _rejected(self, pod: Obj) -> bool:
        """canAdmitPod: a pod the node cannot hold beside the pods it runs fails at once
        (`OutOfcpu`, ...), with an event, and never starts."""
        node = self.cluster.store.find(NODES, "", self.node)
        running = [
            rt.pod
            for rt in self.pods.values()
            if not rt.stopping and (rt.pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded")
        ]
        err = admission_error(pod, node, running) if node is not None else None
        if err is None:
            return False
        reason, message = err
        self.recorder.event(container_ref(pod), "Warning", reason, message)

        def reject(p: Obj) -> None:
            p.setdefault("status", {}).update(phase="Failed", reason=reason, message=message)

        meta = pod["metadata"]
        self.cluster.store.mutate(PODS, meta["namespace"], meta["name"], reject, status=True)
        return True

    # -- pod setup ---------------------------------------------------------------
    async def _run_pod(self, rt: PodRuntime) -> None:
        knobs = self.cluster.knobs
        try:
            if knobs.pod_start_delay:
                await asyncio.sleep(knobs.pod_start_delay)
            delay = 0.5  # nestedpendingoperations: 500 ms doubling up to 2m2s (Knobs.mount_backoff_max)
            while not rt.stopping:
                try:
                    self.volumes.setup(rt)
                    break
                except MountError as e:
                    # the kubelet says why only in the event: ContainerCreating carries no message
                    # (kubelet_pods.go convertToAPIContainerStatuses' default waiting state)
                    self._set_waiting_all(rt, "ContainerCreating", "")
                    why = f'MountVolume.SetUp failed for volume "{e.volume}" : {e}'
                    self.recorder.event(container_ref(rt.pod), "Warning", "FailedMount", why)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, knobs.mount_backoff_max)
            while not rt.stopping:
                try:
                    await self._ensure_sandbox(rt)
                    break
                except SandboxError as e:
                    self._set_waiting_all(rt, "ContainerCreating", f"Failed to create pod sandbox: {e}")
                    await asyncio.sleep(1.0)
            if rt.stopping:
                return
            spec = rt.pod["spec"]
            inits, specs = spec.get("initContainers") or [], spec.get("containers") or []
            # convertToAPIContainerStatuses: with init containers, the default waiting reason is
            # PodInitializing (printPod then shows `Init:0/N`)
            waiting = "PodInitializing" if inits else "ContainerCreating"
            for c in inits + specs:
                crt = ContainerRuntime(c["name"], c.get("image", ""), reason=waiting)
                rt.containers[c["name"]] = crt
            sidecars = await self._run_init(rt, inits)
            if sidecars is None:
                return
            await asyncio.gather(*sidecars, *(self._container_loop(rt, c) for c in specs))
        except asyncio.CancelledError:
            pass

    async def _run_init(self, rt: PodRuntime, inits: list[Obj]) -> list[asyncio.Task[int | None]] | None:
        """kuberuntime_manager.go computePodActions + kuberuntime_container.go
        computeInitContainerActions: init containers one at a time, in order; each must exit 0
        (a failure is restarted with the CrashLoopBackOff back-off, under restartPolicy Never the
        pod fails). A restartable one (`restartPolicy: Always`, a native sidecar) is started and,
        once `started` (its startupProbe passed), the next one starts beside it; it keeps running
        (restarted whenever it exits). Returns the sidecars' tasks, or None if the pod failed or
        is stopping."""
        policy = rt.pod["spec"].get("restartPolicy", "Always")
        # an init container that exited 0 is never run again; a failed one under Always is
        # restarted like OnFailure
        init_policy = "OnFailure" if policy == "Always" else policy
        loop = asyncio.get_running_loop()
        sidecars: list[asyncio.Task[int | None]] = []
        for c in inits:
            crt = rt.containers[c["name"]]
            if c.get("restartPolicy") == "Always":
                sidecars.append(loop.create_task(self._container_loop(rt, c, "Always")))
                while not rt.stopping and not (crt.state == "running" and crt.started):
                    await asyncio.sleep(0.05)
                continue
            code = await self._container_loop(rt, c, init_policy)
            if rt.stopping or code != 0:
                # restartPolicy Never: the pod has failed; its sidecars are stopped
                rt.init_failed = not rt.stopping
                for t in sidecars:
                    t.cancel()
                for s in inits:
                    sc = rt.containers[s["name"]]
                    if s.get("restartPolicy") == "Always" and sc.proc is not None:
                        await _stop(sc.proc, 0)
                self._publish(rt)
                return None
        rt.initialized = True
        self._publish(rt)
        return sidecars

    async def _ensure_sandbox(self, rt: PodRuntime) -> Sandbox:
        """The pod's network namespace, created (with a fresh IP) if it is missing or died."""
        if rt.sandbox is not None and rt.sandbox.alive:
            return rt.sandbox
        self._release_net(rt)
        ip = self.ipam.allocate()
        try:
            sb = await create_sandbox(ip)
        except BaseException:
            self.ipam.release(ip)
            raise
        rt.sandbox, rt.ip = sb, ip
        self.by_ip[ip] = rt
        await close_relay(rt.relay)  # the old sandbox's
        try:  # 10.96.0.1:443 in the pod: the API server
            rt.relay = await open_relay(sb.netns, self.cluster.port)
        except OSError as e:  # the sandbox died already: made again on the next try
            raise SandboxError(f"kubernetes service: {e}") from None
        # the kubelet's managed /etc/hosts and the sandbox's /etc/hostname, bound into containers
        name, _ = pod_hostname(rt.pod)
        rt.dir.mkdir(parents=True, exist_ok=True)
        (rt.dir / "etc-hosts").write_text(hosts_file(rt.pod, [ip]))
        (rt.dir / "hostname").write_text(name + "\n")
        if rt.stopping:  # deleted while the sandbox was being created
            await self._destroy_net(rt)
        return sb

    def _release_net(self, rt: PodRuntime) -> None:
        if rt.sandbox is not None and self.by_ip.get(rt.sandbox.ip) is rt:
            del self.by_ip[rt.sandbox.ip]
            self.ipam.release(rt.sandbox.ip)

    async def _destroy_net(self, rt: PodRuntime) -> None:
        self._release_net(rt)
        await close_relay(rt.relay)
        rt.relay = None
        if rt.sandbox is not None:
            await destroy_sandbox(rt.sandbox)

    def _set_waiting_all(self, rt: PodRuntime, reason: str, message: str) -> None:
        for c in rt.pod["spec"].get("containers") or []:
            crt = rt.containers.setdefault(c["name"], ContainerRuntime(c["name"], c.get("image", "")))
            crt.state, crt.reason, crt.message = "waiting", reason, message
        self._publish(rt)

    # -- containers (pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer) -----------
    def _event(self, rt: PodRuntime, c: Obj, type_: str, reason: str, message: str) -> None:
        self.recorder.event(container_ref(rt.pod, c["name"]), type_, reason, message)

    def _container_env(self, rt: PodRuntime, c: Obj) -> dict[str, str]:
        """makeEnvironmentVariables: the container's own variables, then the service links the
        kubelet's Service informer holds now (at this container start)."""
        links = rt.pod["spec"].get("enableServiceLinks")
        services = self.cluster.store.list(SERVICES)
        svc_env = service_env(services, rt.namespace, links is None or bool(links))
        return resolve_env(self.cache, rt, c, svc_env)

    async def _container_loop(self, rt: PodRuntime, c: Obj, policy: str = "") -> int | None:
        """Run container `c` under `policy` (the pod's restartPolicy unless given); returns the
        exit code it ended with for good (None if the pod is stopping)."""
        crt = rt.containers[c["name"]]
        policy = policy or rt.pod["spec"].get("restartPolicy", "Always")
        loop = asyncio.get_running_loop()
        while not rt.stopping:
            if not await self.puller.ensure(
                rt,
                c,
                crt,
                knobs=self.cluster.knobs,
                event=lambda t, reason, msg: self._event(rt, c, t, reason, msg),
                waiting=lambda reason, msg: self._waiting(rt, crt, reason, msg),
            ):
                continue
            img = lookup(crt.image)
            try:
                env = self._container_env(rt, c)
                user = run_as(rt.pod, c, img)
            except ConfigError as e:
                self._waiting(rt, crt, "CreateContainerConfigError", str(e))
                self._event(rt, c, "Warning", "Failed", f"Error: {e}")
                await asyncio.sleep(1.0)
                continue
            command = [expand(a, env) for a in c.get("command") or []]
            args = [expand(a, env) for a in c.get("args") or []]
            if any(m in crt.image for m in self.cluster.knobs.crash_image_markers):
                # a fault knob: whatever it is asked to run, this image's process fails at once
                command, args = (
                    ["/bin/sh", "-c", "echo 'fatal: configuration invalid' >&2; sleep 0.2; exit 1"],
                    [],
                )
            try:
                argv = process_args(img, command, args)
            except NoCommand as e:
                msg = f'failed to generate container "{os.urandom(32).hex()}" spec: failed to generate spec: {e}'
                self._waiting(rt, crt, "CreateContainerError", msg)
                self._event(rt, c, "Warning", "Failed", f"Error: {msg}")
                await asyncio.sleep(1.0)
                continue
            hostname, _ = pod_hostname(rt.pod)
            full_env = process_env(img.env, hostname, env, home(img, user[0]))
            self._event(rt, c, "Normal", "Created", f"Created container {c['name']}")
            sandbox = await self._ensure_sandbox(rt)
            try:
                await start_process(
                    rt, c, crt, argv, full_env, img, sandbox, user=user, read_only=read_only_root(c)
                )
            except StartError as e:
                self._event(rt, c, "Warning", "Failed", f"Error: {e.message}")
                code, reason, message = 128, "StartError", e.message
                crt.started_at = "1970-01-01T00:00:00Z"
            else:
                self._event(rt, c, "Normal", "Started", f"Started container {c['name']}")
                crt.hook_error = ""
                hooked = await self._post_start(rt, c, crt)
                code, reason, message = hooked or await self._run(rt, c, crt)
            finished = loop.time()
            crt.prev_exit, crt.last_exit = (
                crt.last_exit,
                {
                    "exitCode": code,
                    "reason": reason,
                    **({"message": message} if message else {}),
                    "startedAt": crt.started_at,
                    "finishedAt": now_rfc3339(),
                    "containerID": crt.container_id,
                },
            )
            crt.pid, crt.ready, crt.started, crt.killing = None, False, False, ""
            if rt.stopping:
                break
            crt.state = "terminated"
            self._publish(rt)
            if policy == "Never" or (policy == "OnFailure" and code == 0):
                return code
            await self._back_off(rt, c, crt, finished)
            crt.restarts += 1
        return None

    async def _run(self, rt: PodRuntime, c: Obj, crt: ContainerRuntime) -> tuple[int, str, str]:
        """The container runs, probed, until its process ends: (exit code, reason, message)."""
        assert crt.proc is not None
        proc = crt.proc
        crt.state, crt.reason, crt.message = "running", "", ""
        crt.started = not c.get("startupProbe")
        crt.ready = crt.started and not c.get("readinessProbe")
        self._publish(rt)
        prober = asyncio.get_running_loop().create_task(
            probe_container(
                rt,
                c,
                crt,
                proc,
                pool=self.cluster.dial_pool,
                publish=self._publish,
                unhealthy=lambda msg: self._event(rt, c, "Warning", "Unhealthy", msg),
                kill=lambda kind: self._probe_kill(rt, c, crt, kind),
            )
        )
        limit = memory_limit(c)
        oom = asyncio.get_running_loop().create_task(watch_memory(proc, limit)) if limit else None
        try:
            code = exit_code(await proc.wait())
        finally:
            prober.cancel()
            close_stdin(crt)
        if oom is not None:
            killed = oom.done() and not oom.cancelled() and oom.result()
            oom.cancel()
            if killed:  # the runtime's reason for a container its cgroup's OOM killer ended
                return code, "OOMKilled", ""
        return code, "Completed" if code == 0 else "Error", ""

    def _probe_kill(self, rt: PodRuntime, c: Obj, crt: ContainerRuntime, kind: str) -> None:
        """computePodActions + killContainer: a failed liveness or startup probe stops the
        container with its grace period (`Killing`), to be restarted per restartPolicy."""
        if crt.proc is None or crt.proc.returncode is not None:
            return
        crt.killing = kind
        restart = (
            rt.pod["spec"].get("restartPolicy", "Always") != "Never" or c.get("restartPolicy") == "Always"
        )
        msg = f"Container {c['name']} failed {kind} probe" + (", will be restarted" if restart else "")
        self._event(rt, c, "Normal", "Killing", msg)
        probe = c.get(f"{kind}Probe") or {}
        grace = probe.get("terminationGracePeriodSeconds")
        if grace is None:
            grace = rt.pod["spec"].get("terminationGracePeriodSeconds", 30)
        asyncio.get_running_loop().create_task(self._halt(rt, c["name"], crt.proc, float(grace)))

    async def _halt(self, rt: PodRuntime, name: str, proc: asyncio.subprocess.Process, grace: float) -> None:
        """killContainer for one container: its preStop hook, then SIGTERM for what is left of
        the grace period, then SIGKILL."""
        await _stop(proc, await self._pre_stop(rt, name, grace))

    async def _pre_stop(self, rt: PodRuntime, name: str, grace: float) -> float:
        """executePreStopHook: run the container's preStop hook for at most `grace` seconds
        (`FailedPreStopHook` if it fails); returns the grace left, at least 2 s after a hook
        (minimumGracePeriodInSeconds)."""
        specs = (rt.pod["spec"].get("initContainers") or []) + (rt.pod["spec"].get("containers") or [])
        c = next((x for x in specs if x["name"] == name), None)
        crt = rt.containers.get(name)
        hook = ((c or {}).get("lifecycle") or {}).get("preStop")
        if c is None or crt is None or not hook or grace <= 0:
            return grace
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with contextlib.suppress(TimeoutError):
            run = run_handler(rt, c, crt, hook, pool=self.cluster.dial_pool, timeout=grace)
            if await asyncio.wait_for(run, grace):
                self._event(rt, c, "Warning", "FailedPreStopHook", "PreStopHook failed")
        return max(grace - int(loop.time() - t0), 2.0)

    async def _post_start(self, rt: PodRuntime, c: Obj, crt: ContainerRuntime) -> tuple[int, str, str] | None:
        """startContainer's step 4: the postStart hook, the container not `running` until it
        returns; a failure records `FailedPostStartHook` and kills the container (`Killing`
        FailedPostStartHook), which is then restarted per restartPolicy. Returns its end then."""
        hook = (c.get("lifecycle") or {}).get("postStart")
        proc = crt.proc
        if not hook or proc is None:
            return None
        msg = await run_handler(rt, c, crt, hook, pool=self.cluster.dial_pool, timeout=HOOK_TIMEOUT)
        if not msg or proc.returncode is not None or rt.stopping:
            return None
        self._event(rt, c, "Warning", "FailedPostStartHook", "PostStartHook failed")
        self._event(rt, c, "Normal", "Killing", "FailedPostStartHook")
        crt.hook_error = msg
        grace = float(rt.pod["spec"].get("terminationGracePeriodSeconds", 30))
        await self._halt(rt, c["name"], proc, grace)
        code = exit_code(await proc.wait())
        close_stdin(crt)
        return code, "Error" if code else "Completed", ""

    async def _back_off(self, rt: PodRuntime, c: Obj, crt: ContainerRuntime, finished: float) -> None:
        """kuberuntime_manager.go doBackOff with the kubelet's flowcontrol.Backoff (10 s doubling
        to 5 min, `Knobs.crashloop_backoff_*`): a container that failed within the back-off of its
        last restart waits in CrashLoopBackOff (a `BackOff` event at each pod sync); then the
        back-off steps up. The first failure restarts at once."""
        knobs = self.cluster.knobs
        loop = asyncio.get_running_loop()
        initial, cap = knobs.crashloop_backoff_initial, knobs.crashloop_backoff_max
        if crt.backoff and loop.time() - crt.backoff_at > 2 * cap:
            crt.backoff = 0.0  # the entry expired (hasExpired): start again from the initial delay
        if crt.backoff and loop.time() - finished < crt.backoff:
            pod = f"{rt.name}_{rt.namespace}({rt.uid})"
            # the kubelet's reason cache: a failed postStart hook's error until the next start
            self._waiting(
                rt,
                crt,
                "PostStartHookError" if crt.hook_error else "CrashLoopBackOff",
                crt.hook_error
                or f"back-off {go_duration(crt.backoff)} restarting failed container={c['name']} pod={pod}",
            )
            until = finished + crt.backoff
            while not rt.stopping and loop.time() < until:
                self._event(
                    rt,
                    c,
                    "Warning",
                    "BackOff",
                    f"Back-off restarting failed container {c['name']} in pod {pod}",
                )
                await asyncio.sleep(min(until - loop.time(), min(10.0, initial)))
        crt.backoff = initial if not crt.backoff else min(crt.backoff * 2, cap)
        crt.backoff_at = loop.time()

    def _waiting(self, rt: PodRuntime, crt: ContainerRuntime, reason: str, message: str) -> None:
        crt.state, crt.reason, crt.message = "waiting", reason, message
        self._publish(rt)

    # -- volume refresh ------------------------------------------------------------
    async def _sync_loop(self) -> None:
        while True:
            await asyncio.sleep(self.cluster.knobs.sync_period)
            self.volumes.refresh(self.pods.values())

    def sync_now(self) -> None:
        self.volumes.refresh(self.pods.values())

    # -- termination -------------------------------------------------------------------
    async def _kill(self, rt: PodRuntime, *, grace: float, record: bool = False) -> None:
        rt.stopping = True
        running = [
            (name, c.proc)
            for name, c in rt.containers.items()
            if c.proc is not None and c.proc.returncode is None
        ]
        if record:  # killContainer's event for a pod being deleted
            for name, _ in running:
                self.recorder.event(
                    container_ref(rt.pod, name), "Normal", "Killing", f"Stopping container {name}"
                )
        # each container's preStop hook first, within the grace period (what it takes is taken off)
        left = await asyncio.gather(*(self._pre_stop(rt, name, grace) for name, _ in running))
        grace = min(left, default=grace)
        procs = [p for _, p in running]
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        if procs:
            try:
                await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), timeout=max(grace, 0.05))
            except TimeoutError:
                for p in procs:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(p.pid, signal.SIGKILL)
                await asyncio.gather(*(p.wait() for p in procs), return_exceptions=True)
        for c in rt.containers.values():
            close_stdin(c)
        if rt.task is not None:
            rt.task.cancel()
        for t in rt.ephemeral_tasks:
            t.cancel()
        await self._destroy_net(rt)

    async def _terminate(self, rt: PodRuntime, *, grace: int, remove: bool) -> None:
        await self._kill(rt, grace=grace, record=True)
        self.cache.unregister(rt.pod)
        self.tokens.forget(rt.uid)
        self.pods.pop(rt.uid, None)
        await asyncio.get_running_loop().run_in_executor(None, shutil.rmtree, rt.dir, True)
        if remove:
            self.cluster.finalize_pod(rt.namespace, rt.name, rt.uid)

    # -- status ----------------------------------------------------------------------------
    def _publish(self, rt: PodRuntime) -> None:
        if rt.stopping:
            return
        host_ip = f"172.18.0.{self.index + 1}"
        self.cluster.store.mutate(
            PODS, rt.namespace, rt.name, lambda p: apply_status(p, rt, host_ip), status=True
        )


async def _stop(proc: asyncio.subprocess.Process, grace: float) -> None:
    """Stop a container: SIGTERM, then SIGKILL once its grace period is over."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), timeout=max(grace, 0.05))
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
