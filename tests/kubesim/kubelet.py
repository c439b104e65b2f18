"""One kubelet per node: the ConfigMap/Secret cache with the real immutable semantics, env and
volume materialisation, and containers as real processes in their own mount namespace.

A container joins its pod's network namespace (a pause process, see network.py), then is
`unshare -m` + an overlay of the host root + bind mounts of its volumes + `chroot`, so
`md5sum /cm/script.py` inside it reads exactly the bytes this kubelet put there. Readiness
probes (httpGet, tcpSocket, exec) decide a container's `ready`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import os
import re
import shlex
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .network import (
    DialError,
    Ipam,
    Sandbox,
    SandboxError,
    container_port,
    create_sandbox,
    destroy_sandbox,
    exchange,
    pod_cidr,
    tcp_probe,
)
from .resources import BY_PATH
from .store import Event, Obj, now_rfc3339

if TYPE_CHECKING:
    from .cluster import Cluster

PODS = BY_PATH[("", "pods")]
CMS = BY_PATH[("", "configmaps")]
SECRETS = BY_PATH[("", "secrets")]
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
SHELLLESS = ("distroless", "scratch")


def shell_less(image: str) -> bool:
    return any(m in image for m in SHELLLESS)


class ConfigError(Exception):
    """A container cannot be created: CreateContainerConfigError with the kubelet's message."""


class MountError(Exception):
    """A volume cannot be set up: the pod stays in ContainerCreating."""


# -- the ConfigMap/Secret manager (pkg/kubelet/util/manager/watch_based_manager.go) -------------


@dataclass
class CacheEntry:
    refs: int = 0
    obj: Obj | None = None
    frozen: bool = False  # immutable object seen: the reflector stopped, this copy is served forever


class ObjectCache:
    """Keyed by (kind, namespace, name) with no UID, kept alive by a refcount of pods on the node."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.entries: dict[tuple[str, str, str], CacheEntry] = {}

    def register(self, pod: Obj) -> None:
        for key in pod_object_refs(pod):
            self.entries.setdefault(key, CacheEntry()).refs += 1

    def unregister(self, pod: Obj) -> None:
        for key in pod_object_refs(pod):
            e = self.entries.get(key)
            if e is None:
                continue
            e.refs -= 1
            if e.refs <= 0:
                del self.entries[key]

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        key = (kind, namespace, name)
        e = self.entries.get(key)
        if e is not None and e.frozen:
            return e.obj
        live = self.cluster.store.find(CMS if kind == "ConfigMap" else SECRETS, namespace, name)
        if e is not None:
            e.obj = live
            if live is not None and live.get("immutable"):
                e.frozen = True
        return live


def pod_object_refs(pod: Obj) -> set[tuple[str, str, str]]:
    ns = pod["metadata"]["namespace"]
    out: set[tuple[str, str, str]] = set()
    spec = pod.get("spec") or {}
    for v in spec.get("volumes") or []:
        if "configMap" in v:
            out.add(("ConfigMap", ns, v["configMap"].get("name", "")))
        if "secret" in v:
            out.add(("Secret", ns, v["secret"].get("secretName", "")))
        for src in (v.get("projected") or {}).get("sources") or []:
            if "configMap" in src:
                out.add(("ConfigMap", ns, src["configMap"].get("name", "")))
            if "secret" in src:
                out.add(("Secret", ns, src["secret"].get("name", "")))
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for ef in c.get("envFrom") or []:
            if "configMapRef" in ef:
                out.add(("ConfigMap", ns, ef["configMapRef"].get("name", "")))
            if "secretRef" in ef:
                out.add(("Secret", ns, ef["secretRef"].get("name", "")))
        for e in c.get("env") or []:
            vf = e.get("valueFrom") or {}
            if "configMapKeyRef" in vf:
                out.add(("ConfigMap", ns, vf["configMapKeyRef"].get("name", "")))
            if "secretKeyRef" in vf:
                out.add(("Secret", ns, vf["secretKeyRef"].get("name", "")))
    return out


def object_data(obj: Obj, *, env: bool = False) -> dict[str, bytes]:
    """Decoded key → bytes of a ConfigMap (data + binaryData) or Secret (base64 data).

    Env takes only a ConfigMap's `data`, as `makeEnvironmentVariables` does."""
    if obj["kind"] == "Secret":
        return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    out = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    if env:
        return out
    out.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return out


# -- runtime state ---------------------------------------------------------------------------


@dataclass
class ContainerRuntime:
    name: str
    image: str
    pid: int | None = None
    proc: asyncio.subprocess.Process | None = None
    env: dict[str, str] = field(default_factory=dict)
    state: str = "waiting"  # waiting | running | terminated
    reason: str = "ContainerCreating"
    message: str = ""
    started_at: str = ""
    restarts: int = 0
    last_exit: dict[str, Any] | None = None
    container_id: str = ""
    log_paths: list[Path] = field(default_factory=list)
    ready: bool = False  # running and (no readinessProbe, or the probe passed)


@dataclass
class PodRuntime:
    uid: str
    namespace: str
    name: str
    pod: Obj
    dir: Path
    containers: dict[str, ContainerRuntime] = field(default_factory=dict)
    volumes: dict[str, Path] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    stopping: bool = False
    ip: str = ""
    sandbox: Sandbox | None = None  # the pod's network namespace (a pause process)


class Kubelet:
    def __init__(self, cluster: Cluster, node: str, index: int) -> None:
        self.cluster = cluster
        self.node = node
        self.index = index
        self.cache = ObjectCache(cluster)
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
        self.cache = ObjectCache(self.cluster)
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
            files = self.volume_files(rt.pod, v)
            if files is not None:
                atomic_write(d, files)
            rt.volumes[v["name"]] = d

    def volume_files(self, pod: Obj, vol: Obj) -> dict[str, tuple[bytes, int]] | None:
        """The files a volume holds now, as the kubelet would project them; None for plain dirs."""
        ns = pod["metadata"]["namespace"]
        if "configMap" in vol:
            src = vol["configMap"]
            return self._project("ConfigMap", ns, src.get("name", ""), src, src.get("defaultMode", 0o644))
        if "secret" in vol:
            src = vol["secret"]
            return self._project("Secret", ns, src.get("secretName", ""), src, src.get("defaultMode", 0o644))
        if "projected" in vol:
            mode = vol["projected"].get("defaultMode", 0o644)
            files: dict[str, tuple[bytes, int]] = {}
            for s in vol["projected"].get("sources") or []:
                if "configMap" in s:
                    files.update(
                        self._project("ConfigMap", ns, s["configMap"].get("name", ""), s["configMap"], mode)
                    )
                elif "secret" in s:
                    files.update(self._project("Secret", ns, s["secret"].get("name", ""), s["secret"], mode))
                elif "downwardAPI" in s:
                    files.update(self._downward(pod, s["downwardAPI"], mode))
                elif "serviceAccountToken" in s:
                    files[s["serviceAccountToken"].get("path", "token")] = (
                        b"kubesim-projected-token",
                        mode,
                    )
            return files
        if "downwardAPI" in vol:
            return self._downward(pod, vol["downwardAPI"], vol["downwardAPI"].get("defaultMode", 0o644))
        return None

    def _project(self, kind: str, ns: str, name: str, src: Obj, mode: int) -> dict[str, tuple[bytes, int]]:
        obj = self.cache.get(kind, ns, name)
        optional = bool(src.get("optional"))
        if obj is None:
            if optional:
                return {}
            raise MountError(f'{kind.lower()} "{name}" not found')
        data = object_data(obj)
        items = src.get("items")
        if not items:
            return {k: (v, mode) for k, v in data.items()}
        out = {}
        for it in items:
            if it["key"] not in data:
                if optional:
                    continue
                raise MountError(
                    f"configmap references non-existent config key: {it['key']}"
                    if kind == "ConfigMap"
                    else f"references non-existent secret key: {it['key']}"
                )
            out[it.get("path", it["key"])] = (data[it["key"]], it.get("mode", mode))
        return out

    def _downward(self, pod: Obj, src: Obj, mode: int) -> dict[str, tuple[bytes, int]]:
        out = {}
        for it in src.get("items") or []:
            if "fieldRef" in it:
                out[it["path"]] = (
                    field_value(pod, it["fieldRef"].get("fieldPath", "")).encode(),
                    it.get("mode", mode),
                )
        return out

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
                env = self.resolve_env(rt, c)
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
                asyncio.get_running_loop().create_task(self._readiness(rt, c, crt, crt.proc))
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

    async def _readiness(
        self, rt: PodRuntime, c: Obj, crt: ContainerRuntime, proc: asyncio.subprocess.Process
    ) -> None:
        """The readiness prober: the first probe after initialDelaySeconds, then every periodSeconds;
        ready after successThreshold successes, unready after failureThreshold failures."""
        probe = c["readinessProbe"]
        period = float(probe.get("periodSeconds", 10))
        succ_needed = int(probe.get("successThreshold", 1))
        fail_needed = int(probe.get("failureThreshold", 3))
        await asyncio.sleep(float(probe.get("initialDelaySeconds", 0)))
        succ = fail = 0
        while proc.returncode is None and not rt.stopping:
            ok = await self._probe(rt, c, crt, probe)
            succ, fail = (succ + 1, 0) if ok else (0, fail + 1)
            ready = True if ok and succ >= succ_needed else False if fail >= fail_needed else crt.ready
            if ready != crt.ready and proc.returncode is None:
                crt.ready = ready
                self._publish(rt)
            await asyncio.sleep(period)

    async def _probe(self, rt: PodRuntime, c: Obj, crt: ContainerRuntime, probe: Obj) -> bool:
        """One httpGet / tcpSocket / exec probe (a grpc probe is not emulated: it passes)."""
        timeout = float(probe.get("timeoutSeconds", 1))
        sandbox = rt.sandbox
        if "exec" in probe:
            argv = list((probe["exec"] or {}).get("command") or [])
            if not argv or crt.pid is None:
                return False
            try:
                p = await asyncio.create_subprocess_exec(
                    "/usr/bin/nsenter",
                    *("-t", str(crt.pid), "-m", "-n", "-r", "-w", "--"),
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                    env=dict(crt.env),
                    close_fds=False,
                )
            except OSError:
                return False
            try:
                return await asyncio.wait_for(p.wait(), timeout) == 0
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
                await p.wait()
                return False
        spec = probe.get("httpGet") or probe.get("tcpSocket")
        if spec is None:
            return True
        port = container_port(c, spec.get("port"))
        if port is None or sandbox is None or not sandbox.alive:
            return False
        host = spec.get("host") or sandbox.ip
        loop = asyncio.get_running_loop()
        if "tcpSocket" in probe:
            return await loop.run_in_executor(
                self.cluster.net.pool, tcp_probe, sandbox.netns, host, port, timeout
            )
        headers = [("Host", f"{host}:{port}"), ("User-Agent", "kube-probe/1.32"), ("Accept", "*/*")]
        headers += [(h["name"], h.get("value", "")) for h in spec.get("httpHeaders") or []]
        try:
            up = await loop.run_in_executor(
                self.cluster.net.pool,
                exchange,
                sandbox.netns,
                host,
                port,
                str(spec.get("scheme", "HTTP")).lower(),
                "GET",
                spec.get("path") or "/",
                headers,
                b"",
                timeout,
            )
        except DialError:
            return False
        return 200 <= up.status < 400

    def resolve_env(self, rt: PodRuntime, c: Obj) -> dict[str, str]:
        """`makeEnvironmentVariables`: envFrom first, then env (overrides), `$(VAR)` expansion."""
        ns = rt.namespace
        env: dict[str, str] = {}
        for ef in c.get("envFrom") or []:
            prefix = ef.get("prefix", "")
            for kind, ref_key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                if ref_key not in ef:
                    continue
                ref = ef[ref_key]
                obj = self.cache.get(kind, ns, ref.get("name", ""))
                if obj is None:
                    if ref.get("optional"):
                        continue
                    raise ConfigError(f'{kind.lower()} "{ref.get("name", "")}" not found')
                for k, v in object_data(obj, env=True).items():
                    if ENV_NAME.match(prefix + k):
                        env[prefix + k] = v.decode(errors="replace")
        for e in c.get("env") or []:
            name = e["name"]
            if "valueFrom" not in e:
                env[name] = expand(e.get("value", ""), env)
                continue
            vf = e["valueFrom"]
            if "fieldRef" in vf:
                env[name] = field_value(rt.pod, vf["fieldRef"].get("fieldPath", ""))
                continue
            if "resourceFieldRef" in vf:
                env[name] = "0"
                continue
            for kind, ref_key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
                if ref_key not in vf:
                    continue
                ref = vf[ref_key]
                obj = self.cache.get(kind, ns, ref.get("name", ""))
                if obj is None:
                    if ref.get("optional"):
                        break
                    raise ConfigError(f'{kind.lower()} "{ref.get("name", "")}" not found')
                data = object_data(obj, env=True)
                if ref.get("key") not in data:
                    if ref.get("optional"):
                        break
                    raise ConfigError(f"couldn't find key {ref.get('key')} in {kind} {ns}/{ref.get('name')}")
                env[name] = data[ref["key"]].decode(errors="replace")
        return env

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
        fh = log.open("wb")
        sandbox = await self._ensure_sandbox(rt)
        try:
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
                stdout=fh,
                stderr=asyncio.subprocess.STDOUT,
                env=full_env,
                start_new_session=True,
            )
        finally:
            fh.close()
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
                        files = self.volume_files(rt.pod, v)
                        if files is not None:
                            atomic_write(d, files)

    def sync_now(self) -> None:
        for rt in self.pods.values():
            for v in rt.pod["spec"].get("volumes") or []:
                d = rt.volumes.get(v["name"])
                if d is not None:
                    with contextlib.suppress(MountError):
                        files = self.volume_files(rt.pod, v)
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


# -- helpers ----------------------------------------------------------------------------------


def expand(s: str, env: dict[str, str]) -> str:
    """Kubernetes `$(VAR)` expansion; `$$` escapes, unknown references stay as written."""
    out = []
    i = 0
    while i < len(s):
        if s.startswith("$$", i):
            out.append("$")
            i += 2
        elif s.startswith("$(", i):
            j = s.find(")", i + 2)
            if j == -1:
                out.append(s[i:])
                break
            name = s[i + 2 : j]
            out.append(env[name] if name in env else s[i : j + 1])
            i = j + 1
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def field_value(pod: Obj, path: str) -> str:
    meta, spec, st = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return (meta.get(m.group(1)) or {}).get(m.group(2), "")
    return {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.podIP": st.get("podIP", ""),
        "status.hostIP": st.get("hostIP", ""),
    }.get(path, "")


def resolve_binary(name: str, root: str, path: str) -> str | None:
    """Find an executable as execve + PATH lookup would, inside `root` (a container's /proc/PID/root)."""
    if "/" in name:
        p = os.path.join(root, name.lstrip("/"))
        return name if os.path.isfile(p) and os.access(p, os.X_OK) else None
    for d in path.split(":"):
        if not d:
            continue
        p = os.path.join(root, d.lstrip("/"), name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.join(d, name)
    return None


_TS = 0


def atomic_write(d: Path, files: dict[str, tuple[bytes, int]]) -> bool:
    """The kubelet's AtomicWriter: a timestamped dir, `..data` symlink swap, top-level symlinks."""
    global _TS
    data_link = d / "..data"
    if data_link.exists():
        cur = d / os.readlink(data_link)
        if _read_tree(cur) == {k: v[0] for k, v in files.items()} and all(
            (cur / k).stat().st_mode & 0o777 == m for k, (_, m) in files.items()
        ):
            return False
    else:
        cur = None
    _TS += 1
    ts = dt.datetime.now(dt.UTC).strftime("..%Y_%m_%d_%H_%M_%S.") + f"{os.getpid()}{_TS:06d}"
    new = d / ts
    new.mkdir()
    for rel, (content, mode) in files.items():
        p = new / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
        os.chmod(p, mode)
    tmp = d / "..data_tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(ts, tmp)
    os.rename(tmp, data_link)
    tops = {rel.split("/")[0] for rel in files}
    for entry in os.listdir(d):
        if entry.startswith(".."):
            continue
        if entry not in tops:
            (d / entry).unlink()
    for t in tops:
        link = d / t
        if not link.is_symlink():
            os.symlink(f"..data/{t}", link)
    if cur is not None:
        shutil.rmtree(cur, ignore_errors=True)
    return True


def _read_tree(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath) / n
            out[str(p.relative_to(root))] = p.read_bytes()
    return out
