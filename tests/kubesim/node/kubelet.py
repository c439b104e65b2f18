"""One kubelet per node: pods from the API to running containers and back to their status.
Containers are real processes in their own mount namespace (the ConfigMap/Secret cache, env,
volumes and probes are in their own modules).

A container joins its pod's network namespace (a pause process, see sandbox.py), then is
`unshare -m` + an overlay of the host root + bind mounts of its volumes + `chroot`, so
`md5sum /cm/script.py` inside it reads exactly the bytes this kubelet put there. Readiness
probes (httpGet, tcpSocket, exec) decide a container's `ready`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
from typing import TYPE_CHECKING

from ..storage.resources import BY_PATH
from ..storage.store import Event, Obj, now_rfc3339
from .containers import DEFAULT_PATH, ContainerRuntime, PodRuntime, resolve_binary, shell_less
from .environment import ConfigError, expand, resolve_env
from .logpump import pump
from .objectcache import ObjectCache
from .probes import readiness
from .sandbox import Ipam, Sandbox, SandboxError, create_sandbox, destroy_sandbox, pod_cidr
from .volumes import MountError, atomic_write, volume_files

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]


class Kubelet:
    def __init__(self, cluster: Cluster, node: str, index: int) -> None:
        self.cluster = cluster
        self.node = node
        self.index = index
        self.cache = ObjectCache(cluster.store)
        self.pods: dict[str, PodRuntime] = {}
        self.root = cluster.root / "nodes" / node
        self.root.mkdir(parents=True, exist_ok=True)
        self.ipam = Ipam(pod_cidr(index))
        self.by_ip: dict[str, PodRuntime] = {}
        self._sync_task: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> None:
        self._sync_task = asyncio.get_running_loop().create_task(self._sync_loop())

    async def shutdown(self) -> None:
        if self._sync_task:
            self._sync_task.cancel()
        await asyncio.gather(
            *(self._kill(rt, grace=0) for rt in list(self.pods.values())), return_exceptions=True
        )

    def restart(self) -> None:
        """A kubelet restart drops its object cache; running containers are untouched."""
        self.cache = ObjectCache(self.cluster.store)
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
            if pod["metadata"].get("deletionTimestamp") and not rt.stopping:
                rt.stopping = True
                grace = int(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
                asyncio.get_running_loop().create_task(self._terminate(rt, grace=grace, remove=True))
        elif pod["metadata"].get("deletionTimestamp"):
            # never started here: finish the deletion at once
            self.cluster.finalize_pod(pod["metadata"]["namespace"], pod["metadata"]["name"], uid)

    # -- pod setup ---------------------------------------------------------------
    async def _run_pod(self, rt: PodRuntime) -> None:
        knobs = self.cluster.knobs
        try:
            if knobs.pod_start_delay:
                await asyncio.sleep(knobs.pod_start_delay)
            while not rt.stopping:
                try:
                    self._setup_volumes(rt)
                    break
                except MountError as e:
                    self._set_waiting_all(rt, "ContainerCreating", str(e))
                    await asyncio.sleep(1.0)
            while not rt.stopping:
                try:
                    await self._ensure_sandbox(rt)
                    break
                except SandboxError as e:
                    self._set_waiting_all(rt, "ContainerCreating", f"Failed to create pod sandbox: {e}")
                    await asyncio.sleep(1.0)
            if rt.stopping:
                return
            specs = rt.pod["spec"].get("containers") or []
            for c in specs:
                rt.containers[c["name"]] = ContainerRuntime(c["name"], c.get("image", ""))
            await asyncio.gather(*(self._container_loop(rt, c) for c in specs))
        except asyncio.CancelledError:
            pass

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
        if rt.stopping:  # deleted while the sandbox was being created
            await self._destroy_net(rt)
        return sb

    def _release_net(self, rt: PodRuntime) -> None:
        if rt.sandbox is not None and self.by_ip.get(rt.sandbox.ip) is rt:
            del self.by_ip[rt.sandbox.ip]
            self.ipam.release(rt.sandbox.ip)

    async def _destroy_net(self, rt: PodRuntime) -> None:
        self._release_net(rt)
        if rt.sandbox is not None:
            await destroy_sandbox(rt.sandbox)

    def _set_waiting_all(self, rt: PodRuntime, reason: str, message: str) -> None:
        for c in rt.pod["spec"].get("containers") or []:
            crt = rt.containers.setdefault(c["name"], ContainerRuntime(c["name"], c.get("image", "")))
            crt.state, crt.reason, crt.message = "waiting", reason, message
        self._publish(rt)

    def _setup_volumes(self, rt: PodRuntime) -> None:
        for v in rt.pod["spec"].get("volumes") or []:
            d = rt.dir / "volumes" / v["name"]
            d.mkdir(parents=True, exist_ok=True)
            files = volume_files(self.cache, rt.pod, v)
            if files is not None:
                atomic_write(d, files)
            rt.volumes[v["name"]] = d

    # -- containers --------------------------------------------------------------------
    async def _container_loop(self, rt: PodRuntime, c: Obj) -> None:
        crt = rt.containers[c["name"]]
        backoff = 0.5
        policy = rt.pod["spec"].get("restartPolicy", "Always")
        knobs = self.cluster.knobs
        while not rt.stopping:
            image = c.get("image", "")
            if any(m in image for m in knobs.bad_image_markers):
                crt.state, crt.reason = (
                    "waiting",
                    "ErrImagePull" if crt.reason != "ErrImagePull" else "ImagePullBackOff",
                )
                crt.message = (
                    f'failed to pull and unpack image "{image}": failed to resolve reference "{image}": not found'
                    if crt.reason == "ErrImagePull"
                    else f'Back-off pulling image "{image}"'
                )
                self._publish(rt)
                await asyncio.sleep(1.0)
                continue
            try:
                env = resolve_env(self.cache, rt, c)
            except ConfigError as e:
                crt.state, crt.reason, crt.message = "waiting", "CreateContainerConfigError", str(e)
                self._publish(rt)
                await asyncio.sleep(1.0)
                continue
            await self._launch(rt, c, crt, env)
            crt.ready = not c.get("readinessProbe")
            self._publish(rt)
            assert crt.proc is not None
            prober = (
                asyncio.get_running_loop().create_task(
                    readiness(rt, c, crt, crt.proc, pool=self.cluster.dial_pool, publish=self._publish)
                )
                if c.get("readinessProbe")
                else None
            )
            try:
                code = await crt.proc.wait()
            finally:
                if prober is not None:
                    prober.cancel()
            crt.ready = False
            if rt.stopping:
                break
            crt.last_exit = {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error",
                "startedAt": crt.started_at,
                "finishedAt": now_rfc3339(),
                "containerID": crt.container_id,
            }
            crt.pid = None
            if policy == "Never" or (policy == "OnFailure" and code == 0):
                crt.state, crt.reason = "terminated", crt.last_exit["reason"]
                self._publish(rt)
                return
            crt.restarts += 1
            crt.state, crt.reason = "waiting", "CrashLoopBackOff"
            crt.message = f"back-off {int(backoff * 10)}s restarting failed container={c['name']} pod={rt.name}_{rt.namespace}({rt.uid})"
            self._publish(rt)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, knobs.crashloop_backoff_max)

    async def _launch(self, rt: PodRuntime, c: Obj, crt: ContainerRuntime, env: dict[str, str]) -> None:
        full_env = {
            "PATH": DEFAULT_PATH,
            "HOSTNAME": rt.name,
            "KUBERNETES_SERVICE_HOST": "10.96.0.1",
            "KUBERNETES_SERVICE_PORT": "443",
            **env,
        }
        argv = [expand(a, full_env) for a in (c.get("command") or []) + (c.get("args") or [])]
        image = crt.image
        if any(m in image for m in self.cluster.knobs.crash_image_markers):
            argv = ["/bin/sh", "-c", "echo 'fatal: configuration invalid' >&2; sleep 0.2; exit 1"]
        elif (
            not argv
            or shell_less(image)
            or not resolve_binary(argv[0], "/", full_env.get("PATH", DEFAULT_PATH))
        ):
            argv = [
                "/usr/bin/sleep",
                "infinity",
            ]  # stand-in for an entrypoint the host does not have
        cdir = rt.dir / "containers" / c["name"] / str(crt.restarts)
        for sub in ("upper", "work", "merged"):
            (cdir / sub).mkdir(parents=True, exist_ok=True)
        merged = cdir / "merged"
        lines = [
            "set -e",
            f"/usr/bin/mount -t overlay overlay -o lowerdir=/,upperdir={shlex.quote(str(cdir / 'upper'))},"
            f"workdir={shlex.quote(str(cdir / 'work'))} {shlex.quote(str(merged))}",
            f"/usr/bin/mount -t proc proc {shlex.quote(str(merged / 'proc'))}",
            f"/usr/bin/mount --rbind /dev {shlex.quote(str(merged / 'dev'))}",
        ]
        for vm in c.get("volumeMounts") or []:
            vol = rt.volumes.get(vm["name"])
            if vol is None:
                continue
            # resolve symlinks as the container would (its root is an overlay of the host's /),
            # e.g. /var/run -> /run, so the bind lands where chroot'd paths will look
            target = merged / os.path.realpath(vm["mountPath"]).lstrip("/")
            q = shlex.quote(str(target))
            if vm.get("subPath"):
                # bind the file as resolved now: later atomic updates swap ..data and never reach it
                src = (vol / vm["subPath"]).resolve()
                if src.is_dir():
                    lines.append(f"/usr/bin/mkdir -p {q}")
                else:
                    lines.append(f"/usr/bin/mkdir -p {shlex.quote(str(target.parent))} && /usr/bin/touch {q}")
                lines.append(f"/usr/bin/mount --bind {shlex.quote(str(src))} {q}")
            else:
                lines.append(f"/usr/bin/mkdir -p {q} && /usr/bin/mount --bind {shlex.quote(str(vol))} {q}")
            if vm.get("readOnly"):
                lines.append(f"/usr/bin/mount -o remount,bind,ro {q}")
        wd = c.get("workingDir")
        if wd:
            lines.append(
                f'exec /usr/sbin/chroot {shlex.quote(str(merged))} /bin/sh -c \'cd "$0" && exec "$@"\' {shlex.quote(wd)} {" ".join(shlex.quote(a) for a in argv)}'
            )
        else:
            lines.append(
                f"exec /usr/sbin/chroot {shlex.quote(str(merged))} {' '.join(shlex.quote(a) for a in argv)}"
            )
        log = rt.dir / "logs" / f"{c['name']}-{crt.restarts}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_bytes(b"")
        sandbox = await self._ensure_sandbox(rt)
        # the output goes through a pipe to logpump.pump, which stamps each line's time
        proc = await asyncio.create_subprocess_exec(
            # join the pod's network namespace, then a mount namespace of the container's own
            "/usr/bin/nsenter",
            f"--net={sandbox.netns}",
            "--",
            "/usr/bin/unshare",
            "-m",
            "--propagation",
            "private",
            "--",
            "/bin/sh",
            "-c",
            "\n".join(lines),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=full_env,
            start_new_session=True,
        )
        assert proc.stdout is not None
        crt.log_pump = asyncio.get_running_loop().create_task(pump(proc.stdout, log))
        crt.proc, crt.pid, crt.env = proc, proc.pid, full_env
        crt.log_paths.append(log)
        crt.state, crt.reason, crt.message = "running", "", ""
        crt.started_at = now_rfc3339()
        crt.container_id = "containerd://" + os.urandom(32).hex()
        # wait until the process sits in its own root (chroot done) so exec sees the mounts
        for _ in range(200):
            try:
                if os.readlink(f"/proc/{proc.pid}/root") != "/":
                    break
            except OSError:
                break
            await asyncio.sleep(0.005)

    # -- volume refresh ------------------------------------------------------------
    async def _sync_loop(self) -> None:
        while True:
            await asyncio.sleep(self.cluster.knobs.sync_period)
            for rt in list(self.pods.values()):
                if rt.stopping:
                    continue
                for v in rt.pod["spec"].get("volumes") or []:
                    d = rt.volumes.get(v["name"])
                    if d is None:
                        continue
                    with contextlib.suppress(MountError):
                        files = volume_files(self.cache, rt.pod, v)
                        if files is not None:
                            atomic_write(d, files)

    def sync_now(self) -> None:
        for rt in self.pods.values():
            for v in rt.pod["spec"].get("volumes") or []:
                d = rt.volumes.get(v["name"])
                if d is not None:
                    with contextlib.suppress(MountError):
                        files = volume_files(self.cache, rt.pod, v)
                        if files is not None:
                            atomic_write(d, files)

    # -- termination -------------------------------------------------------------------
    async def _kill(self, rt: PodRuntime, *, grace: float) -> None:
        rt.stopping = True
        procs = [c.proc for c in rt.containers.values() if c.proc is not None and c.proc.returncode is None]
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
        if rt.task is not None:
            rt.task.cancel()
        await self._destroy_net(rt)

    async def _terminate(self, rt: PodRuntime, *, grace: int, remove: bool) -> None:
        await self._kill(rt, grace=grace)
        self.cache.unregister(rt.pod)
        self.pods.pop(rt.uid, None)
        await asyncio.get_running_loop().run_in_executor(None, shutil.rmtree, rt.dir, True)
        if remove:
            self.cluster.finalize_pod(rt.namespace, rt.name, rt.uid)

    # -- status ----------------------------------------------------------------------------
    def _publish(self, rt: PodRuntime) -> None:
        if rt.stopping:
            return
        statuses = []
        for c in rt.pod["spec"].get("containers") or []:
            crt = rt.containers.get(c["name"]) or ContainerRuntime(c["name"], c.get("image", ""))
            if crt.state == "running":
                state: Obj = {"running": {"startedAt": crt.started_at}}
            elif crt.state == "terminated":
                state = {"terminated": dict(crt.last_exit or {})}
            else:
                state = {
                    "waiting": {
                        "reason": crt.reason,
                        **({"message": crt.message} if crt.message else {}),
                    }
                }
            st: Obj = {
                "name": c["name"],
                "image": crt.image,
                "imageID": "",
                "ready": crt.state == "running" and crt.ready,
                "started": crt.state == "running",
                "restartCount": crt.restarts,
                "state": state,
                "lastState": {"terminated": crt.last_exit} if crt.last_exit else {},
            }
            if crt.container_id:
                st["containerID"] = crt.container_id
            statuses.append(st)
        all_ready = bool(statuses) and all(s["ready"] for s in statuses)
        running = any(c.state == "running" for c in rt.containers.values())
        now = now_rfc3339()

        def apply(p: Obj) -> None:
            status = p.setdefault("status", {})
            old = {c["type"]: c for c in status.get("conditions") or []}

            def cond(t: str, ok: bool) -> Obj:
                s = "True" if ok else "False"
                prev = old.get(t)
                ltt = prev["lastTransitionTime"] if prev and prev.get("status") == s else now
                c: Obj = {"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": ltt}
                if not ok and t in ("Ready", "ContainersReady"):
                    c["reason"] = "ContainersNotReady"
                    notready = [x["name"] for x in statuses if not x["ready"]]
                    c["message"] = f"containers with unready status: [{' '.join(notready)}]"
                return c

            status["conditions"] = [
                cond("PodReadyToStartContainers", True),
                cond("Initialized", True),
                cond("Ready", all_ready),
                cond("ContainersReady", all_ready),
                cond("PodScheduled", True),
            ]
            status["phase"] = "Running" if running else status.get("phase", "Pending")
            if all(c.state == "terminated" for c in rt.containers.values()) and rt.containers:
                status["phase"] = (
                    "Succeeded"
                    if all((c.last_exit or {}).get("exitCode") == 0 for c in rt.containers.values())
                    else "Failed"
                )
            status["hostIP"] = f"172.18.0.{self.index + 1}"
            if rt.ip:
                status["podIP"] = rt.ip
                status["podIPs"] = [{"ip": rt.ip}]
            status.setdefault("startTime", now)
            status["containerStatuses"] = statuses
            status.setdefault("qosClass", "BestEffort")

        self.cluster.store.mutate(PODS, rt.namespace, rt.name, apply, status=True)
