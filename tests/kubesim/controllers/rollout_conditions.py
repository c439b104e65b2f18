"""A Rollout's status as the controller writes it: the base counts, the reset a new template
brings, the Healthy/Progressing/Available/Completed conditions (aborted, progressing, timed out),
the Paused conditions, and the write itself, with the phase and message, only when it changed.

Upstream (argoproj/argo-rollouts v1.9.1): rollout/sync.go (calculateBaseStatus,
resetRolloutStatus, checkPausedConditions, calculateRolloutConditions, persistRolloutStatus),
utils/conditions/conditions.go (RolloutHealthy, RolloutProgressing, RolloutTimedOut)."""

from __future__ import annotations

import copy
import datetime as dt

from ..storage.store import Obj
from . import canary as c
from .podutil import parse_time
from .rollout_status import (
    ABORTED_REASON,
    AVAILABLE,
    COMPLETED,
    DEFAULT_PROGRESS_DEADLINE,
    HEALTHY,
    NEW_RS_AVAILABLE,
    PAUSED,
    PAUSED_REASON,
    PROGRESSING,
    REVISION,
    SCALE_DOWN_DEADLINE,
    TIMED_OUT_REASON,
    WORKLOAD_GENERATION,
    Synced,
    condition,
    get_condition,
    now,
    remove_condition,
    rollout_phase,
    set_condition,
)


class Conditions(Synced):
    """Methods of rollout._Sync (one reconciliation of one Rollout): conditions."""

    def _base_status(self) -> Obj:
        """calculateBaseStatus."""
        prev = self.ro.get("status") or {}
        st = copy.deepcopy(self.new_status)
        st["currentPodHash"] = c.pod_hash(self.new) if self.new is not None else self._hash()
        st["replicas"] = sum(c.created(r) for r in self.all)
        st["updatedReplicas"] = c.created(self.new)
        st["readyReplicas"] = sum(int((r.get("status") or {}).get("readyReplicas") or 0) for r in self.all)
        if prev.get("collisionCount") is not None:
            st["collisionCount"] = prev["collisionCount"]
        st["conditions"] = copy.deepcopy(prev.get("conditions") or [])
        if prev.get("promoteFull") and st["currentPodHash"] != prev.get("stableRS"):
            st["promoteFull"] = True
        return st

    def _reset(self, st: Obj) -> None:
        """resetRolloutStatus: a new template (or new steps) starts the steps again."""
        self.pause.clear = True
        self.pause.remove_abort = True
        if self.ro["spec"].get("restartAt"):
            st["restartedAt"] = self.ro["spec"]["restartAt"]
        st.pop("promoteFull", None)
        st["blueGreen"].pop("prePromotionAnalysisRunStatus", None)
        st["blueGreen"].pop("scaleUpPreviewCheckPoint", None)
        st["canary"].pop("currentStepAnalysisRunStatus", None)
        if c.canary(self.ro) is not None and c.steps(self.ro):
            st["currentStepIndex"] = 0
        else:
            st.pop("currentStepIndex", None)

    def _check_paused_conditions(self) -> None:
        """checkPausedConditions: Progressing RolloutPaused/RolloutResumed/RolloutRetry and the
        Paused condition follow the pause before anything else is synced."""
        status = copy.deepcopy(self.ro.get("status") or {})
        prog = get_condition(status, PROGRESSING)
        prog_paused = prog is not None and prog.get("reason") == PAUSED_REASON
        paused = bool(status.get("pauseConditions")) or bool(self.ro["spec"].get("paused"))
        aborted_cond = prog is not None and prog.get("reason") == ABORTED_REASON
        completed = bool(status.get("stableRS")) and status.get("stableRS") == status.get("currentPodHash")
        updates = []
        if paused != prog_paused and not aborted_cond and not completed:
            if paused:
                updates.append(condition(PROGRESSING, "Unknown", PAUSED_REASON, "Rollout is paused"))
            else:
                updates.append(condition(PROGRESSING, "Unknown", "RolloutResumed", "Rollout is resumed"))
        if not status.get("abort") and aborted_cond:
            updates.append(condition(PROGRESSING, "Unknown", "RolloutRetry", "Retrying Rollout after abort"))
        pause_cond = get_condition(status, PAUSED)
        if paused != (pause_cond is not None and pause_cond.get("status") == "True") and not aborted_cond:
            updates.append(
                condition(PAUSED, "True" if paused else "False", PAUSED_REASON, "Rollout is paused")
            )
        if not updates:
            return
        for cond in updates:
            set_condition(status, cond)
        status["observedGeneration"] = str(self.ro["metadata"].get("generation", 1))
        status["phase"], message = rollout_phase(self.ro, status)
        status["message"] = message
        if not message:
            status.pop("message")
        self._write_status(status)

    def _indefinite_step(self) -> bool:
        step, _ = c.current_step(self.ro)
        if step is not None and (step.get("analysis") is not None or step.get("pause") is not None):
            return True
        cond = get_condition(self.ro.get("status") or {}, PAUSED)
        return cond is not None and cond.get("status") == "True"

    def _healthy(self, st: Obj) -> bool:
        """conditions.RolloutHealthy."""
        n = c.replicas(self.ro)
        done = True
        if c.blue_green(self.ro) is not None:
            bgs = st.get("blueGreen") or {}
            done = bgs.get("activeSelector") == st.get("currentPodHash") and (
                not (c.blue_green(self.ro) or {}).get("previewService")
                or bgs.get("previewSelector") == st.get("currentPodHash")
            )
        elif c.canary(self.ro) is not None:
            count = len(c.steps(self.ro))
            all_steps = (
                count == 0 or st.get("currentStepIndex") is None or st.get("currentStepIndex") == count
            )
            done = (
                all_steps
                and bool(st.get("stableRS"))
                and st.get("stableRS") == st.get("currentPodHash")
                and int(st.get("replicas") or 0) == n
            )
        observed = (self.ro.get("status") or {}).get("observedGeneration") == str(
            self.ro["metadata"].get("generation", 1)
        )
        return (
            int(st.get("updatedReplicas") or 0) == n
            and int(st.get("availableReplicas") or 0) == n
            and observed
            and done
        )

    def _progressed(self, st: Obj) -> bool:
        """conditions.RolloutProgressing."""
        old = self.ro.get("status") or {}
        specific = False
        if c.blue_green(self.ro) is not None:
            ob, nb = old.get("blueGreen") or {}, st.get("blueGreen") or {}
            specific = ob.get("activeSelector") != nb.get("activeSelector") or ob.get(
                "previewSelector"
            ) != nb.get("previewSelector")
        else:
            stepped = (
                st.get("currentStepIndex") is not None
                and old.get("currentStepIndex") is not None
                and st["currentStepIndex"] != old["currentStepIndex"]
            )
            specific = (
                st.get("stableRS") != old.get("stableRS")
                or stepped
                or st.get("currentStepHash") != old.get("currentStepHash")
            )

        def n(obj: Obj, key: str) -> int:
            return int(obj.get(key) or 0)

        return (
            n(st, "updatedReplicas") != n(old, "updatedReplicas")
            or n(st, "replicas") - n(st, "updatedReplicas") < n(old, "replicas") - n(old, "updatedReplicas")
            or n(st, "readyReplicas") > n(old, "readyReplicas")
            or n(st, "availableReplicas") > n(old, "availableReplicas")
            or specific
        )

    def _conditions(self, st: Obj) -> Obj:
        """calculateRolloutConditions: Healthy, Progressing (aborted, progressing, timed out),
        Available, ReplicaFailure and Completed."""
        paused = bool((self.ro.get("status") or {}).get("pauseConditions")) or bool(
            self.ro["spec"].get("paused")
        )
        aborted = self.pause.aborted
        unhealthy_now = False
        had_healthy = get_condition(self.ro.get("status") or {}, HEALTHY) is not None
        if not paused and self._healthy(st):
            set_condition(st, condition(HEALTHY, "True", "RolloutHealthy", "Rollout is healthy"))
        elif had_healthy:
            unhealthy_now = set_condition(
                st, condition(HEALTHY, "False", "RolloutHealthy", "Rollout is not healthy")
            )
        if aborted:
            revision = (self.ro["metadata"].get("annotations") or {}).get(REVISION, "0")
            message = f"Rollout aborted update to revision {revision}"
            if self.pause.abort_message:
                message = f"{message}: {self.pause.abort_message}"
            if set_condition(st, condition(PROGRESSING, "False", ABORTED_REASON, message)):
                self._event("Warning", ABORTED_REASON, message)
        current = get_condition(self.ro.get("status") or {}, PROGRESSING)
        rs_name = self.new["metadata"]["name"] if self.new is not None else ""
        if not aborted:
            if self._healthy(st):
                set_condition(
                    st,
                    condition(
                        PROGRESSING,
                        "True",
                        NEW_RS_AVAILABLE,
                        f'ReplicaSet "{rs_name}" has successfully progressed.',
                    ),
                )
            elif self._progressed(st) or unhealthy_now:
                msg = f'ReplicaSet "{rs_name}" is progressing.'
                reason = "ReplicaSetUpdated"
                if st.get("stableRS") == st.get("currentPodHash") and unhealthy_now:
                    reason, msg = "ReplicaSetNotAvailable", "Rollout does not have minimum availability"
                cond = condition(PROGRESSING, "True", reason, msg)
                if current is not None and current.get("status") == "True":
                    cond["lastTransitionTime"] = current.get("lastTransitionTime", cond["lastTransitionTime"])
                remove_condition(st, PROGRESSING)
                set_condition(st, cond)
            elif not self._indefinite_step() and not self._waiting_scale_down() and self._timed_out(st):
                set_condition(
                    st,
                    condition(
                        PROGRESSING,
                        "False",
                        TIMED_OUT_REASON,
                        f'ReplicaSet "{rs_name}" has timed out progressing.',
                    ),
                )
        if c.blue_green(self.ro) is not None:
            active = next(
                (
                    r
                    for r in self.all
                    if c.pod_hash(r) and c.pod_hash(r) == (st.get("blueGreen") or {}).get("activeSelector")
                ),
                None,
            )
            is_available = c.is_saturated(self.ro, active)
        else:
            is_available = sum(c.available(r) for r in self.all) >= c.replicas(self.ro)
        if is_available:
            set_condition(
                st, condition(AVAILABLE, "True", "AvailableReason", "Rollout has minimum availability")
            )
        else:
            set_condition(
                st,
                condition(
                    AVAILABLE, "False", "AvailableReason", "Rollout does not have minimum availability"
                ),
            )
        completed = bool(st.get("stableRS")) and st.get("stableRS") == st.get("currentPodHash")
        set_condition(
            st,
            condition(COMPLETED, "True" if completed else "False", "RolloutCompleted", "RolloutCompleted"),
        )
        return st

    def _waiting_scale_down(self) -> bool:
        return any((r["metadata"].get("annotations") or {}).get(SCALE_DOWN_DEADLINE) for r in self.others)

    def _timed_out(self, st: Obj) -> bool:
        cond = get_condition(st, PROGRESSING)
        if cond is None or cond.get("reason") in (ABORTED_REASON, PAUSED_REASON):
            return False
        if cond.get("reason") == TIMED_OUT_REASON:
            return True
        deadline = int(self.ro["spec"].get("progressDeadlineSeconds") or DEFAULT_PROGRESS_DEADLINE)
        return now() > parse_time(cond["lastUpdateTime"]) + dt.timedelta(seconds=deadline)

    def _persist(self, st: Obj) -> None:
        """persistRolloutStatus: pause and abort, generations, the phase and message; a status
        that did not change is not written."""
        prev = self.ro.get("status") or {}
        self.pause.apply(st)
        ann = self.ro["metadata"].get("annotations") or {}
        if (self.ro["spec"].get("workloadRef")) and WORKLOAD_GENERATION in ann:
            st["workloadObservedGeneration"] = ann[WORKLOAD_GENERATION]
        st["observedGeneration"] = str(self.ro["metadata"].get("generation", 1))
        st["phase"], st["message"] = rollout_phase(self.ro, st)
        for key in [
            k for k, v in st.items() if v in (0, "", False, None, []) and k not in ("canary", "blueGreen")
        ]:
            if key == "currentStepIndex" and st[key] == 0:
                continue  # a pointer in Go: 0 is written
            del st[key]
        if st == prev:
            return
        was_paused, now_paused = bool(prev.get("pauseConditions")), bool(st.get("pauseConditions"))
        self._write_status(st)
        if was_paused != now_paused:
            if now_paused:
                self._event(
                    "Normal", PAUSED_REASON, f"Rollout is paused ({st['pauseConditions'][0]['reason']})"
                )
            elif not st.get("abortedAt"):
                self._event("Normal", "RolloutResumed", "Rollout is resumed")
