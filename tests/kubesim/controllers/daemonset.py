"""The DaemonSet controller: one pod per eligible node, pinned by node affinity, RollingUpdate
with maxSurge/maxUnavailable and OnDelete, and revision history (`pkg/controller/daemon`)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import TYPE_CHECKING

from ..record import Recorder
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import TEMPLATE_GENERATION, Obj
from .history import REVISION_LABEL, REVISIONS, RevisionedController, canonical, compute_hash, revision_patch
from .podcontrol import PodControl
from .podutil import (
    controller_ref,
    is_available,
    is_ready,
    owned_by,
    phase,
    pod_sort_key,
    scaled,
    terminating,
)
from .scheduling import add_daemon_tolerations, node_affinity_matches, pin_to_node, target_node, untolerated

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
NODES = BY_PATH[("", "nodes")]
DS = BY_PATH[("apps", "daemonsets")]
TEMPLATE_GENERATION_LABEL = "pod-template-generation"


class DaemonSetController(RevisionedController):
    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        # controller_utils.go's pod creation: SuccessfulCreate / FailedCreate events, back-off
        self.pods = PodControl(self.store, Recorder(self.store, "daemonset-controller"))

    def reconcile(self, ns: str, name: str) -> None:
        ds = self.store.find(DS, ns, name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return
        sel = ds["spec"].get("selector") or {}
        if not sel.get("matchLabels") and not sel.get("matchExpressions"):
            return  # "This daemon set is selecting all pods. A non-empty selector is required."
        nodes = self.store.list(NODES)
        cur, old = self._ds_history(ds)
        ds = self.store.find(DS, ns, name) or ds  # the history may have bumped collisionCount
        h = (cur["metadata"].get("labels") or {}).get(REVISION_LABEL, "")
        self._ds_manage(ds, nodes, h)
        if (ds["spec"].get("updateStrategy") or {}).get("type") == "RollingUpdate":
            self._ds_rolling_update(ds, nodes, h)
        self._ds_cleanup_history(ds, old)
        self._ds_status(ds, nodes, h)

    @staticmethod
    def _template_generation(ds: Obj) -> str | None:
        v = (ds["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION)
        return str(v) if v is not None and str(v).isdigit() else None

    def _is_updated(self, ds: Obj, pod: Obj, h: str) -> bool:
        """`util.IsPodUpdated`: the revision hash matches, or the template generation does."""
        labels = pod["metadata"].get("labels") or {}
        gen = self._template_generation(ds)
        return bool(h and labels.get(REVISION_LABEL) == h) or (
            gen is not None and labels.get(TEMPLATE_GENERATION_LABEL) == gen
        )

    def _ds_history(self, ds: Obj) -> tuple[Obj, list[Obj]]:
        """`constructHistory`: the revision matching the template (created if missing) and the rest."""
        ns = ds["metadata"]["namespace"]
        data = revision_patch(ds)
        raw = canonical(data)
        revisions = self._revisions(ds)
        current = [r for r in revisions if canonical(r.get("data")) == raw]
        old = [r for r in revisions if canonical(r.get("data")) != raw]
        nxt = max((int(r.get("revision", 0)) for r in old), default=0) + 1
        if not current:
            return self._ds_snapshot(ds, data, nxt), old
        keep = current[0]
        for r in current:
            if int(r.get("revision", 0)) >= int(keep.get("revision", 0)):
                keep = r
        keep_hash = (keep["metadata"].get("labels") or {}).get(REVISION_LABEL, "")
        for r in current:
            if r is keep:
                continue
            for p in self.store.list(PODS, ns):
                if owned_by(p, ds) and (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != keep_hash:
                    self.store.mutate(
                        PODS,
                        ns,
                        p["metadata"]["name"],
                        lambda o: (
                            o["metadata"].setdefault("labels", {}).__setitem__(REVISION_LABEL, keep_hash)
                        ),
                    )
            self._delete(REVISIONS, r)
        if int(keep.get("revision", 0)) < nxt:
            keep = self._set_revision_number(keep, nxt)
        return keep, old

    def _ds_snapshot(self, ds: Obj, data: Obj, number: int) -> Obj:
        ns, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        tpl = ds["spec"].get("template") or {}
        for _ in range(100):
            collision = (ds.get("status") or {}).get("collisionCount")
            h = compute_hash(tpl, collision)
            existing = self.store.find(REVISIONS, ns, f"{name}-{h}")
            if existing is not None:
                if canonical(existing.get("data")) == canonical(data):
                    return existing
                ds = self._bump_collision(ds, int(collision or 0) + 1)
                continue
            meta: Obj = {
                "name": f"{name}-{h}",
                "labels": {**((tpl.get("metadata") or {}).get("labels") or {}), REVISION_LABEL: h},
                "ownerReferences": [controller_ref(ds)],
            }
            if ds["metadata"].get("annotations"):
                meta["annotations"] = dict(ds["metadata"]["annotations"])
            return self.store.create(REVISIONS, ns, {"metadata": meta, "data": data, "revision": number})
        raise RuntimeError(f"daemonset {name}: no free revision name")

    def _bump_collision(self, ds: Obj, count: int) -> Obj:
        def bump(o: Obj) -> None:
            o.setdefault("status", {})["collisionCount"] = count

        ns, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        return self.store.mutate(DS, ns, name, bump, status=True) or ds

    def _node_to_pods(self, ds: Obj) -> dict[str, list[Obj]]:
        """`getNodesToDaemonPods`: the DaemonSet's pods by target node (deleted terminal pods left out)."""
        out: dict[str, list[Obj]] = {}
        for p in self.store.list(PODS, ds["metadata"]["namespace"]):
            if not owned_by(p, ds):
                continue
            if terminating(p) and phase(p) in ("Failed", "Succeeded"):
                continue
            out.setdefault(target_node(p), []).append(p)
        return out

    @staticmethod
    def should_run(node: Obj, ds: Obj) -> tuple[bool, bool]:
        """`NodeShouldRunDaemonPod`: (should run, should continue running). `spec.unschedulable` plays no
        part: daemon pods tolerate the unschedulable taint."""
        tspec = copy.deepcopy((ds["spec"].get("template") or {}).get("spec") or {})
        if tspec.get("nodeName") and tspec["nodeName"] != node["metadata"]["name"]:
            return False, False
        add_daemon_tolerations(tspec)
        if not node_affinity_matches(tspec, node):
            return False, False
        taints = (node.get("spec") or {}).get("taints") or []
        if untolerated(taints, tspec["tolerations"], ("NoSchedule", "NoExecute")):
            return False, not untolerated(taints, tspec["tolerations"], ("NoExecute",))
        return True, True

    def _ds_manage(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        """`manage` + `podsShouldBeOnNode`."""
        node_pods = self._node_to_pods(ds)
        surge = _allows_surge(ds)
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        create: list[str] = []
        delete: list[Obj] = []
        for node in nodes:
            nname = node["metadata"]["name"]
            run, keep = self.should_run(node, ds)
            exists = nname in node_pods
            pods = node_pods.get(nname, [])
            if run and not exists:
                create.append(nname)
            elif keep:
                running = []
                for p in pods:
                    if terminating(p):
                        continue
                    if phase(p) in ("Failed", "Succeeded"):
                        delete.append(p)
                    else:
                        running.append(p)
                running.sort(key=pod_sort_key)
                if not surge:
                    delete.extend(running[1:])
                    continue
                if len(running) <= 1:
                    if not running and run:
                        create.append(nname)
                    continue
                oldest_new = oldest_old = None
                for p in running:
                    is_new = (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == h
                    if is_new and oldest_new is None:
                        oldest_new = p
                    elif not is_new and oldest_old is None:
                        oldest_old = p
                    else:
                        delete.append(p)
                if (
                    oldest_new is not None
                    and oldest_old is not None
                    and (not is_ready(oldest_old) or is_available(oldest_new, min_ready, now))
                ):
                    delete.append(oldest_old)
            elif not keep and exists:
                delete.extend(p for p in pods if not terminating(p))
        known = {n["metadata"]["name"] for n in nodes}
        for nname, pods in node_pods.items():
            if nname not in known:
                delete.extend(p for p in pods if not p["spec"].get("nodeName"))
        self._ds_sync_nodes(ds, delete, create, h)

    def _ds_sync_nodes(self, ds: Obj, delete: list[Obj], create: list[str], h: str) -> None:
        tpl = copy.deepcopy(ds["spec"].get("template") or {})
        tmeta = tpl.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        gen = self._template_generation(ds)
        if gen is not None:
            labels[TEMPLATE_GENERATION_LABEL] = gen
        if h:
            labels[REVISION_LABEL] = h
        if not self.pods.may_create(ds):
            create = []  # the last refusal's back-off lasts
        for nname in create:
            pspec = copy.deepcopy(tpl.get("spec") or {})
            add_daemon_tolerations(pspec)
            pin_to_node(pspec, nname)
            meta: Obj = {
                "generateName": f"{ds['metadata']['name']}-",
                "labels": dict(labels),
                "ownerReferences": [controller_ref(ds)],
            }
            if tmeta.get("annotations"):
                meta["annotations"] = dict(tmeta["annotations"])
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": pspec,
                "status": {"phase": "Pending", "qosClass": "BestEffort"},
            }
            if isinstance(self.pods.create(ds, pod), ApiError):
                break  # slowStartBatch: the rest is not sent
        for p in delete:
            self._delete(PODS, p)

    def _ds_counts(self, ds: Obj, nodes: list[Obj], node_pods: dict[str, list[Obj]]) -> tuple[int, int, int]:
        """`updatedDesiredNodeCounts`: (maxSurge, maxUnavailable, desired); adds empty entries for
        nodes that should run a pod and have none."""
        desired = 0
        for node in nodes:
            if self.should_run(node, ds)[0]:
                desired += 1
                node_pods.setdefault(node["metadata"]["name"], [])
        ru = (ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        unavailable = scaled(ru.get("maxUnavailable", 1), desired, round_up=True)
        surge = scaled(ru.get("maxSurge", 0), desired, round_up=True)
        if desired > 0 and unavailable == 0 and surge == 0:
            unavailable = 1
        return surge, unavailable, desired

    def _updated_pods_on_node(self, ds: Obj, pods: list[Obj], h: str) -> tuple[Obj | None, Obj | None, bool]:
        """`findUpdatedPodsOnNode`: (new pod, old pod, at most one of each)."""
        new = old = None
        for p in pods:
            if terminating(p):
                continue
            if self._is_updated(ds, p, h):
                if new is not None:
                    return None, None, False
                new = p
            else:
                if old is not None:
                    return None, None, False
                old = p
        return new, old, True

    def _ds_rolling_update(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        """`rollingUpdate`: replace old pods within maxUnavailable, or surge new ones within maxSurge."""
        node_pods = self._node_to_pods(ds)
        surge, max_unavailable, desired = self._ds_counts(ds, nodes, node_pods)
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        by_name = {n["metadata"]["name"]: n for n in nodes}
        if surge == 0:
            unavailable = 0
            replace: list[Obj] = []
            candidates: list[Obj] = []
            for nname in sorted(node_pods):
                new, old, ok = self._updated_pods_on_node(ds, node_pods[nname], h)
                if not ok or (old is None) == (new is None):
                    unavailable += 1
                elif new is not None:
                    if not is_available(new, min_ready, now):
                        unavailable += 1
                elif old is not None:
                    if not is_available(old, min_ready, now):
                        replace.append(old)
                        unavailable += 1
                    elif unavailable < max_unavailable:
                        candidates.append(old)
            room = min(max(max_unavailable - unavailable, 0), len(candidates))
            self._ds_sync_nodes(ds, replace + candidates[:room], [], h)
            return
        to_delete: list[Obj] = []
        not_run: list[Obj] = []
        candidate_nodes: list[str] = []
        allowed_nodes: list[str] = []
        surging = available = 0
        for nname in sorted(node_pods):
            new, old, ok = self._updated_pods_on_node(ds, node_pods[nname], h)
            if not ok:
                surging += 1
                continue
            if old is not None:
                available += is_available(old, min_ready, now)
            elif new is not None:
                available += is_available(new, min_ready, now)
            if old is None:
                continue
            node = by_name.get(nname)
            run = node is not None and self.should_run(node, ds)[0]
            if new is None:
                if not is_available(old, min_ready, now):
                    if not run:
                        to_delete.append(old)
                        continue
                    allowed_nodes.append(nname)
                elif not run:
                    not_run.append(old)
                elif surging < surge:
                    candidate_nodes.append(nname)
            elif not is_available(new, min_ready, now):
                surging += 1
            else:
                to_delete.append(old)
        deletable = min(max(available - desired, 0), len(not_run))
        to_delete += not_run[:deletable]
        room = min(max(surge - surging, 0), len(candidate_nodes))
        self._ds_sync_nodes(ds, to_delete, allowed_nodes + candidate_nodes[:room], h)

    def _ds_cleanup_history(self, ds: Obj, old: list[Obj]) -> None:
        kill = len(old) - int(ds["spec"].get("revisionHistoryLimit", 10))
        if kill <= 0:
            return
        live = {
            (p["metadata"].get("labels") or {}).get(REVISION_LABEL)
            for p in self.store.list(PODS, ds["metadata"]["namespace"])
            if owned_by(p, ds)
        }
        for r in sorted(old, key=lambda r: int(r.get("revision", 0))):
            if kill <= 0:
                break
            if (r["metadata"].get("labels") or {}).get(REVISION_LABEL) in live:
                continue
            self._delete(REVISIONS, r)
            kill -= 1

    def _ds_status(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        """`updateDaemonSetStatus`: counted on the oldest pod of each node."""
        ds = self.store.find(DS, ds["metadata"]["namespace"], ds["metadata"]["name"]) or ds
        node_pods = self._node_to_pods(ds)
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        desired = current = mis = ready = updated = available = 0
        for node in nodes:
            pods = sorted(node_pods.get(node["metadata"]["name"], []), key=pod_sort_key)
            if self.should_run(node, ds)[0]:
                desired += 1
                if not pods:
                    continue
                current += 1
                if is_ready(pods[0]):
                    ready += 1
                    available += is_available(pods[0], min_ready, now)
                updated += self._is_updated(ds, pods[0], h)
            elif pods:
                mis += 1
        old = ds.get("status") or {}
        status: Obj = {
            "currentNumberScheduled": current,
            "numberMisscheduled": mis,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        for k in ("collisionCount", "conditions"):
            if old.get(k) is not None:
                status[k] = old[k]
        omitempty = ("updatedNumberScheduled", "numberAvailable", "numberUnavailable")
        status = {k: v for k, v in status.items() if v or k not in omitempty}
        ns, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        self.store.mutate(DS, ns, name, lambda o: o.__setitem__("status", status), status=True)


def _allows_surge(ds: Obj) -> bool:
    strategy = ds["spec"].get("updateStrategy") or {}
    if strategy.get("type") != "RollingUpdate":
        return False
    v = (strategy.get("rollingUpdate") or {}).get("maxSurge")
    return v is not None and scaled(v, 1, round_up=True) > 0
