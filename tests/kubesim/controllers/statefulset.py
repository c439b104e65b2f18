"""The StatefulSet controller: ordinal pods, OrderedReady and Parallel management, RollingUpdate
with a partition and OnDelete, and revision history (`pkg/controller/statefulset`)."""

from __future__ import annotations

import copy
import datetime as dt
import re
from typing import TYPE_CHECKING

from ..record import Recorder, object_ref
from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj
from .history import (
    CR_HASH_LABEL,
    REVISION_LABEL,
    REVISIONS,
    RevisionedController,
    canonical,
    fnv32,
    revision_patch,
    revision_template,
    safe_encode,
)
from .podcontrol import PodControl
from .podutil import controller_ref, is_available, is_running_and_ready, owned_by, phase, terminating

if TYPE_CHECKING:
    from ..cluster import Cluster

PODS = BY_PATH[("", "pods")]
STS = BY_PATH[("apps", "statefulsets")]
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


class StatefulSetController(RevisionedController):
    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self.events = Recorder(self.store, "statefulset-controller")
        self.pods = PodControl(self.store, self.events)  # the back-off after a refused create

    def reconcile(self, ns: str, name: str) -> None:
        sts = self.store.find(STS, ns, name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return
        status = sts.get("status") or {}
        collision = int(status.get("collisionCount") or 0)
        update, collision = self._sts_update_revision(sts, self._revisions(sts), collision)
        revisions = self._revisions(sts)
        current = next(
            (r for r in revisions if r["metadata"]["name"] == status.get("currentRevision")), update
        )
        self._sts_sync_pods(sts, current, update)
        pods = [p for p in self.store.list(PODS, ns) if owned_by(p, sts) and self._ordinal(sts, p) >= 0]
        st = self._sts_status(sts, pods, current, update, collision)
        self.store.mutate(STS, ns, name, lambda o: o.__setitem__("status", st), status=True)
        self._sts_truncate_history(
            sts, pods, revisions, {current["metadata"]["name"], update["metadata"]["name"]}
        )

    @staticmethod
    def _ordinal(sts: Obj, pod: Obj) -> int:
        m = _ORDINAL.match(pod["metadata"]["name"])
        if m is None or m.group(1) != sts["metadata"]["name"]:
            return -1
        return int(m.group(2))

    def _sts_update_revision(self, sts: Obj, revisions: list[Obj], collision: int) -> tuple[Obj, int]:
        """`getStatefulSetRevisions`: the revision of the current template, created or renumbered."""
        data = revision_patch(sts)
        raw = canonical(data)
        nxt = int(revisions[-1].get("revision", 0)) + 1 if revisions else 1
        equal = [r for r in revisions if canonical(r.get("data")) == raw]
        if equal and equal[-1] is revisions[-1]:
            return revisions[-1], collision
        if equal:
            return self._set_revision_number(equal[-1], nxt), collision
        ns = sts["metadata"]["namespace"]
        labels = dict(((sts["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})
        while True:
            h = safe_encode(str(fnv32(raw + str(collision).encode())))
            rev_name = f"{sts['metadata']['name'][:223]}-{h}"
            existing = self.store.find(REVISIONS, ns, rev_name)
            if existing is not None:
                if canonical(existing.get("data")) == raw:
                    return existing, collision
                collision += 1
                continue
            meta: Obj = {
                "name": rev_name,
                "labels": {**labels, CR_HASH_LABEL: h},
                "ownerReferences": [controller_ref(sts)],
            }
            if sts["metadata"].get("annotations"):
                meta["annotations"] = dict(sts["metadata"]["annotations"])
            cr = {"metadata": meta, "data": data, "revision": nxt}
            return self.store.create(REVISIONS, ns, cr), collision

    def _create(self, sts: Obj, pod: Obj) -> Obj | None:
        """stateful_pod_control.go CreateStatefulPod + recordPodEvent: `SuccessfulCreate`
        "create Pod NAME in StatefulSet SET successful", or the Warning `FailedCreate`
        "create Pod NAME in StatefulSet SET failed error: <the API's message>"."""
        ref = object_ref(sts, kind="StatefulSet", api_version="apps/v1")
        pod_name, sts_name = pod["metadata"]["name"], sts["metadata"]["name"]
        try:
            made = self.store.create(PODS, sts["metadata"]["namespace"], pod)
        except ApiError as e:
            msg = f"create Pod {pod_name} in StatefulSet {sts_name} failed error: {e.message}"
            self.events.event(ref, "Warning", "FailedCreate", msg)
            self.pods.refused(sts)
            return None
        self.pods.failures.pop(sts["metadata"]["uid"], None)
        msg = f"create Pod {pod_name} in StatefulSet {sts_name} successful"
        self.events.event(ref, "Normal", "SuccessfulCreate", msg)
        return made

    def _sts_pod(self, sts: Obj, rev: Obj, ordinal: int) -> Obj:
        """`newStatefulSetPod` at a revision: the revision's template, identity labels, hostname."""
        tpl = revision_template(rev)
        tmeta = tpl.get("metadata") or {}
        name = f"{sts['metadata']['name']}-{ordinal}"
        labels = dict(tmeta.get("labels") or {})
        labels.update(
            {POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: rev["metadata"]["name"]}
        )
        meta: Obj = {
            "name": name,
            "generateName": f"{sts['metadata']['name']}-",
            "labels": labels,
            "ownerReferences": [controller_ref(sts)],
        }
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        pspec = copy.deepcopy(tpl.get("spec") or {})
        pspec["hostname"] = name
        if sts["spec"].get("serviceName"):
            pspec["subdomain"] = sts["spec"]["serviceName"]
        claims = sts["spec"].get("volumeClaimTemplates") or []
        if claims:  # updateStorage; kubesim has no PVCs, the kubelet gives each a plain directory
            names = {c["metadata"]["name"] for c in claims}
            pspec["volumes"] = [
                {
                    "name": c["metadata"]["name"],
                    "persistentVolumeClaim": {"claimName": f"{c['metadata']['name']}-{name}"},
                }
                for c in claims
            ] + [v for v in pspec.get("volumes") or [] if v.get("name") not in names]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": pspec,
            "status": {"phase": "Pending", "qosClass": "BestEffort"},
        }

    def _sts_sync_pods(self, sts: Obj, current: Obj, update: Obj) -> None:
        """`updateStatefulSet`: create missing ordinals, replace failed pods, scale down, then roll."""
        ns = sts["metadata"]["namespace"]
        spec = sts["spec"]
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        count = int(spec.get("replicas", 1))
        min_ready = int(spec.get("minReadySeconds") or 0)
        monotonic = spec.get("podManagementPolicy") != "Parallel"
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        ru = strategy.get("rollingUpdate")
        partition = int(ru.get("partition") or 0) if isinstance(ru, dict) else None
        now = dt.datetime.now(dt.UTC)
        current_replicas = int((sts.get("status") or {}).get("currentReplicas") or 0)

        pods = [p for p in self.store.list(PODS, ns) if owned_by(p, sts)]
        replicas: dict[int, Obj] = {}
        condemned: list[Obj] = []
        for p in pods:
            o = self._ordinal(sts, p)
            if start <= o < start + count:
                replicas[o] = p
            elif o >= 0:
                condemned.append(p)
        condemned.sort(key=lambda p: -self._ordinal(sts, p))

        def unavailable(p: Obj) -> bool:
            """`isUnavailable`: terminating, not running and ready, or not yet available."""
            return terminating(p) or not is_running_and_ready(p) or not is_available(p, min_ready, now)

        # processReplica, in ordinal order
        for o in range(start, start + count):
            pod = replicas.get(o)
            if pod is None:
                if not self.pods.may_create(sts):
                    return  # the last refusal's back-off lasts
                at_current = (rolling and ru is None and o < start + current_replicas) or (
                    partition is not None and o < start + partition
                )
                made = self._create(sts, self._sts_pod(sts, current if at_current else update, o))
                if made is None:
                    return  # refused: the sync ends here, retried at the next one
                replicas[o] = pod = made
                if monotonic:
                    return
                continue
            if phase(pod) in ("Failed", "Succeeded"):
                if not terminating(pod):
                    self._delete(PODS, pod)
                if monotonic:
                    return
                continue
            if monotonic and unavailable(pod):
                return

        # processCondemned: scale down from the highest ordinal
        first_unhealthy = next(
            (p for p in [*(replicas[o] for o in sorted(replicas)), *reversed(condemned)] if unavailable(p)),
            None,
        )
        for pod in condemned:
            if terminating(pod):
                if monotonic:
                    return
                continue
            if monotonic and unavailable(pod) and pod is not first_unhealthy:
                return
            self._delete(PODS, pod)
            if monotonic:
                return

        if not rolling:  # OnDelete: pods take the update revision when someone deletes them
            return
        update_min = partition or 0
        rev = update["metadata"]["name"]
        for idx in range(count - 1, update_min - 1, -1):
            pod = replicas[start + idx]
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) != rev and not terminating(pod):
                self._delete(PODS, pod)
                return
            if unavailable(pod):
                return

    def _sts_status(self, sts: Obj, pods: list[Obj], current: Obj, update: Obj, collision: int) -> Obj:
        """`updateStatus` + `completeRollingUpdate`."""
        spec = sts["spec"]
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = dt.datetime.now(dt.UTC)
        cur_name, upd_name = current["metadata"]["name"], update["metadata"]["name"]
        replicas = ready = available = cur = upd = 0
        for p in pods:
            if phase(p):
                replicas += 1
            if is_running_and_ready(p):
                ready += 1
                if is_available(p, min_ready, now):
                    available += 1
            if phase(p) and not terminating(p):
                rev = (p["metadata"].get("labels") or {}).get(REVISION_LABEL)
                cur += rev == cur_name
                upd += rev == upd_name
        want = int(spec.get("replicas", 1))
        strategy = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate" and upd == want and ready == want and replicas == want:
            cur, cur_name = upd, upd_name
        status: Obj = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": replicas,
            "readyReplicas": ready,
            "currentReplicas": cur,
            "updatedReplicas": upd,
            "currentRevision": cur_name,
            "updateRevision": upd_name,
            "collisionCount": collision,
            "availableReplicas": available,
        }
        if (sts.get("status") or {}).get("conditions"):
            status["conditions"] = sts["status"]["conditions"]
        omitempty = ("readyReplicas", "currentReplicas", "updatedReplicas")
        return {k: v for k, v in status.items() if v or k not in omitempty}

    def _sts_truncate_history(self, sts: Obj, pods: list[Obj], revisions: list[Obj], live: set[str]) -> None:
        live |= {(p["metadata"].get("labels") or {}).get(REVISION_LABEL, "") for p in pods}
        history = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = int(sts["spec"].get("revisionHistoryLimit", 10))
        if limit < 0 or len(history) <= limit:
            return
        for r in history[: len(history) - limit]:
            self._delete(REVISIONS, r)
