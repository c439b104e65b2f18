"""The Deployment controller: ReplicaSets per pod-template hash, RollingUpdate and Recreate,
revision history, and the Available/Progressing conditions with the progress deadline."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import math
from typing import TYPE_CHECKING, Any

from ..record import Recorder, object_ref
from ..storage.resources import BY_PATH
from ..storage.store import Obj, now_rfc3339
from .podutil import SAFE, controller_ref, has_owner_ref, parse_time
from .refmanager import claim

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
RS = BY_PATH[("apps", "replicasets")]
DEPLOY = BY_PATH[("apps", "deployments")]
REV = "deployment.kubernetes.io/revision"
REV_HISTORY = "deployment.kubernetes.io/revision-history"
MAX_REV_HISTORY_CHARS = 2000  # sync.go maxRevHistoryLengthInChars
# annotations a Deployment does not pass on to its ReplicaSets (`skipCopyAnnotation`)
NOT_COPIED = {
    "kubectl.kubernetes.io/last-applied-configuration",
    REV,
    REV_HISTORY,
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
}


def _semantic(v: Any) -> Any:
    """The value as a typed Go struct holds it: a null field is an absent one (kubectl's
    `rollout undo` sends the template back with `creationTimestamp: null`)."""
    if isinstance(v, dict):
        return {k: _semantic(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_semantic(x) for x in v]
    return v


def template_hash(template: Obj) -> str:
    """A stable short hash of the pod template, in the alphabet Kubernetes uses (`SafeEncodeString`)."""
    raw = hashlib.sha256(json.dumps(_semantic(template), sort_keys=True).encode()).digest()
    n = int.from_bytes(raw[:8], "big")
    out = ""
    for _ in range(10):
        out += SAFE[n % len(SAFE)]
        n //= len(SAFE)
    return out


def int_or_percent(v: Any, total: int, *, round_up: bool) -> int:
    if isinstance(v, str) and v.endswith("%"):
        x = int(v[:-1]) * total / 100
        return math.ceil(x) if round_up else math.floor(x)
    return int(v)


def new_rs_annotations(d: Obj, rs_annotations: dict[str, str], new_revision: int) -> dict[str, str]:
    """`SetNewReplicaSetAnnotations` for an existing ReplicaSet: the Deployment's annotations
    copied over, and a revision lower than `new_revision` raised to it, the old number appended
    to `revision-history` (a rollback to this ReplicaSet), oldest dropped past 2,000 characters."""
    out = dict(rs_annotations)
    for k, v in (d["metadata"].get("annotations") or {}).items():
        if k not in NOT_COPIED:
            out[k] = v
    old = out.get(REV)
    try:
        old_n = int(old or "0")
    except ValueError:
        return out
    if old_n < new_revision:
        out[REV] = str(new_revision)
        if old is not None:
            history = out.get(REV_HISTORY, "")
            if not history:
                out[REV_HISTORY] = old
            else:
                parts = history.split(",")
                total, start = len(history) + len(old) + 1, 0
                while total > MAX_REV_HISTORY_CHARS and start < len(parts):
                    total -= len(parts[start]) + 1
                    start += 1
                if total <= MAX_REV_HISTORY_CHARS:
                    out[REV_HISTORY] = ",".join([*parts[start:], old])
    return out


def _rev(rs: Obj) -> int:
    try:
        return int(rs["metadata"].get("annotations", {}).get(REV, "0"))
    except ValueError:
        return 0


class DeploymentController:
    def __init__(self, cluster: Cluster, frozen: set[tuple[str, str]]) -> None:
        self.cluster = cluster
        self.store = cluster.store
        # deployments the controller leaves alone (benchmarks set their status by hand)
        self.frozen = frozen
        self.events = Recorder(self.store, "deployment-controller")
        # last seen (new RS, its spec replicas, updated, available) per deployment: "progress" is a change
        self._snap: dict[tuple[str, str], tuple[str, int, int, int]] = {}

    def reconcile(self, ns: str, name: str) -> None:
        d = self.store.find(DEPLOY, ns, name)
        if d is None or d["metadata"].get("deletionTimestamp") or (ns, name) in self.frozen:
            return
        spec = d["spec"]
        tpl = copy.deepcopy(spec["template"])
        h = template_hash(tpl)
        # getReplicaSetsForDeployment: ClaimReplicaSets adopts matching orphans, releases the rest
        rss = claim(self.store, RS, d, self.store.list(RS, ns))
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
        elif new is not None and not paused:
            # getNewReplicaSet: the existing ReplicaSet of this template (after `rollout undo`, an
            # old revision's) takes the next revision number and the Deployment's annotations
            current = new["metadata"].get("annotations") or {}
            wanted = new_rs_annotations(d, current, max_old + 1)
            if wanted != current:
                new = (
                    self.store.mutate(
                        RS,
                        ns,
                        new["metadata"]["name"],
                        lambda o: o["metadata"].__setitem__("annotations", wanted),
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
        replicas = int(d["spec"].get("replicas", 1))
        ru = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
        surge = (
            int_or_percent(ru.get("maxSurge", "25%"), replicas, round_up=True)
            if (d["spec"].get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
            else 0
        )
        annotations = new_rs_annotations(d, {}, rev)
        annotations["deployment.kubernetes.io/desired-replicas"] = str(replicas)
        annotations["deployment.kubernetes.io/max-replicas"] = str(replicas + surge)
        rs = {
            "metadata": {
                "name": f"{d['metadata']['name']}-{h}",
                "labels": labels,
                "annotations": annotations,
                "ownerReferences": [controller_ref(d)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                "selector": sel,
                "template": tpl,
            },
        }
        return self.store.create(RS, d["metadata"]["namespace"], rs)

    def _scale(self, rs: Obj, n: int, d: Obj | None = None) -> Obj:
        old = int(rs["spec"].get("replicas", 0))
        if old == n:
            return rs
        scaled = self.store.mutate(
            RS,
            rs["metadata"]["namespace"],
            rs["metadata"]["name"],
            lambda o: o["spec"].__setitem__("replicas", n),
        )
        if scaled is not None and d is not None:
            # sync.go scaleReplicaSet: "Scaled up replica set web-7c9 to 3 from 1" (no "from" from 0)
            way = "up" if n > old else "down"
            tail = f" from {old}" if old else ""
            self.events.event(
                object_ref(d, kind="Deployment", api_version="apps/v1"),
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {way} replica set {rs['metadata']['name']} to {n}{tail}",
            )
        return scaled or rs

    def _rolling(self, d: Obj, new: Obj, olds: list[Obj], replicas: int, ru: Obj) -> None:
        surge = int_or_percent(ru.get("maxSurge", "25%"), replicas, round_up=True)
        unavail = int_or_percent(ru.get("maxUnavailable", "25%"), replicas, round_up=False)
        if surge == 0 and unavail == 0:
            unavail = 1
        all_rs = [new, *olds]
        total = sum(int(r["spec"].get("replicas", 0)) for r in all_rs)
        cur_new = int(new["spec"].get("replicas", 0))
        if cur_new > replicas:
            new = self._scale(new, replicas, d)
        elif cur_new < replicas:
            max_total = replicas + surge
            if total < max_total:
                new = self._scale(new, cur_new + min(max_total - total, replicas - cur_new), d)
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
            olds_sorted[i] = self._scale(r, spec_n - down, d)
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
            self._scale(r, spec_n - down, d)
            budget -= down

    def _recreate(self, d: Obj, new: Obj, olds: list[Obj], replicas: int) -> None:
        for r in olds:
            self._scale(r, 0, d)
        ns = d["metadata"]["namespace"]
        old_pods = [p for p in self.store.list(PODS, ns) if any(has_owner_ref(p, r) for r in olds)]
        if old_pods:
            return
        self._scale(new, replicas, d)

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

    @staticmethod
    def _replica_failure(conds: dict[str, Obj], new: Obj | None, rss: list[Obj]) -> None:
        """progress.go syncRolloutStatus: a ReplicaSet's ReplicaFailure (the new one's first) is
        the Deployment's too (ReplicaSetToDeploymentCondition; SetDeploymentCondition keeps one
        with the same status and reason), and goes when no ReplicaSet has one."""
        for rs in ([new] if new is not None else []) + [r for r in rss if r is not new]:
            for c in (rs.get("status") or {}).get("conditions") or []:
                if c.get("type") != "ReplicaFailure":
                    continue
                prev = conds.get("ReplicaFailure")
                key = (c.get("status"), c.get("reason"))
                if prev is None or (prev.get("status"), prev.get("reason")) != key:
                    at = c.get("lastTransitionTime") or now_rfc3339()
                    conds["ReplicaFailure"] = {
                        "type": "ReplicaFailure",
                        "status": c.get("status", "True"),
                        "lastUpdateTime": at,
                        "lastTransitionTime": at,
                        "reason": c.get("reason", ""),
                        "message": c.get("message", ""),
                    }
                return
        conds.pop("ReplicaFailure", None)

    def _sync_status(
        self, d: Obj, new: Obj | None, replicas: int, strategy: Obj, *, created: bool, paused: bool
    ) -> None:
        ns, name = d["metadata"]["namespace"], d["metadata"]["name"]
        rss = [rs for rs in self.store.list(RS, ns) if has_owner_ref(rs, d)]
        st = lambda r, k: int((r.get("status") or {}).get(k, 0))  # noqa: E731
        total = sum(st(r, "replicas") for r in rss)
        desired = sum(int(r["spec"].get("replicas", 0)) for r in rss)
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
            last = parse_time(prog.get("lastUpdateTime", now))
            if (dt.datetime.now(dt.UTC) - last).total_seconds() > int(deadline):
                cond(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    f'ReplicaSet "{rs_name}" has timed out progressing.',
                )
        self._replica_failure(conds, new, rss)
        status = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
            # calculateStatus (pkg/controller/deployment/sync.go): the sum of every ReplicaSet's
            # spec.replicas (GetReplicaCountForReplicaSets) less the available ones, so a stuck
            # rollout's surge pod counts: 2 old available + 1 new not = 1 unavailable
            "unavailableReplicas": max(desired - available, 0),
            "conditions": [conds[k] for k in ("Available", "Progressing", "ReplicaFailure") if k in conds],
        }
        status = {k: v for k, v in status.items() if v or k in ("observedGeneration", "conditions")}
        self.store.mutate(DEPLOY, ns, name, lambda o: o.__setitem__("status", status), status=True)
