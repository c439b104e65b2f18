"""The two strategies' syncs: a canary without a traffic router (the stable ReplicaSet, then the
canary, then older ones scaled toward the step's weight; pause steps; steps completed; full
promotion) and blue-green (preview and active Service selectors, pause before promotion,
auto-promotion, old ReplicaSets scaled down after scaleDownDelaySeconds).

Upstream (argoproj/argo-rollouts v1.9.1): rollout/canary.go (rolloutCanary,
reconcileCanaryReplicaSets, reconcileCanaryPause, completedCurrentCanaryStep,
syncRolloutStatusCanary, scaleDownOldReplicaSetsForCanary), rollout/bluegreen.go (rolloutBlueGreen,
reconcileBlueGreenPause, scaleDownOldReplicaSetsForBlueGreen, syncRolloutStatusBlueGreen),
rollout/service.go (reconcileActiveService, ensureSVCTargets), rollout/replicaset.go
(cleanupUnhealthyReplicas), rollout/sync.go (shouldFullPromote, promoteStable)."""

from __future__ import annotations

import datetime as dt

from ..storage.store import Obj
from . import canary as c
from .podutil import parse_time
from .rollout_status import (
    BLUE_GREEN_PAUSE,
    CANARY_PAUSE,
    DEFAULT_SCALE_DOWN_DELAY,
    INCONCLUSIVE,
    REVISION,
    SCALE_DOWN_DEADLINE,
    SERVICES,
    Stop,
    Synced,
    format_selector,
    now,
    revision_of,
    stamp,
    step_hash,
    step_text,
)


class Strategies(Synced):
    """Methods of rollout._Sync (one reconciliation of one Rollout): strategies."""

    def _canary(self) -> None:
        if self._changed():
            self._sync_revision()
            self._sync_canary_status()
            return
        self._sync_revision()
        if self._restart_pods() > 0:
            return
        self._history_limit()
        self._canary_services()
        self._reconcile_analysis_runs()
        if self.pause.add:
            self._sync_canary_status()
            return
        if self._reconcile_canary_replicasets():
            self._sync_canary_status()
            return
        self._reconcile_canary_pause()
        self._sync_canary_status()

    def _reconcile_canary_replicasets(self) -> bool:
        if self._halted():
            return False
        self._remove_scale_down_deadlines()
        if c.stable_exists(self.new, self.stable):
            assert self.stable is not None
            stable_n = c.basic_canary_counts(self.ro, self.new, self.stable, self.others)[1]
            if self._scale(self.stable, stable_n):
                return True
        if self._reconcile_new_replicaset():
            return True
        active = [r for r in self.others if c.spec_replicas(r) > 0]
        return bool(active) and self._scale_down_old_for_canary(active) > 0

    def _reconcile_canary_pause(self) -> bool:
        if self.ro["spec"].get("paused") or (self.ro.get("status") or {}).get("promoteFull"):
            return False
        step, _ = c.current_step(self.ro)
        if step is None or step.get("pause") is None:
            return False
        if self.pause.condition(CANARY_PAUSE) is None and not (self.ro.get("status") or {}).get(
            "controllerPause"
        ):
            self.pause.add.append(CANARY_PAUSE)
        return True

    def _completed_step(self, step: Obj | None) -> bool:
        if self.ro["spec"].get("paused") or step is None:
            return False
        if step.get("pause") is not None:
            return self.pause.completed_canary_pause(step["pause"])
        if step.get("setWeight") is not None:
            return c.at_desired_counts(self.ro, self.new, self.stable, self.others)
        if step.get("analysis") is not None:
            return (
                self.step_ar is not None and (self.step_ar.get("status") or {}).get("phase") == "Successful"
            )
        return False

    def _sync_canary_status(self) -> None:
        st = self._base_status()
        st["availableReplicas"] = sum(c.available(r) for r in self.all)
        st["HPAReplicas"] = st["replicas"]
        st["selector"] = format_selector(self.ro["spec"].get("selector"))
        prev = self.ro.get("status") or {}
        step, index = c.current_step(self.ro)
        if prev.get("stableRS"):
            st["stableRS"] = prev["stableRS"]
        st["currentStepHash"] = step_hash(self.ro)
        count = len(c.steps(self.ro))
        if self._changed():
            self._reset(st)
            if self.new is not None and count and prev.get("stableRS") == c.pod_hash(self.new):
                self._event("Normal", "SkipSteps", "Rollback to stable ReplicaSets")
                st["currentStepIndex"] = count
            self._persist(self._conditions(st))
            return
        if prev.get("promoteFull"):
            self.pause.clear = True
            self.pause.remove_abort = True
            if count:
                index = count
        reason = self._full_promote_reason(st)
        if reason:
            self._promote(st, reason)
            self._persist(self._conditions(st))
            return
        if self.pause.aborted:
            if count:
                st["currentStepIndex"] = count if st.get("stableRS") == st["currentPodHash"] else 0
            self._persist(self._conditions(st))
            return
        if index is not None and self._completed_step(step):
            assert step is not None
            index += 1
            st["canary"].pop("currentStepAnalysisRunStatus", None)
            self._event(
                "Normal",
                "RolloutStepCompleted",
                f"Rollout step {index}/{count} completed ({step_text(step)})",
            )
            self.pause.remove.append(CANARY_PAUSE)
        if index is not None:
            st["currentStepIndex"] = index
        self._persist(self._conditions(st))

    def _full_promote_reason(self, st: Obj) -> str:
        """shouldFullPromote."""
        prev = self.ro.get("status") or {}
        if self.stable is None:
            return "Initial deploy"
        if c.canary(self.ro) is not None:
            if self.pause.aborted:
                return ""
            if self.new is None or c.available(self.new) < c.replicas(self.ro):
                return ""
            if prev.get("promoteFull"):
                return "Full promotion requested"
            _, index = c.current_step(self.ro)
            count = len(c.steps(self.ro))
            if count == 0 or (index is not None and index == count):
                return f"Completed all {count} canary steps"
            return ""
        active = (st.get("blueGreen") or {}).get("activeSelector", "")
        if not active:
            return "Initial deploy"
        if active != st.get("currentPodHash"):
            return ""
        if prev.get("promoteFull"):
            return "Full promotion requested"
        if self.pause.aborted:
            return ""
        return "Completed blue-green update"

    def _promote(self, st: Obj, reason: str) -> None:
        """promoteStable: the current ReplicaSet becomes the stable one."""
        self.pause.clear = True
        self.pause.remove_abort = True
        st.pop("promoteFull", None)
        st["blueGreen"].pop("scaleUpPreviewCheckPoint", None)
        if c.canary(self.ro) is not None:
            count = len(c.steps(self.ro))
            if count:
                st["currentStepIndex"] = count
            else:
                st.pop("currentStepIndex", None)
        if st.get("stableRS") != st["currentPodHash"]:
            st["stableRS"] = st["currentPodHash"]
            revision = (self.ro["metadata"].get("annotations") or {}).get(REVISION, "0")
            self._event(
                "Normal",
                "RolloutCompleted",
                f"Rollout completed update to revision {revision} ({st['currentPodHash']}): {reason}",
            )

    def _canary_services(self) -> None:
        strategy = c.canary(self.ro) or {}
        self._ensure_targets(str(strategy.get("stableService") or ""), self.stable)
        if self.pause.aborted:
            self._ensure_targets(str(strategy.get("canaryService") or ""), self.stable)
            return
        self._ensure_targets(str(strategy.get("canaryService") or ""), self.new)

    def _cleanup_unhealthy(self, olds: list[Obj]) -> int:
        down = 0
        for rs in sorted(olds, key=lambda r: r["metadata"]["creationTimestamp"]):
            n = c.spec_replicas(rs)
            if n == 0 or n == c.available(rs):
                continue
            self._scale(rs, c.available(rs))
            down += n - c.available(rs)
        return down

    def _scale_down_old_for_canary(self, olds: list[Obj]) -> int:
        down = self._cleanup_unhealthy(olds)
        names = {r["metadata"]["name"] for r in olds}
        olds = [r for r in self.all if r["metadata"]["name"] in names]  # as cleaned up
        available = sum(c.available(r) for r in self.all)
        budget = available - (c.replicas(self.ro) - c.max_unavailable(self.ro))
        if budget <= 0:
            return down
        for rs in sorted(olds, key=revision_of, reverse=True):
            if budget <= 0:
                break
            n = c.spec_replicas(rs)
            if n == 0:
                continue
            want = n - budget if n > budget else 0
            self._scale(rs, want)
            budget -= n - want
            down += n - want
        return down

    def _blue_green(self) -> None:
        bg = c.blue_green(self.ro) or {}
        active_name, preview_name = str(bg.get("activeService") or ""), str(bg.get("previewService") or "")
        active = self.store.find(SERVICES, self.ns, active_name)
        preview = self.store.find(SERVICES, self.ns, preview_name) if preview_name else None
        if active is None or (preview_name and preview is None):
            raise Stop  # getPreviewAndActiveServices: an error, retried
        self._sync_revision()
        if preview is not None and not self._halted() and self.new is not None:
            self._switch_selector(preview_name, c.pod_hash(self.new))
        if self._pod_spec_changed():
            self._sync_blue_green_status()
            return
        self._restart_pods()
        self._remove_scale_down_deadlines()
        if self.stable is not None:
            self._scale(self.stable, c.replicas(self.ro))
        self._reconcile_new_replicaset()
        active_olds = [r for r in self.others if c.spec_replicas(r) > 0]
        if active_olds and self.pause.condition(INCONCLUSIVE) is None:
            self._scale_down_old_for_blue_green(active_olds)
        self._history_limit()
        self._reconcile_blue_green_pause(active_name)
        self._reconcile_active_service(active_name)
        self._reconcile_analysis_runs()
        self._sync_blue_green_status()

    def _ready_for_pause(self) -> bool:
        return self.new is not None and c.spec_replicas(self.new) == self._new_replicas() == c.available(
            self.new
        )

    def _fast_tracked(self, active_name: str) -> bool:
        svc = self.store.find(SERVICES, self.ns, active_name) or {}
        selector = (svc.get("spec") or {}).get("selector") or {}
        if self.new is not None and (self.new["metadata"].get("annotations") or {}).get(SCALE_DOWN_DEADLINE):
            return True
        if (self.ro.get("status") or {}).get("promoteFull") or c.HASH_LABEL not in selector:
            return True
        return selector.get(c.HASH_LABEL) == c.pod_hash(self.new)

    def _reconcile_blue_green_pause(self, active_name: str) -> None:
        status = self.ro.get("status") or {}
        if status.get("abort") or not self._ready_for_pause() or self._halted():
            return
        if self._fast_tracked(active_name) or (status.get("blueGreen") or {}).get("scaleUpPreviewCheckPoint"):
            self.pause.remove.append(BLUE_GREEN_PAUSE)
            return
        bg = c.blue_green(self.ro) or {}
        if not (bg.get("autoPromotionEnabled") is False or int(bg.get("autoPromotionSeconds") or 0) > 0):
            self.pause.remove.append(BLUE_GREEN_PAUSE)
            return
        if not self._completed_pre_promotion():
            return
        if self.pause.condition(BLUE_GREEN_PAUSE) is not None:
            if self.pause.completed_blue_green_pause():
                self.pause.remove.append(BLUE_GREEN_PAUSE)
        elif not status.get("controllerPause"):
            self.pause.add.append(BLUE_GREEN_PAUSE)

    def _reconcile_active_service(self, active_name: str) -> None:
        if self._halted() or not self._ready_for_pause() or not c.is_saturated(self.ro, self.new):
            return
        svc = self.store.find(SERVICES, self.ns, active_name) or {}
        h = ((svc.get("spec") or {}).get("selector") or {}).get(c.HASH_LABEL, "")
        if self._fast_tracked(active_name):
            h = c.pod_hash(self.new)
        if self.pause.completed_blue_green_pause() and self._completed_pre_promotion():
            h = c.pod_hash(self.new)
        if (self.ro.get("status") or {}).get("abort"):
            h = (self.ro.get("status") or {}).get("stableRS", "")
        self._switch_selector(active_name, h)

    def _sync_blue_green_status(self) -> None:
        st = self._base_status()
        prev = self.ro.get("status") or {}
        if prev.get("stableRS"):
            st["stableRS"] = prev["stableRS"]
        if self._pod_spec_changed():
            self._reset(st)
        if prev.get("promoteFull"):
            self.pause.clear = True
            self.pause.remove_abort = True
        bg = c.blue_green(self.ro) or {}
        for key, svc_name in (
            ("previewSelector", bg.get("previewService")),
            ("activeSelector", bg.get("activeService")),
        ):
            svc = self.store.find(SERVICES, self.ns, str(svc_name or "")) if svc_name else None
            h = (((svc or {}).get("spec") or {}).get("selector") or {}).get(c.HASH_LABEL, "")
            if h:
                st["blueGreen"][key] = h
        reason = self._full_promote_reason(st)
        if reason:
            self._promote(st, reason)
        active = next(
            (r for r in self.all if c.pod_hash(r) and c.pod_hash(r) == st["blueGreen"].get("activeSelector")),
            None,
        )
        if active is not None:
            st["HPAReplicas"] = c.created(active)
            st["selector"] = format_selector((active.get("spec") or {}).get("selector"))
            st["availableReplicas"] = c.available(active)
            st["readyReplicas"] = int((active.get("status") or {}).get("readyReplicas") or 0)
        else:
            st["HPAReplicas"] = sum(c.created(r) for r in self.all)
            st["selector"] = format_selector(self.ro["spec"].get("selector"))
            st["availableReplicas"] = sum(c.available(r) for r in self.all)
        self._persist(self._conditions(st))

    def _scale_down_old_for_blue_green(self, olds: list[Obj]) -> bool:
        scaled = False
        bg = c.blue_green(self.ro) or {}
        delay = int(bg.get("scaleDownDelaySeconds", DEFAULT_SCALE_DOWN_DELAY))
        for rs in sorted(olds, key=revision_of, reverse=True):
            if self._referenced(rs) or c.spec_replicas(rs) == 0:
                continue
            deadline = (rs["metadata"].get("annotations") or {}).get(SCALE_DOWN_DEADLINE)
            want = 0
            if not deadline and delay > 0:
                self._annotate(rs, SCALE_DOWN_DEADLINE, stamp(now() + dt.timedelta(seconds=delay)))
                continue
            if deadline and parse_time(deadline) > now():
                continue
            scaled = self._scale(rs, want) or scaled
        return scaled
