"""A whole emulated cluster on loopback: store, API server, controllers and kubelets on one
event loop in a background thread. Tests drive it over HTTP; helpers here are for setup and
for reading counters."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import datetime as dt
import hashlib
import os
import random
import re
import secrets
import shutil
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from .apiserver import bootstrap_policy
from .apiserver.admission import prepare
from .apiserver.audit import AuditLog
from .apiserver.auth import Authorizer, Rule, User
from .apiserver.kinds import install_local_apiservices
from .apiserver.priority import install_system_classes
from .apiserver.server import ApiServer
from .apiserver.serviceaccount import ServiceAccountAdmission
from .apiserver.services import admit_service, install_default_service
from .controllers.binder import install_default_class
from .controllers.clusterroles import aggregate
from .controllers.endpoints import EndpointsController
from .controllers.manager import Controllers
from .controllers.systempods import IMAGES as SYSTEM_IMAGES
from .controllers.systempods import install as install_system_pods
from .knobs import Fault, Knobs, Requests
from .node.containers import ContainerRuntime
from .node.kubelet import Kubelet
from .node.registration import node_object
from .storage.errors import ApiError
from .storage.resources import BY_KIND, BY_PATH, Resource
from .storage.store import Obj, Store

T = TypeVar("T")
PODS = BY_PATH[("", "pods")]
NODES = BY_PATH[("", "nodes")]
NAMESPACES = BY_PATH[("", "namespaces")]


class Cluster:
    def __init__(
        self,
        *,
        nodes: int = 3,
        seed: int = 0,
        knobs: Knobs | None = None,
        root: str | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.knobs = knobs or Knobs()
        self.root = Path(root or tempfile.mkdtemp(prefix="kubesim-"))
        self._own_root = root is None
        self.store = Store(self.knobs)
        self.store.mutating.append(ServiceAccountAdmission(self.store))
        self.auth = Authorizer(self.store, knobs=self.knobs)
        self.admin_token = secrets.token_hex(16)
        self.auth.add(self.admin_token, User("kubernetes-admin", None, ["system:masters"]))
        self.requests = Requests()
        self.audit: AuditLog | None = None  # an --audit-log-path file (apiserver/audit.py)
        self.faults: list[Fault] = []
        self.injected: Counter[str] = Counter()  # faults served, by kind ("503", "reset", "exec-hang", ...)
        self._fault_seq: Counter[tuple[str, str]] = Counter()
        self.first_seen: dict[tuple[str, str], float] | None = None
        self.exec_request_lines: list[int] = []  # len(`GET <raw path> HTTP/1.1`) of each pods/exec
        # pods/exec and pods/proxy requests being served now, and the most seen at once
        self.in_flight = 0
        self.peak_in_flight = 0
        self.kubelets: dict[str, Kubelet] = {}
        self.controllers = Controllers(self)
        # dials into pods' network namespaces: pods/proxy, services/proxy, readiness probes
        self.dial_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=32, thread_name_prefix="kubesim-proxy"
        )
        self.endpoints = EndpointsController(self)
        self.store.hooks.append(self._to_kubelets)
        self._n_nodes = nodes
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._wake: asyncio.Event | None = None
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self.port = 0
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> Cluster:
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self.loop = loop
            asyncio.set_event_loop(loop)
            _pidfd_watcher(loop)
            try:
                loop.run_until_complete(self._boot())
            except BaseException as e:
                errors.append(e)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._teardown())
            loop.close()

        self._thread = threading.Thread(target=run, name="kubesim", daemon=True)
        self._thread.start()
        ready.wait(30)
        if errors:
            raise errors[0]
        return self

    async def _boot(self) -> None:
        from .tls import make_certs, server_context

        # first: each namespace's kube-root-ca.crt ConfigMap holds the CA (controllers/serviceaccounts.py)
        self.ca_path, crt, key = make_certs(self.root / "pki")
        self._wake = asyncio.Event()
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.store.create(
                NAMESPACES,
                "",
                {
                    "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                },
            )
        install_default_service(self.store)
        install_default_class(self.store)
        install_system_classes(self.store)
        install_local_apiservices(self.store)
        bootstrap_policy.install(self.store)
        aggregate(self.store)
        if self.knobs.system_pods:  # their images are on kind's nodes
            self.knobs.node_images += tuple(SYSTEM_IMAGES.values())
        for i in range(self._n_nodes):
            self._add_node(f"node-{i + 1}")
        server = ApiServer(self)
        if self.knobs.system_pods:  # after the server: its admission defaults their pods
            install_system_pods(self)
        self._runner = web.AppRunner(server.app, handle_signals=False, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=1024, ssl_context=server_context(crt, key))
        await site.start()
        sock = site._server.sockets[0]  # type: ignore[union-attr]
        self.port = sock.getsockname()[1]
        if self.auth.gke is not None:
            await self.auth.gke.start(server_context(crt, key))
        self._tasks.append(asyncio.get_running_loop().create_task(self._control_loop()))

    def _add_node(self, name: str) -> None:
        idx = len(self.kubelets) + 1
        self.store.create(NODES, "", node_object(name, idx, self.knobs))
        kl = Kubelet(self, name, idx)
        self.kubelets[name] = kl
        kl.start()

    async def _control_loop(self) -> None:
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        last_tick = loop.time()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=0.2)
            self._wake.clear()
            if loop.time() - last_tick >= 0.2:
                self.controllers.tick()
                last_tick = loop.time()
            for _ in range(50):
                try:
                    if not self.controllers.run_pending():
                        break
                except Exception:
                    traceback.print_exc()

    def wake(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _teardown(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*(k.shutdown() for k in self.kubelets.values()), return_exceptions=True)
        self.dial_pool.shutdown(wait=False, cancel_futures=True)
        if self._runner is not None:
            await self._runner.cleanup()
        if self.auth.gke is not None:
            await self.auth.gke.stop()

    def stop(self) -> None:
        if self.loop is not None and self._thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(30)
        if self.audit is not None:
            self.audit.close()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- thread bridge ---------------------------------------------------------
    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the cluster's loop thread and return its result."""
        assert self.loop is not None

        async def wrap() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(30)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    # -- connection details ----------------------------------------------------
    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def kubeconfig(self, *, token: str | None = None, namespace: str = "default", user: str = "admin") -> str:
        import base64
        import json

        ca = base64.b64encode(self.ca_path.read_bytes()).decode()
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "kubesim",
                    "cluster": {"server": self.url, "certificate-authority-data": ca},
                }
            ],
            "users": [{"name": user, "user": {"token": token or self.admin_token}}],
            "contexts": [
                {
                    "name": "kubesim",
                    "context": {"cluster": "kubesim", "user": user, "namespace": namespace},
                }
            ],
            "current-context": "kubesim",
            "preferences": {},
        }
        return json.dumps(cfg, indent=2)

    def write_kubeconfig(self, path: str | os.PathLike[str], **kw: Any) -> str:
        p = Path(path)
        p.write_text(self.kubeconfig(**kw))
        p.chmod(0o600)
        return str(p)

    def add_user(self, name: str, rules: list[Rule] | None = None, *, token: str | None = None) -> str:
        token = token or secrets.token_hex(16)
        self.auth.add(token, User(name, list(rules or [])))
        return token

    def serviceaccount_token(self, namespace: str, name: str) -> str:
        """A token for `system:serviceaccount:NS:NAME` (in its groups), authorised by RBAC objects
        only; `kubectl create token` gets one the same way (apiserver/tokenrequest.py)."""
        return self.auth.add_serviceaccount(namespace, name)

    # -- faults and counters ---------------------------------------------------
    def inject(self, fault: Fault) -> None:
        with self._lock:
            self.faults.append(fault)

    def take_fault(self, method: str, path: str, route: tuple[str, str]) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.method and f.method != method:
                    continue
                if f.match and not (re.search(f.match, f"{route[0]} {route[1]}") or re.search(f.match, path)):
                    continue
                f.times -= 1
                if f.times <= 0:
                    self.faults.remove(f)
                return f
        return None

    def random_fault(self, method: str, path: str) -> Fault | None:
        """The seeded random fault (if any) for this request; see `Knobs.fault_rate`."""
        k = self.knobs
        if k.fault_rate <= 0 or not k.fault_mix:
            return None
        with self._lock:
            n = self._fault_seq[(method, path)]
            self._fault_seq[(method, path)] += 1
        digest = hashlib.sha256(f"{k.fault_seed}|{method}|{path}|{n}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2**64 >= k.fault_rate:
            return None
        kind = k.fault_mix[int.from_bytes(digest[8:12], "big") % len(k.fault_mix)]
        if kind == "reset":
            return Fault("reset")
        return Fault("status", status=int(kind), retry_after=1)

    def set_faults(self, rate: float, seed: int, mix: tuple[str, ...] | None = None) -> None:
        """Start (or stop, with rate 0) seeded random faults; resets their sequence and counts."""
        with self._lock:
            self.knobs.fault_rate = rate
            self.knobs.fault_seed = seed
            if mix is not None:
                self.knobs.fault_mix = mix
            self._fault_seq.clear()
            self.injected.clear()

    def note_fault(self, kind: str) -> None:
        with self._lock:
            self.injected[kind] += 1

    def count(self, route: tuple[str, str]) -> None:
        with self._lock:
            self.requests.counts[route] += 1
            if self.first_seen is not None and route not in self.first_seen:
                self.first_seen[route] = time.monotonic()

    def mark(self) -> None:
        """Start recording the monotonic time each (verb, resource) is first requested."""
        with self._lock:
            self.first_seen = {}

    def freeze_deployment(self, name: str, namespace: str = "default") -> None:
        """Stop the deployment controller touching `name`, so a test can set its status by hand."""
        self.call(lambda: self.controllers.frozen.add((namespace, name)))

    def set_deployment_status(self, name: str, status: dict[str, Any], namespace: str = "default") -> float:
        """Write a Deployment's status (as its controller would); returns the monotonic write time."""
        res = BY_PATH[("apps", "deployments")]

        def do() -> float:
            self.store.mutate(res, namespace, name, lambda o: o.__setitem__("status", status), status=True)
            return time.monotonic()

        return self.call(do)

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.counts.clear()
            self.peak_in_flight = self.in_flight

    # -- object helpers (run on the loop) -----------------------------------------
    def apply(self, obj: Obj) -> Obj:
        """Create (or replace) an object as `kubectl create`/`replace` would; returns the stored copy."""
        res = BY_KIND[obj["kind"]]
        ns = obj.get("metadata", {}).get("namespace", "default") if res.namespaced else ""

        def do() -> Obj:
            body = copy.deepcopy(obj)
            prepare(res, body)
            if res.kind == "Pod":
                body.setdefault("status", {"phase": "Pending"})
            cur = self.store.find(res, ns, body["metadata"]["name"])
            if res.kind == "Service":
                admit_service(self.store, body, cur)
            if cur is None:
                return self.store.create(res, ns, body)
            body["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
            return self.store.update(res, ns, body)

        return self.call(do)

    def get(self, kind: str, name: str, namespace: str = "default") -> Obj | None:
        res = BY_KIND[kind]
        return self.call(
            lambda: copy.deepcopy(self.store.find(res, namespace if res.namespaced else "", name))
        )

    def list(self, kind: str, namespace: str | None = "default") -> list[Obj]:
        res = BY_KIND[kind]
        return self.call(lambda: copy.deepcopy(self.store.list(res, namespace)))

    def delete(self, kind: str, name: str, namespace: str = "default") -> None:
        res = BY_KIND[kind]
        self.call(lambda: self.delete_object(res, namespace, name, grace=None, propagation="Background"))

    def add_node(self, name: str) -> None:
        self.call(lambda: self._add_node(name))

    def restart_kubelet(self, node: str) -> None:
        self.call(lambda: self.kubelets[node].restart())

    def sync_volumes(self) -> None:
        """Run every kubelet's volume refresh now (instead of waiting for the sync period)."""
        self.call(lambda: [k.sync_now() for k in self.kubelets.values()])

    def wait_for(self, pred: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return
            time.sleep(0.05)
        raise TimeoutError(f"kubesim: timed out waiting for {what}")

    def wait_rollout(self, name: str, namespace: str = "default", timeout: float = 60.0) -> None:
        """Block until the Deployment is complete as kubectl judges it."""
        self.wait_for(
            lambda: self.rollout_complete(name, namespace), timeout=timeout, what=f"rollout of {name}"
        )

    def rollout_complete(self, name: str, namespace: str = "default") -> bool:
        d = self.get("Deployment", name, namespace)
        if d is None:
            return False
        st, spec = d.get("status") or {}, d["spec"]
        return (
            st.get("observedGeneration", 0) >= d["metadata"].get("generation", 1)
            and st.get("updatedReplicas", 0) == spec.get("replicas", 1)
            and st.get("replicas", 0) == spec.get("replicas", 1)
            and st.get("availableReplicas", 0) == spec.get("replicas", 1)
        )

    def wait_statefulset(self, name: str, namespace: str = "default", timeout: float = 60.0) -> None:
        """Block until the StatefulSet is complete as `kubectl rollout status` judges it."""
        self.wait_for(
            lambda: self.statefulset_complete(name, namespace),
            timeout=timeout,
            what=f"rollout of statefulset {name}",
        )

    def statefulset_complete(self, name: str, namespace: str = "default") -> bool:
        """kubectl's StatefulSetStatusViewer: observed, all ready, and (RollingUpdate with a partition)
        `updatedReplicas >= replicas - partition`, or (no rollingUpdate) the update revision current.
        kubectl refuses OnDelete; here OnDelete is complete once observed and all ready."""
        s = self.get("StatefulSet", name, namespace)
        if s is None:
            return False
        st, spec = s.get("status") or {}, s["spec"]
        replicas = int(spec.get("replicas", 1))
        if not st.get("observedGeneration") or s["metadata"].get("generation", 1) > st["observedGeneration"]:
            return False
        if int(st.get("readyReplicas", 0)) < replicas:
            return False
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return True
        ru = strategy.get("rollingUpdate")
        if isinstance(ru, dict):
            return int(st.get("updatedReplicas", 0)) >= replicas - int(ru.get("partition") or 0)
        return bool(st.get("updateRevision") == st.get("currentRevision"))

    def wait_daemonset(self, name: str, namespace: str = "default", timeout: float = 60.0) -> None:
        """Block until the DaemonSet is complete as `kubectl rollout status` judges it."""
        self.wait_for(
            lambda: self.daemonset_complete(name, namespace),
            timeout=timeout,
            what=f"rollout of daemonset {name}",
        )

    def daemonset_complete(self, name: str, namespace: str = "default") -> bool:
        """kubectl's DaemonSetStatusViewer: observed, every desired node updated and available."""
        d = self.get("DaemonSet", name, namespace)
        if d is None:
            return False
        st = d.get("status") or {}
        desired = int(st.get("desiredNumberScheduled", 0))
        return (
            d["metadata"].get("generation", 1) <= int(st.get("observedGeneration", 0))
            and int(st.get("updatedNumberScheduled", 0)) >= desired
            and int(st.get("numberAvailable", 0)) >= desired
        )

    # -- used by the API server and controllers (on the loop) ----------------------
    def delete_object(self, res: Resource, ns: str, name: str, *, grace: int | None, propagation: str) -> Obj:
        obj = self.store.get(res, ns, name)
        if res.kind == "Pod":
            if obj["metadata"].get("deletionTimestamp"):
                return obj
            if grace is None:
                grace = int(obj["spec"].get("terminationGracePeriodSeconds", 30))
            node = obj["spec"].get("nodeName")
            if grace > 0 and node in self.kubelets:
                when = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=grace)).strftime("%Y-%m-%dT%H:%M:%SZ")

                def mark(p: Obj) -> None:
                    p["metadata"]["deletionTimestamp"] = when
                    p["metadata"]["deletionGracePeriodSeconds"] = grace

                cur = copy.deepcopy(obj)
                mark(cur)
                # deletionTimestamp is server-owned: write it directly
                key = self.store._key(res, ns, name)
                self.store._stamp(cur)
                old = self.store.objects[key]
                self.store.objects[key] = cur
                self.store._emit("MODIFIED", res, ns, cur, old)
                return cur
        if propagation == "Orphan":
            uid = obj["metadata"]["uid"]
            for dep_res in (
                BY_PATH[("apps", "replicasets")],
                BY_PATH[("apps", "controllerrevisions")],
                PODS,
            ):
                for o in self.store.list(dep_res, ns):
                    refs = o["metadata"].get("ownerReferences") or []
                    if any(r.get("uid") == uid for r in refs):
                        keep = [r for r in refs if r.get("uid") != uid]
                        self.store.mutate(dep_res, ns, o["metadata"]["name"], _set_owners(keep))
        return self.store.remove(res, ns, name)

    def finalize_pod(self, ns: str, name: str, uid: str) -> None:
        cur = self.store.find(PODS, ns, name)
        if cur is not None and cur["metadata"]["uid"] == uid:
            self.store.remove(PODS, ns, name)

    def container_runtime(self, pod: Obj, container: str) -> ContainerRuntime | None:
        kl = self.kubelets.get(pod["spec"].get("nodeName", ""))
        if kl is None:
            return None
        rt = kl.pods.get(pod["metadata"]["uid"])
        return None if rt is None else rt.containers.get(container)

    def container_log(self, ns: str, name: str, container: str, *, previous: bool = False) -> str | None:
        pod = self.store.get(PODS, ns, name)
        crt = self.container_runtime(pod, container)
        if crt is None or not crt.log_paths:
            return None
        paths = crt.log_paths
        if previous:
            if len(paths) < 2:
                raise ApiError.bad_request(
                    f'previous terminated container "{container}" in pod "{name}" not found'
                )
            p = paths[-2]
        else:
            p = paths[-1]
        try:
            return p.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _to_kubelets(self, ev: Any) -> None:
        if ev.res is PODS:
            node = ev.obj["spec"].get("nodeName")
            kl = self.kubelets.get(node or "")
            if kl is not None:
                kl.on_event(ev)


def _set_owners(refs: list[Any]) -> Callable[[Obj], None]:
    def fn(o: Obj) -> None:
        if refs:
            o["metadata"]["ownerReferences"] = refs
        else:  # an empty list is omitted, as the apiserver serialises it
            o["metadata"].pop("ownerReferences", None)

    return fn


def _pidfd_watcher(loop: asyncio.AbstractEventLoop) -> None:
    """Reap container and exec processes via pidfd on the loop, not one waiter thread per child
    (asyncio's default), which costs more than the exec itself at hundreds of execs."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            watcher = asyncio.PidfdChildWatcher()
            watcher.attach_loop(loop)
            asyncio.get_event_loop_policy().set_child_watcher(watcher)
        except (AttributeError, OSError, NotImplementedError):
            pass  # older kernels: keep the default watcher
