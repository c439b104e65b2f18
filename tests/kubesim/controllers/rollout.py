"""The Argo Rollouts controller for `Rollout` (argoproj.io/v1alpha1), for what rollout-verify relies
on: a canary without a traffic router (replica-weighted setWeight, timed and indefinite pauses,
analysis steps, maxSurge/maxUnavailable, stable/canary Services), blue-green (active and preview
Services, prePromotionAnalysis, auto-promotion, scaleDownDelaySeconds), promotion (the plugin
clears status.pauseConditions, spec.paused), abort on a failed analysis and retry, spec.restartAt,
a workloadRef to a Deployment's template, and the status with its phase and message.

Read from argoproj/argo-rollouts v1.9.1: rollout/controller.go (newRolloutContext, syncHandler:
spec.replicas defaulted to 1), rollout/context.go (reconcile, haltProgress), rollout/canary.go
(rolloutCanary, reconcileCanaryPause, completedCurrentCanaryStep, syncRolloutStatusCanary,
scaleDownOldReplicaSetsForCanary), rollout/bluegreen.go, rollout/pause.go, rollout/analysis.go
(step and pre-promotion AnalysisRuns, their names and labels, the abort messages),
rollout/replicaset.go (reconcileNewReplicaSet, abort scale-down delay, cleanupUnhealthyReplicas),
rollout/restart.go (pods older than restartAt evicted, at most maxUnavailable at a time, then
status.restartedAt), rollout/service.go (selector patches), rollout/sync.go (createDesiredReplicaSet,
calculateBaseStatus, calculateRolloutConditions, persistRolloutStatus, shouldFullPromote,
promoteStable, resetRolloutStatus), rollout/templateref.go (workloadRef), utils/conditions
(reasons and messages), utils/rollout/rolloututil.go (CalculateRolloutPhase). The replica
arithmetic is canary.py.

Not emulated: traffic routers, experiments, background and post-promotion analysis, setCanaryScale,
anti-affinity injection, ephemeral metadata, rollback windows, the AnalysisRun history limits,
PodDisruptionBudgets on the restart's evictions (a graceful delete), and the controller's
requeue delays (kubesim resyncs every Rollout on its 0.2 s tick)."""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
from typing import TYPE_CHECKING

from ..apiserver.admission import prepare
from ..record import Recorder, object_ref
from ..storage.crds import CustomResource
from ..storage.errors import ApiError
from ..storage.store import Obj
from . import canary as c
from .deployment import template_hash
from .podutil import controller_ref, is_available, parse_time
from .refmanager import claim
from .rollout_analysis import AnalysisSteps
from .rollout_conditions import Conditions
from .rollout_status import (
    API_VERSION,
    DEFAULT_SCALE_DOWN_DELAY,
    DEPLOY,
    GROUP,
    INCONCLUSIVE,
    MANAGED_BY,
    NOT_COPIED,
    PODS,
    PROGRESSING,
    REVISION,
    REVISION_HISTORY,
    RS,
    SCALE_DOWN_DEADLINE,
    SERVICES,
    WORKLOAD_GENERATION,
    Pause,
    Stop,
    condition,
    labels_of,
    now,
    revision_of,
    set_condition,
    stamp,
    step_hash,
)
from .rollout_strategy import Strategies

if TYPE_CHECKING:
    from ..cluster import Cluster


class RolloutController:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.events = Recorder(self.store, "rollouts-controller")

    def resource(self, plural: str) -> CustomResource | None:
        """The kind as the CRDs installed serve it; None until they are applied."""
        return self.store.custom.lookup(GROUP, plural)

    def reconcile(self, ns: str, name: str) -> None:
        res = self.resource("rollouts")
        if res is None:
            return
        ro = self.store.find(res, ns, name)
        if ro is None or ro["metadata"].get("deletionTimestamp"):
            return
        if (ro.get("spec") or {}).get("replicas") is None:
            # syncHandler: "Defaulting .spec.replica to 1" (an Update, so the generation moves)
            self.store.mutate(res, ns, name, lambda o: o.setdefault("spec", {}).__setitem__("replicas", 1))
            return
        with contextlib.suppress(Stop):
            _Sync(self, res, ro).run()


class _Sync(Strategies, AnalysisSteps, Conditions):
    """One reconciliation of one Rollout (rolloutContext)."""

    def __init__(self, ctl: RolloutController, res: CustomResource, stored: Obj) -> None:
        self.ctl, self.store, self.res = ctl, ctl.store, res
        self.ns, self.name = stored["metadata"]["namespace"], stored["metadata"]["name"]
        self.ro = self._resolve(stored)
        self.pause = Pause(self.ro)
        status = self.ro.get("status") or {}
        self.new_status: Obj = {"canary": {}, "blueGreen": {}}
        if status.get("restartedAt"):
            self.new_status["restartedAt"] = status["restartedAt"]
        self._load_replicasets()
        self._load_analysis_runs()

    def _resolve(self, stored: Obj) -> Obj:
        """templateref.go Resolve: a workloadRef's Deployment lends its template (and selector)
        and its generation; neither is written back to the Rollout."""
        ro = copy.deepcopy(stored)
        ref = (ro.get("spec") or {}).get("workloadRef")
        if not ref:
            return ro
        if ref.get("kind") != "Deployment":
            raise Stop
        dep = self.store.find(DEPLOY, self.ns, str(ref.get("name", "")))
        if dep is None:
            raise Stop
        ro["spec"]["template"] = copy.deepcopy(dep["spec"]["template"])
        if not ro["spec"].get("selector"):
            ro["spec"]["selector"] = copy.deepcopy(dep["spec"]["selector"])
        ro["metadata"].setdefault("annotations", {})[WORKLOAD_GENERATION] = str(
            dep["metadata"].get("generation", 1)
        )
        return ro

    def _reload(self) -> None:
        stored = self.store.find(self.res, self.ns, self.name)
        if stored is None:
            raise Stop
        self.ro = self._resolve(stored)
        self.pause.ro = self.ro

    def _hash(self) -> str:
        """hash.ComputePodTemplateHash: the template and status.collisionCount (hashed apart from
        a Deployment's pod-template-hash, as upstream's two hash functions differ, so a
        workloadRef's ReplicaSet never takes its Deployment's name)."""
        tpl = copy.deepcopy((self.ro.get("spec") or {}).get("template") or {})
        collisions = (self.ro.get("status") or {}).get("collisionCount")
        return template_hash({"podTemplate": tpl, "collisionCount": collisions})

    def _load_replicasets(self) -> None:
        owner = {**self.ro, "spec": {**self.ro["spec"]}}
        self.all = sorted(
            claim(self.store, RS, owner, self.store.list(RS, self.ns)),
            key=lambda r: r["metadata"]["creationTimestamp"],
        )
        h = self._hash()
        self.new = next((r for r in self.all if c.pod_hash(r) == h), None)
        self._split()

    def _split(self) -> None:
        stable_hash = (self.ro.get("status") or {}).get("stableRS", "")
        self.stable = next((r for r in self.all if stable_hash and c.pod_hash(r) == stable_hash), None)
        self.olds = [r for r in self.all if r is not self.new]
        self.others = [r for r in self.all if r is not self.new and r is not self.stable]

    def _load_analysis_runs(self) -> None:
        res = self.ctl.resource("analysisruns")
        owned = (
            []
            if res is None
            else [
                a
                for a in self.store.list(res, self.ns)
                if any(
                    r.get("uid") == self.ro["metadata"]["uid"] and r.get("controller")
                    for r in a["metadata"].get("ownerReferences") or []
                )
            ]
        )
        status = self.ro.get("status") or {}
        step_name = ((status.get("canary") or {}).get("currentStepAnalysisRunStatus") or {}).get("name")
        pre_name = ((status.get("blueGreen") or {}).get("prePromotionAnalysisRunStatus") or {}).get("name")
        self.step_ar = next((a for a in owned if step_name and a["metadata"]["name"] == step_name), None)
        self.pre_ar = next((a for a in owned if pre_name and a["metadata"]["name"] == pre_name), None)
        self.other_ars = [a for a in owned if a is not self.step_ar and a is not self.pre_ar]

    def run(self) -> None:
        if self.new is None:
            self._create_replicaset()
        self._check_paused_conditions()
        if c.blue_green(self.ro) is not None:
            self._blue_green()
        else:
            self._canary()

    def _event(self, type_: str, reason: str, message: str) -> None:
        ref = object_ref(self.ro, kind="Rollout", api_version=API_VERSION)
        self.ctl.events.event(ref, type_, reason, message)

    def _write_status(self, status: Obj) -> None:
        stored = self.store.mutate(
            self.res, self.ns, self.name, lambda o: o.__setitem__("status", status), status=True
        )
        if stored is not None:
            self.ro = self._resolve(stored)
            self.pause.ro = self.ro

    def _set_revision(self, revision: str) -> None:
        """setRolloutRevision: the revision annotation, with a RolloutUpdated event."""
        if (self.ro["metadata"].get("annotations") or {}).get(REVISION) == revision:
            return
        self.store.mutate(
            self.res,
            self.ns,
            self.name,
            lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(REVISION, revision),
        )
        self._reload()
        self._event("Normal", "RolloutUpdated", f"Rollout updated to revision {revision}")

    def _create_replicaset(self) -> None:
        """createDesiredReplicaSet: NAME-HASH, the template labelled with the hash, 0 replicas."""
        h = self._hash()
        revision = str(max((revision_of(r) for r in self.all), default=0) + 1)
        tpl = copy.deepcopy(self.ro["spec"]["template"])
        tpl.setdefault("metadata", {})["labels"] = {**labels_of(tpl), c.HASH_LABEL: h}
        selector = copy.deepcopy(self.ro["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})[c.HASH_LABEL] = h
        annotations = {
            k: v for k, v in (self.ro["metadata"].get("annotations") or {}).items() if k not in NOT_COPIED
        }
        annotations.update({REVISION: revision, c.DESIRED: str(c.replicas(self.ro))})
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{self.name}-{h}",
                "labels": dict(tpl["metadata"]["labels"]),
                "annotations": annotations,
                "ownerReferences": [controller_ref(self.ro)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": int(self.ro["spec"].get("minReadySeconds") or 0),
                "selector": selector,
                "template": tpl,
            },
        }
        prepare(RS, rs)  # the controller is an API client: its writes are defaulted as anyone's
        try:
            created = self.store.create(RS, self.ns, rs)
        except ApiError as e:
            if e.code == 409:  # a ReplicaSet of that name that is not ours: collisionCount + 1
                status = copy.deepcopy(self.ro.get("status") or {})
                status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
                self._write_status(status)
            raise Stop from None
        self._set_revision(revision)
        self._event(
            "Normal",
            "NewReplicaSetCreated",
            f"Created ReplicaSet {created['metadata']['name']} (revision {revision})",
        )
        status = copy.deepcopy(self.ro.get("status") or {})
        set_condition(
            status,
            condition(
                PROGRESSING,
                "True",
                "NewReplicaSetCreated",
                f'Created new replica set "{created["metadata"]["name"]}"',
            ),
        )
        self._write_status(status)
        self.all.append(created)
        self.new = created
        self._split()

    def _sync_revision(self) -> None:
        """syncReplicaSetRevision: the new ReplicaSet's revision (and the Rollout's annotations)
        raised above the older ones', minReadySeconds kept in step."""
        if self.new is None:
            return
        revision = max((revision_of(r) for r in self.olds), default=0) + 1
        current = dict(self.new["metadata"].get("annotations") or {})
        wanted = dict(current)
        for k, v in (self.ro["metadata"].get("annotations") or {}).items():
            if k not in NOT_COPIED:
                wanted[k] = v
        old = revision_of(self.new)
        if old < revision:
            wanted[REVISION] = str(revision)
            if REVISION in current:
                history = current.get(REVISION_HISTORY, "")
                wanted[REVISION_HISTORY] = f"{history},{old}" if history else str(old)
        min_ready = int(self.ro["spec"].get("minReadySeconds") or 0)
        if wanted != current or int(self.new["spec"].get("minReadySeconds") or 0) != min_ready:

            def fn(o: Obj) -> None:
                o["metadata"]["annotations"] = wanted
                o["spec"]["minReadySeconds"] = min_ready

            self.new = self.store.mutate(RS, self.ns, self.new["metadata"]["name"], fn) or self.new
            self.all = [
                self.new if r["metadata"]["name"] == self.new["metadata"]["name"] else r for r in self.all
            ]
            self._split()
        self._set_revision((self.new["metadata"].get("annotations") or {}).get(REVISION, str(revision)))

    def _changed(self) -> bool:
        """PodTemplateOrStepsChanged: the steps or the pod template moved since the last status."""
        status = self.ro.get("status") or {}
        if c.blue_green(self.ro) is None and status.get("currentStepHash", "") != step_hash(self.ro):
            return True
        return self._pod_spec_changed()

    def _pod_spec_changed(self) -> bool:
        status = self.ro.get("status") or {}
        return bool(status.get("currentPodHash")) and status["currentPodHash"] != c.pod_hash(self.new)

    def _halted(self) -> str:
        if self.ro["spec"].get("paused"):
            return "user paused"
        if self.pause.condition(INCONCLUSIVE) is not None:
            return "inconclusive analysis"
        return ""

    def _scale(self, rs: Obj, n: int) -> bool:
        """scaleReplicaSetAndRecordEvent: replicas and the desired-replicas annotation."""
        want = str(c.replicas(self.ro))
        annotations = rs["metadata"].get("annotations") or {}
        needs_annotation = annotations.get(c.DESIRED) != want or (
            n == 0 and bool(annotations.get(SCALE_DOWN_DEADLINE))
        )
        old = c.spec_replicas(rs)
        if old == n and not needs_annotation:
            return False

        def fn(o: Obj) -> None:
            o["spec"]["replicas"] = n
            ann = o["metadata"].setdefault("annotations", {})
            ann[c.DESIRED] = want
            if n == 0 and not self._delay_abort_scale_down():
                ann.pop(SCALE_DOWN_DEADLINE, None)

        scaled = self.store.mutate(RS, self.ns, rs["metadata"]["name"], fn) or rs
        self._replace(scaled)
        if old != n:
            way = "up" if n > old else "down"
            self._event(
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {way} ReplicaSet {rs['metadata']['name']} (revision {revision_of(rs)}) from {old} to {n}",
            )
            return True
        return False

    def _replace(self, rs: Obj) -> None:
        name = rs["metadata"]["name"]
        self.all = [rs if r["metadata"]["name"] == name else r for r in self.all]
        if self.new is not None and self.new["metadata"]["name"] == name:
            self.new = rs
        self._split()

    def _annotate(self, rs: Obj, key: str, value: str | None) -> None:
        def fn(o: Obj) -> None:
            ann = o["metadata"].setdefault("annotations", {})
            if value is None:
                ann.pop(key, None)
            else:
                ann[key] = value

        self._replace(self.store.mutate(RS, self.ns, rs["metadata"]["name"], fn) or rs)

    def _delay_abort_scale_down(self) -> bool:
        """shouldDelayScaleDownOnAbort: only blue-green here (a canary without a router scales
        its canary down at once)."""
        if not self.pause.aborted or self.stable is None or c.blue_green(self.ro) is None:
            return False
        return (
            int((c.blue_green(self.ro) or {}).get("abortScaleDownDelaySeconds", DEFAULT_SCALE_DOWN_DELAY))
            != 0
        )

    def _remove_scale_down_deadlines(self) -> None:
        targets = []
        if self.new is not None and not self._delay_abort_scale_down():
            targets.append(self.new)
        if self.stable is not None and (not targets or self.stable is not self.new):
            targets.append(self.stable)
        for rs in targets:
            if (rs["metadata"].get("annotations") or {}).get(SCALE_DOWN_DEADLINE):
                self._annotate(rs, SCALE_DOWN_DEADLINE, None)

    def _new_replicas(self) -> int:
        """NewRSNewReplicas (without previewReplicaCount)."""
        if c.blue_green(self.ro) is not None:
            return c.replicas(self.ro)
        return c.basic_canary_counts(self.ro, self.new, self.stable, self.others)[0]

    def _reconcile_new_replicaset(self) -> bool:
        if self.new is None:
            return False
        n = self._new_replicas()
        if self._delay_abort_scale_down():
            deadline = (self.new["metadata"].get("annotations") or {}).get(SCALE_DOWN_DEADLINE)
            bg = c.blue_green(self.ro) or {}
            delay = int(bg.get("abortScaleDownDelaySeconds", DEFAULT_SCALE_DOWN_DELAY))
            if deadline:
                if parse_time(deadline) > now():
                    return False
                n = 0
            else:
                if self.stable is not None and c.available(self.stable) == c.replicas(self.ro):
                    self._annotate(self.new, SCALE_DOWN_DEADLINE, stamp(now() + dt.timedelta(seconds=delay)))
                return False
        return self._scale(self.new, n)

    def _referenced(self, rs: Obj) -> bool:
        """isReplicaSetReferenced: still named by the status or a Service's selector."""
        h = c.pod_hash(rs)
        status = self.ro.get("status") or {}
        bg = status.get("blueGreen") or {}
        if h in (
            status.get("stableRS"),
            status.get("currentPodHash"),
            bg.get("activeSelector"),
            bg.get("previewSelector"),
        ):
            return True
        for svc in self._service_names():
            obj = self.store.find(SERVICES, self.ns, svc)
            if obj is not None and (obj["spec"].get("selector") or {}).get(c.HASH_LABEL) == h:
                return True
        return False

    def _service_names(self) -> list[str]:
        strategy = self.ro["spec"].get("strategy") or {}
        if c.blue_green(self.ro) is not None:
            names = [strategy["blueGreen"].get("activeService"), strategy["blueGreen"].get("previewService")]
        else:
            names = [
                (strategy.get("canary") or {}).get("canaryService"),
                (strategy.get("canary") or {}).get("stableService"),
            ]
        return [str(n) for n in names if n]

    def _history_limit(self) -> None:
        """reconcileRevisionHistoryLimit: idle old ReplicaSets beyond revisionHistoryLimit go."""
        limit = int(self.ro["spec"].get("revisionHistoryLimit", 10))
        idle = sorted(
            (
                r
                for r in self.others
                if c.spec_replicas(r) == 0 and c.created(r) == 0 and not self._referenced(r)
            ),
            key=revision_of,
        )
        for rs in idle[: max(0, len(idle) - limit)]:
            self.ctl.cluster.delete_object(
                RS, self.ns, rs["metadata"]["name"], grace=None, propagation="Background"
            )

    def _switch_selector(self, svc_name: str, h: str) -> None:
        svc = self.store.find(SERVICES, self.ns, svc_name)
        if svc is None or not h or (svc["spec"].get("selector") or {}).get(c.HASH_LABEL) == h:
            return

        def fn(o: Obj) -> None:
            o["metadata"].setdefault("annotations", {})[MANAGED_BY] = self.name
            o["spec"].setdefault("selector", {})[c.HASH_LABEL] = h

        self.store.mutate(SERVICES, self.ns, svc_name, fn)

    def _ensure_targets(self, svc_name: str, rs: Obj | None) -> None:
        """ensureSVCTargets: a Service it does not manage yet is adopted only once the
        ReplicaSet is fully available."""
        if rs is None or not svc_name:
            return
        svc = self.store.find(SERVICES, self.ns, svc_name)
        if svc is None:
            raise Stop
        if (svc["spec"].get("selector") or {}).get(c.HASH_LABEL) == c.pod_hash(rs):
            return
        managed = MANAGED_BY in (svc["metadata"].get("annotations") or {})
        n = c.spec_replicas(rs)
        if not managed and not (n != 0 and c.available(rs) != 0 and n <= c.available(rs)):
            return
        self._switch_selector(svc_name, c.pod_hash(rs))

    def _restart_pods(self) -> int:
        """RolloutPodRestarter.Reconcile: once spec.restartAt has passed, evict the pods created
        before it (the stable ReplicaSet's first), as many at a time as maxUnavailable allows (at
        least one); when none is left, status.restartedAt takes spec.restartAt."""
        spec_at = self.ro["spec"].get("restartAt")
        status = self.ro.get("status") or {}
        if not spec_at or status.get("restartedAt") == spec_at or parse_time(spec_at) > now():
            return 0
        order = {r["metadata"]["uid"]: i for i, r in enumerate(self._by_priority())}
        pods = [
            p
            for p in self.store.list(PODS, self.ns)
            if any(ref.get("uid") in order for ref in p["metadata"].get("ownerReferences") or [])
        ]
        pods.sort(
            key=lambda p: min(
                order.get(ref.get("uid"), 99) for ref in p["metadata"].get("ownerReferences") or []
            )
        )
        total = sum(c.spec_replicas(r) for r in self.all)
        at_now = now()
        min_ready = int(self.ro["spec"].get("minReadySeconds") or 0)
        available = sum(
            1
            for p in pods
            if is_available(p, min_ready, at_now) and not p["metadata"].get("deletionTimestamp")
        )
        can_restart = available - (max(c.replicas(self.ro), total) - max(c.max_unavailable(self.ro), 1))
        restart_at = parse_time(spec_at)
        needs = restarted = 0
        for pod in pods:
            if parse_time(pod["metadata"]["creationTimestamp"]) >= restart_at:
                continue
            needs += 1
            if can_restart <= 0 or pod["metadata"].get("deletionTimestamp"):
                continue
            self.ctl.cluster.delete_object(
                PODS, self.ns, pod["metadata"]["name"], grace=None, propagation="Background"
            )
            can_restart -= 1
            restarted += 1
        if needs == restarted == 0:
            self.new_status["restartedAt"] = spec_at
        return restarted

    def _by_priority(self) -> list[Obj]:
        """SortReplicaSetsByPriority: stable, new, then the oldest first."""

        def rank(rs: Obj) -> tuple[int, str]:
            if self.stable is not None and rs["metadata"]["name"] == self.stable["metadata"]["name"]:
                return (0, "")
            if self.new is not None and rs["metadata"]["name"] == self.new["metadata"]["name"]:
                return (1, "")
            return (2, rs["metadata"]["creationTimestamp"])

        return sorted(self.all, key=rank)
