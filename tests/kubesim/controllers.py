"""Deployment, ReplicaSet, scheduler and garbage-collector controllers, event driven."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import math
from typing import TYPE_CHECKING, Any

from .patch import labels_match, selector_from_match
from .resources import BY_PATH
from .store import Event, Obj, now_rfc3339
from .workloads import Workloads, node_fits

if TYPE_CHECKING:
    from .cluster import Cluster

PODS = BY_PATH[("", "pods")]
NODES = BY_PATH[("", "nodes")]
RS = BY_PATH[("apps", "replicasets")]
DEPLOY = BY_PATH[("apps", "deployments")]
STS = BY_PATH[("apps", "statefulsets")]
DS = BY_PATH[("apps", "daemonsets")]
REVISIONS = BY_PATH[("apps", "controllerrevisions")]
REV = "deployment.kubernetes.io/revision"
SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: Obj) -> str:
    """A stable short hash of the pod template, in the alphabet Kubernetes uses (`SafeEncodeString`)."""
    raw = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    n = int.from_bytes(raw[:8], "big")
    out = ""
    for _ in range(10):
        out += SAFE[n % len(SAFE)]
        n //= len(SAFE)
    return out


def owned_by(obj: Obj, owner: Obj) -> bool:
    return any(r.get("uid") == owner["metadata"]["uid"] for r in obj["metadata"].get("ownerReferences") or [])


def owner_ref(owner: Obj) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_active(pod: Obj) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded",
        "Failed",
    )


def is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def int_or_percent(v: Any, total: int, *, round_up: bool) -> int:
    if isinstance(v, str) and v.endswith("%"):
        x = int(v[:-1]) * total / 100
        return math.ceil(x) if round_up else math.floor(x)
    return int(v)


def _rev(rs: Obj) -> int:
    try:
        return int(rs["metadata"].get("annotations", {}).get(REV, "0"))
    except ValueError:
        return 0


def _parse(ts: str) -> dt.datetime:
    return dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)


class Controllers:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.rng = cluster.rng
        self.pending: set[tuple[str, str, str]] = set()
        # deployments the controller leaves alone (benchmarks set their status by hand)
        self.frozen: set[tuple[str, str]] = set()
        # last seen (new RS, its spec replicas, updated, available) per deployment: "progress" is a change
        self._snap: dict[tuple[str, str], tuple[str, int, int, int]] = {}
        self.workloads = Workloads(self)  # StatefulSets and DaemonSets
        self.store.hooks.append(self._on_event)

    # -- triggers ------------------------------------------------------------
    def _on_event(self, ev: Event) -> None:
        kind = ev.res.kind
        meta = ev.obj["metadata"]
        ns = ev.namespace
        if kind in ("Deployment", "StatefulSet", "DaemonSet"):
            self.pending.add((kind, ns, meta["name"]))
        elif kind in ("ReplicaSet", "Pod", "ControllerRevision"):
            if kind == "ReplicaSet" and ev.type != "DELETED":
                self.pending.add(("ReplicaSet", ns, meta["name"]))
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller"):
                    self.pending.add((ref["kind"], ns, ref["name"]))
            if (
                kind == "Pod"
                and ev.type != "DELETED"
                and not ev.obj["spec"].get("nodeName")
                and not meta.get("deletionTimestamp")
            ):
                self.pending.add(("Schedule", ns, meta["name"]))
        elif kind == "Node":
            for d in self.store.list(DS):
                self.pending.add(("DaemonSet", d["metadata"]["namespace"], d["metadata"]["name"]))
            for p in self.store.list(PODS):
                if not p["spec"].get("nodeName"):
                    self.pending.add(("Schedule", p["metadata"]["namespace"], p["metadata"]["name"]))
        if ev.type == "DELETED":
            self._collect_garbage(ev.obj)
        self.cluster.wake()

    def tick(self) -> None:
        """Periodic resync: progress deadlines and availability depend on the clock."""
        for res in (DEPLOY, STS, DS):
            for d in self.store.list(res):
                self.pending.add((res.kind, d["metadata"]["namespace"], d["metadata"]["name"]))

    def run_pending(self) -> bool:
        worked = False
        while self.pending:
            kind, ns, name = self.pending.pop()
            worked = True
            if kind == "Deployment":
                self.reconcile_deployment(ns, name)
            elif kind == "ReplicaSet":
                self.reconcile_replicaset(ns, name)
            elif kind == "StatefulSet":
                self.workloads.reconcile_statefulset(ns, name)
            elif kind == "DaemonSet":
                self.workloads.reconcile_daemonset(ns, name)
            elif kind == "Schedule":
                self.schedule(ns, name)
        return worked

    # -- garbage collection -----------------------------------------------------
    def _collect_garbage(self, owner: Obj) -> None:
        uid = owner["metadata"]["uid"]
        for res in (RS, REVISIONS, PODS):
            for o in self.store.list(res, owner["metadata"].get("namespace")):
                if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or []):
                    self.cluster.delete_object(
                        res,
                        o["metadata"]["namespace"],
                        o["metadata"]["name"],
                        grace=None,
                        propagation="Background",
                    )

    # -- scheduler --------------------------------------------------------------
    def schedule(self, ns: str, name: str) -> None:
        pod = self.store.find(PODS, ns, name)
        if pod is None or pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            return
        # nodeSelector, required node affinity (a DaemonSet pod's matchFields pin), cordons, taints
        nodes = [n for n in self.store.list(NODES) if node_fits(pod["spec"], n)]
        if not nodes:

            def unsched(p: Obj) -> None:
                conds = [c for c in p["status"].get("conditions") or [] if c["type"] != "PodScheduled"]
                conds.append(
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": f"0/{len(self.store.list(NODES))} nodes are available: no node matches.",
                        "lastTransitionTime": now_rfc3339(),
                    }
                )
                p["status"]["conditions"] = conds

            self.store.mutate(PODS, ns, name, unsched, status=True)
            return
        load = {n["metadata"]["name"]: 0 for n in nodes}
        for p in self.store.list(PODS):
            node = p["spec"].get("nodeName")
            if node in load and is_active(p):
                load[node] += 1
        target = min(load, key=lambda n: (load[n], n))

        def bind(p: Obj) -> None:
            p["spec"]["nodeName"] = target
            p.setdefault("status", {})
            p["status"]["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": now_rfc3339(),
                }
            ]

        # Binding writes spec.nodeName, which only the binding subresource may; do it as the apiserver would.
        cur = copy.deepcopy(pod)
        bind(cur)
        self.store.update(PODS, ns, cur, subresource="")
        self.store.mutate(
            PODS,
            ns,
            name,
            lambda p: p["status"].update(conditions=cur["status"]["conditions"]),
            status=True,
        )

    # -- replicaset ---------------------------------------------------------------
    def reconcile_replicaset(self, ns: str, name: str) -> None:
        rs = self.store.find(RS, ns, name)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return
        pods = [p for p in self.store.list(PODS, ns) if owned_by(p, rs)]
        active = [p for p in pods if is_active(p)]
        want = int(rs["spec"].get("replicas", 1))
        if len(active) < want:
            for _ in range(want - len(active)):
                self._create_pod(rs)
        elif len(active) > want:

            def rank(p: Obj) -> tuple[int, int, int, str]:
                return (
                    0 if not p["spec"].get("nodeName") else 1,
                    0 if (p.get("status") or {}).get("phase") == "Pending" else 1,
                    0 if not is_ready(p) else 1,
                    # newest first
                    "".join(chr(255 - ord(c)) for c in p["metadata"]["creationTimestamp"]),
                )

            for p in sorted(active, key=rank)[: len(active) - want]:
                self.cluster.delete_object(
                    PODS, ns, p["metadata"]["name"], grace=None, propagation="Background"
                )
        active = [p for p in self.store.list(PODS, ns) if owned_by(p, rs) and is_active(p)]
        ready = [p for p in active if is_ready(p)]
        min_ready = int(rs["spec"].get("minReadySeconds", 0))
        now = dt.datetime.now(dt.UTC)
        available = [p for p in ready if min_ready == 0 or self._ready_since(p, now) >= min_ready]
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": len(active),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
        self.store.mutate(RS, ns, name, lambda o: o.__setitem__("status", status), status=True)

    @staticmethod
    def _ready_since(p: Obj, now: dt.datetime) -> float:
        for c in (p.get("status") or {}).get("conditions") or []:
            if c.get("type") == "Ready" and c.get("lastTransitionTime"):
                return (now - _parse(c["lastTransitionTime"])).total_seconds()
        return 0.0

    def _create_pod(self, rs: Obj) -> None:
        tpl = copy.deepcopy(rs["spec"]["template"])
        meta = tpl.setdefault("metadata", {})
        suffix = "".join(self.rng.choice(SAFE) for _ in range(5))
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{rs['metadata']['name']}-{suffix}",
                "labels": meta.get("labels") or {},
                "annotations": meta.get("annotations") or {},
                "ownerReferences": [owner_ref(rs)],
            },
            "spec": tpl.get("spec") or {},
            "status": {"phase": "Pending", "qosClass": "BestEffort"},
        }
        if not pod["metadata"]["annotations"]:
            del pod["metadata"]["annotations"]
        self.store.create(PODS, rs["metadata"]["namespace"], pod)

    # -- deployment ---------------------------------------------------------------
    def reconcile_deployment(self, ns: str, name: str) -> None:
        d = self.store.find(DEPLOY, ns, name)
        if d is None or d["metadata"].get("deletionTimestamp") or (ns, name) in self.frozen:
            return
        spec = d["spec"]
        tpl = copy.deepcopy(spec["template"])
        h = template_hash(tpl)
        rss = [rs for rs in self.store.list(RS, ns) if owned_by(rs, d)]
        new = next(
            (rs for rs in rss if (rs["metadata"].get("labels") or {}).get("pod-template-hash") == h),
            None,
        )
        olds = [rs for rs in rss if rs is not new]
        max_old = max((_rev(rs) for rs in olds), default=0)
        paused = bool(spec.get("paused"))
        replicas = int(spec.get("replicas", 1))
        created = False
        if new is None and not paused:
            new = self._create_rs(d, tpl, h, max_old + 1)
            created = True
        elif new is not None and _rev(new) <= max_old and not paused:
            rev = str(max_old + 1)
            new = (
                self.store.mutate(
                    RS,
                    ns,
                    new["metadata"]["name"],
                    lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(REV, rev),
                )
                or new
            )
        if new is not None and d["metadata"].get("annotations", {}).get(REV) != str(_rev(new)):
            rev = str(_rev(new))
            d = (
                self.store.mutate(
                    DEPLOY,
                    ns,
                    name,
                    lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(REV, rev),
                )
                or d
            )
        strategy = spec.get("strategy") or {"type": "RollingUpdate"}
        if not paused and new is not None:
            if strategy.get("type") == "Recreate":
                self._recreate(d, new, olds, replicas)
            else:
                self._rolling(d, new, olds, replicas, strategy.get("rollingUpdate") or {})
            self._cleanup(d, olds)
        self._sync_status(d, new, replicas, strategy, created=created, paused=paused)

    def _create_rs(self, d: Obj, tpl: Obj, h: str, rev: int) -> Obj:
        labels = dict((tpl.get("metadata") or {}).get("labels") or {})
        labels["pod-template-hash"] = h
        tpl.setdefault("metadata", {})["labels"] = labels
        sel = copy.deepcopy(d["spec"]["selector"])
        sel.setdefault("matchLabels", {})["pod-template-hash"] = h
        rs = {
            "metadata": {
                "name": f"{d['metadata']['name']}-{h}",
                "labels": labels,
                "annotations": {
                    REV: str(rev),
                    "deployment.kubernetes.io/desired-replicas": str(d["spec"].get("replicas", 1)),
                    "deployment.kubernetes.io/max-replicas": str(d["spec"].get("replicas", 1)),
                },
                "ownerReferences": [owner_ref(d)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                "selector": sel,
                "template": tpl,
            },
        }
        return self.store.create(RS, d["metadata"]["namespace"], rs)

    def _scale(self, rs: Obj, n: int) -> Obj:
        if int(rs["spec"].get("replicas", 0)) == n:
            return rs
        return (
            self.store.mutate(
                RS,
                rs["metadata"]["namespace"],
                rs["metadata"]["name"],
                lambda o: o["spec"].__setitem__("replicas", n),
            )
            or rs
        )

    def _rolling(self, d: Obj, new: Obj, olds: list[Obj], replicas: int, ru: Obj) -> None:
        surge = int_or_percent(ru.get("maxSurge", "25%"), replicas, round_up=True)
        unavail = int_or_percent(ru.get("maxUnavailable", "25%"), replicas, round_up=False)
        if surge == 0 and unavail == 0:
            unavail = 1
        all_rs = [new, *olds]
        total = sum(int(r["spec"].get("replicas", 0)) for r in all_rs)
        cur_new = int(new["spec"].get("replicas", 0))
        if cur_new > replicas:
            new = self._scale(new, replicas)
        elif cur_new < replicas:
            max_total = replicas + surge
            if total < max_total:
                new = self._scale(new, cur_new + min(max_total - total, replicas - cur_new))
        old_count = sum(int(r["spec"].get("replicas", 0)) for r in olds)
        if old_count == 0:
            return
        all_count = sum(int(r["spec"].get("replicas", 0)) for r in [new, *olds])
        min_available = replicas - unavail
        new_unavailable = int(new["spec"].get("replicas", 0)) - int(
            (new.get("status") or {}).get("availableReplicas", 0)
        )
        max_down = all_count - min_available - new_unavailable
        if max_down <= 0:
            return
        # First remove old replicas that are not available anyway.
        cleaned = 0
        olds_sorted = sorted(olds, key=lambda r: r["metadata"]["creationTimestamp"])
        for i, r in enumerate(olds_sorted):
            if cleaned >= max_down:
                break
            spec_n = int(r["spec"].get("replicas", 0))
            unhealthy = spec_n - int((r.get("status") or {}).get("availableReplicas", 0))
            if spec_n == 0 or unhealthy <= 0:
                continue
            down = min(unhealthy, max_down - cleaned)
            olds_sorted[i] = self._scale(r, spec_n - down)
            cleaned += down
        available = sum(int((r.get("status") or {}).get("availableReplicas", 0)) for r in [new, *olds_sorted])
        available = min(available, sum(int(r["spec"].get("replicas", 0)) for r in [new, *olds_sorted]))
        if available <= min_available:
            return
        budget = available - min_available
        for r in olds_sorted:
            if budget <= 0:
                break
            spec_n = int(r["spec"].get("replicas", 0))
            if spec_n == 0:
                continue
            down = min(spec_n, budget)
            self._scale(r, spec_n - down)
            budget -= down

    def _recreate(self, d: Obj, new: Obj, olds: list[Obj], replicas: int) -> None:
        for r in olds:
            self._scale(r, 0)
        ns = d["metadata"]["namespace"]
        old_pods = [p for p in self.store.list(PODS, ns) if any(owned_by(p, r) for r in olds)]
        if old_pods:
            return
        self._scale(new, replicas)

    def _cleanup(self, d: Obj, olds: list[Obj]) -> None:
        limit = int(d["spec"].get("revisionHistoryLimit", 10))
        idle = sorted(
            (
                r
                for r in olds
                if int(r["spec"].get("replicas", 0)) == 0 and not (r.get("status") or {}).get("replicas")
            ),
            key=_rev,
        )
        for r in idle[: max(0, len(idle) - limit)]:
            self.cluster.delete_object(
                RS,
                r["metadata"]["namespace"],
                r["metadata"]["name"],
                grace=None,
                propagation="Background",
            )

    def _sync_status(
        self, d: Obj, new: Obj | None, replicas: int, strategy: Obj, *, created: bool, paused: bool
    ) -> None:
        ns, name = d["metadata"]["namespace"], d["metadata"]["name"]
        rss = [rs for rs in self.store.list(RS, ns) if owned_by(rs, d)]
        st = lambda r, k: int((r.get("status") or {}).get(k, 0))  # noqa: E731
        total = sum(st(r, "replicas") for r in rss)
        updated = st(new, "replicas") if new is not None else 0
        ready = sum(st(r, "readyReplicas") for r in rss)
        available = sum(st(r, "availableReplicas") for r in rss)
        ru = strategy.get("rollingUpdate") or {}
        unavail = (
            int_or_percent(ru.get("maxUnavailable", "25%"), replicas, round_up=False)
            if strategy.get("type") != "Recreate"
            else 0
        )
        if (
            strategy.get("type") != "Recreate"
            and unavail == 0
            and int_or_percent(ru.get("maxSurge", "25%"), replicas, round_up=True) == 0
        ):
            unavail = 1
        old = d.get("status") or {}
        conds = {c["type"]: c for c in old.get("conditions") or []}
        now = now_rfc3339()

        def cond(type_: str, status: str, reason: str, message: str, *, progress: bool = False) -> None:
            prev = conds.get(type_)
            c = {"type": type_, "status": status, "reason": reason, "message": message}
            same = prev is not None and prev.get("status") == status
            c["lastTransitionTime"] = prev["lastTransitionTime"] if same and prev else now
            if (
                prev is not None
                and prev.get("reason") == reason
                and prev.get("message") == message
                and not progress
            ):
                c["lastUpdateTime"] = prev.get("lastUpdateTime", now)
            else:
                c["lastUpdateTime"] = now
            conds[type_] = c

        if available >= replicas - unavail:
            cond(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        else:
            cond(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        rs_name = new["metadata"]["name"] if new is not None else ""
        complete = (
            new is not None
            and updated == replicas
            and available >= replicas
            and total == replicas
            and st(new, "availableReplicas") >= replicas
        )
        prog = conds.get("Progressing")
        snap = (
            rs_name,
            int(new["spec"].get("replicas", 0)) if new is not None else 0,
            updated,
            available,
        )
        progressed = created or self._snap.get((ns, name)) != snap
        self._snap[(ns, name)] = snap
        deadline = d["spec"].get("progressDeadlineSeconds")
        if paused:
            cond("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
        elif complete:
            cond(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{rs_name}" has successfully progressed.',
            )
        elif created:
            cond(
                "Progressing",
                "True",
                "NewReplicaSetCreated",
                f'Created new replica set "{rs_name}"',
                progress=True,
            )
        elif (
            progressed
            or prog is None
            or prog.get("reason") in ("NewReplicaSetAvailable", "DeploymentPaused", "DeploymentResumed")
        ):
            cond(
                "Progressing",
                "True",
                "ReplicaSetUpdated",
                f'ReplicaSet "{rs_name}" is progressing.',
                progress=True,
            )
        elif prog.get("reason") != "ProgressDeadlineExceeded" and deadline is not None:
            last = _parse(prog.get("lastUpdateTime", now))
            if (dt.datetime.now(dt.UTC) - last).total_seconds() > int(deadline):
                cond(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    f'ReplicaSet "{rs_name}" has timed out progressing.',
                )
        status = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
            "unavailableReplicas": max(replicas - available, 0),
            "conditions": [conds[k] for k in ("Available", "Progressing") if k in conds],
        }
        status = {k: v for k, v in status.items() if v or k in ("observedGeneration", "conditions")}
        self.store.mutate(DEPLOY, ns, name, lambda o: o.__setitem__("status", status), status=True)


def pods_of(selector: Obj, pods: list[Obj]) -> list[Obj]:
    reqs = selector_from_match(selector)
    return [p for p in pods if labels_match(p["metadata"].get("labels") or {}, reqs)]
