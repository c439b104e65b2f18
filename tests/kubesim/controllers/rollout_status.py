"""Argo Rollouts' status vocabulary, pure: the names and messages of conditions and pauses, the
phase and message a status shows, the steps' hash, and the pause context of one sync.

Upstream (argoproj/argo-rollouts v1.9.1): utils/conditions/conditions.go (reasons, messages,
SetRolloutCondition), utils/rollout/rolloututil.go (CalculateRolloutPhase, CanaryStepString),
rollout/pause.go (pauseContext: CalculatePauseStatus, CompletedCanaryPauseStep,
CompletedBlueGreenPause), pkg/apis/rollouts/v1alpha1 (RolloutPause.DurationSeconds)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..storage.resources import BY_PATH
from ..storage.store import Obj, now_rfc3339
from . import canary as c
from .deployment import template_hash
from .podutil import parse_time

GROUP = "argoproj.io"
API_VERSION = "argoproj.io/v1alpha1"
PODS = BY_PATH[("", "pods")]
RS = BY_PATH[("apps", "replicasets")]
DEPLOY = BY_PATH[("apps", "deployments")]
SERVICES = BY_PATH[("", "services")]

REVISION = "rollout.argoproj.io/revision"  # annotations.RevisionAnnotation
REVISION_HISTORY = "rollout.argoproj.io/revision-history"
WORKLOAD_GENERATION = "rollout.argoproj.io/workload-generation"
MANAGED_BY = "argo-rollouts.argoproj.io/managed-by-rollouts"  # v1alpha1.ManagedByRolloutsKey
SCALE_DOWN_DEADLINE = "scale-down-deadline"  # v1alpha1.DefaultReplicaSetScaleDownDeadlineAnnotationKey
NOT_COPIED = {
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    c.DESIRED,
    "notified.notifications.argoproj.io",
}
# utils/conditions/conditions.go
PROGRESSING, AVAILABLE, HEALTHY, COMPLETED, PAUSED = (
    "Progressing",
    "Available",
    "Healthy",
    "Completed",
    "Paused",
)
ABORTED_REASON, TIMED_OUT_REASON, PAUSED_REASON = (
    "RolloutAborted",
    "ProgressDeadlineExceeded",
    "RolloutPaused",
)
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
CANARY_PAUSE, BLUE_GREEN_PAUSE, INCONCLUSIVE = "CanaryPauseStep", "BlueGreenPause", "InconclusiveAnalysisRun"
COMPLETED_PHASES = ("Successful", "Failed", "Error", "Inconclusive")
DEFAULT_PROGRESS_DEADLINE = 600
DEFAULT_SCALE_DOWN_DELAY = 30  # blue-green scaleDownDelaySeconds, and its abortScaleDownDelaySeconds


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def stamp(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def go_duration_seconds(value: Any) -> int:
    """RolloutPause.DurationSeconds / DurationString: a number of seconds, or a Go duration with
    s, m or h units ("30s", "1m30s"); an unreadable one is -1, as upstream's."""
    if isinstance(value, int):
        return value
    text = str(value or "")
    if text.isdigit():
        return int(text)
    parts = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    if not text or parts is None:
        return -1
    h, m, s = (int(p or 0) for p in parts.groups())
    return h * 3600 + m * 60 + s


def rollout_phase(ro: Obj, status: Obj) -> tuple[str, str]:
    """utils/rollout/rolloututil.go CalculateRolloutPhase: Degraded, Paused, Progressing (with why)
    or Healthy, from the spec and the status about to be written."""
    spec = ro.get("spec") or {}
    for cond in status.get("conditions") or []:
        if cond.get("type") == "InvalidSpec":
            return "Degraded", f"InvalidSpec: {cond.get('message', '')}"
        if cond.get("reason") in (ABORTED_REASON, TIMED_OUT_REASON):
            return "Degraded", f"{cond['reason']}: {cond.get('message', '')}"
    if spec.get("paused"):
        return "Paused", "manually paused"
    for pause in status.get("pauseConditions") or []:
        return "Paused", str(pause.get("reason", ""))
    if spec.get("restartAt") and spec.get("restartAt") != status.get("restartedAt"):
        return "Progressing", "rollout is restarting"
    if int(status.get("updatedReplicas") or 0) < c.replicas(ro):
        return "Progressing", "more replicas need to be updated"
    if int(status.get("availableReplicas") or 0) < int(status.get("updatedReplicas") or 0):
        return "Progressing", "updated replicas are still becoming available"
    promoted = bool(status.get("stableRS")) and status.get("stableRS") == status.get("currentPodHash")
    if c.blue_green(ro) is not None:
        active = (status.get("blueGreen") or {}).get("activeSelector", "")
        if not active or active != status.get("currentPodHash"):
            return "Progressing", "active service cutover pending"
        if not promoted:
            return "Progressing", "waiting for post-promotion verification to complete"
    elif c.canary(ro) is not None:
        if int(status.get("replicas") or 0) > int(status.get("updatedReplicas") or 0):
            return "Progressing", "old replicas are pending termination"
        if not promoted:
            return "Progressing", "waiting for all steps to complete"
    return "Healthy", ""


def step_hash(ro: Obj) -> str:
    """conditions.ComputeStepHash: a hash of the canary steps ("" for blue-green)."""
    if c.blue_green(ro) is not None or c.canary(ro) is None:
        return ""
    raw = json.dumps(c.steps(ro), sort_keys=True, separators=(",", ":")).encode()
    return template_hash({"steps": hashlib.sha256(raw).hexdigest()})


def condition(type_: str, status: str, reason: str, message: str) -> Obj:
    at = now_rfc3339()
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": at,
        "lastTransitionTime": at,
        "reason": reason,
        "message": message,
    }


def get_condition(status: Obj, type_: str) -> Obj | None:
    return next((x for x in status.get("conditions") or [] if x.get("type") == type_), None)


def set_condition(status: Obj, cond: Obj) -> bool:
    """conditions.SetRolloutCondition: a condition with the same status and reason is kept as is."""
    cur = get_condition(status, cond["type"])
    if cur is not None and cur.get("status") == cond["status"] and cur.get("reason") == cond["reason"]:
        return False
    if cur is not None and cur.get("status") == cond["status"]:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime", cond["lastTransitionTime"])
    status["conditions"] = [x for x in status.get("conditions") or [] if x.get("type") != cond["type"]] + [
        cond
    ]
    return True


def remove_condition(status: Obj, type_: str) -> None:
    status["conditions"] = [x for x in status.get("conditions") or [] if x.get("type") != type_]


def revision_of(obj: Obj | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("annotations", {}).get(REVISION, "0"))
    except ValueError:
        return 0


def labels_of(obj: Obj | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def format_selector(selector: Obj | None) -> str:
    """metav1.FormatLabelSelector for matchLabels (and simple matchExpressions)."""
    sel = selector or {}
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        values = ",".join(sorted(e.get("values") or []))
        op = e.get("operator")
        if op == "In":
            parts.append(f"{e['key']} in ({values})")
        elif op == "NotIn":
            parts.append(f"{e['key']} notin ({values})")
        elif op == "Exists":
            parts.append(e["key"])
        elif op == "DoesNotExist":
            parts.append(f"!{e['key']}")
    return ",".join(parts)


class Stop(Exception):
    """The sync cannot go on (a missing Service or workload); the next resync tries again."""


@dataclass
class Pause:
    """rollout/pause.go pauseContext: what this sync adds to or removes from the pause state."""

    ro: Obj
    add: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    clear: bool = False
    add_abort: bool = False
    remove_abort: bool = False
    abort_message: str = ""

    @property
    def aborted(self) -> bool:
        if self.remove_abort:
            return False
        return self.add_abort or bool((self.ro.get("status") or {}).get("abort"))

    def abort(self, message: str) -> None:
        self.add_abort, self.abort_message = True, message

    def condition(self, reason: str) -> Obj | None:
        return next(
            (
                p
                for p in (self.ro.get("status") or {}).get("pauseConditions") or []
                if p.get("reason") == reason
            ),
            None,
        )

    def apply(self, status: Obj) -> None:
        """CalculatePauseStatus: the abort, else the pause conditions, into the new status."""
        prev = self.ro.get("status") or {}
        if self.add_abort or (not self.remove_abort and prev.get("abort")):
            status["abort"] = True
            status["abortedAt"] = prev.get("abortedAt") or now_rfc3339()
            return
        status.pop("abort", None)
        status.pop("abortedAt", None)
        if self.clear:
            return
        controller_pause = bool(prev.get("controllerPause"))
        conds = [p for p in prev.get("pauseConditions") or [] if p.get("reason") not in self.remove]
        seen = {p.get("reason") for p in prev.get("pauseConditions") or []}
        for reason in self.add:
            if reason not in seen:
                conds.append({"reason": reason, "startTime": now_rfc3339()})
                seen.add(reason)
                controller_pause = True
        if conds:
            status["pauseConditions"] = conds
            if controller_pause:
                status["controllerPause"] = True

    def completed_canary_pause(self, pause: Obj) -> bool:
        cond = self.condition(CANARY_PAUSE)
        if (self.ro.get("status") or {}).get("controllerPause") and cond is None:
            return True  # the pause condition was cleared: promoted
        if pause.get("duration") is not None and cond is not None:
            ends = parse_time(cond["startTime"]) + dt.timedelta(
                seconds=go_duration_seconds(pause["duration"])
            )
            return now() > ends
        return False

    def completed_blue_green_pause(self) -> bool:
        ro = self.ro
        bg = c.blue_green(ro) or {}
        status = ro.get("status") or {}
        cond = self.condition(BLUE_GREEN_PAUSE)
        if self.add:
            return False
        if (status.get("blueGreen") or {}).get("scaleUpPreviewCheckPoint"):
            return True
        if bg.get("autoPromotionEnabled") is None or bg.get("autoPromotionEnabled"):
            seconds = int(bg.get("autoPromotionSeconds") or 0)
            if seconds == 0:
                return True
            if cond is not None:
                return now() > parse_time(cond["startTime"]) + dt.timedelta(seconds=seconds)
            return False
        return bool(status.get("controllerPause")) and cond is None


def step_text(step: Obj) -> str:
    """rolloututil.CanaryStepString."""
    if step.get("setWeight") is not None:
        return f"setWeight: {step['setWeight']}"
    if step.get("pause") is not None:
        d = step["pause"].get("duration")
        return "pause" if d is None else f"pause: {d}"
    if step.get("analysis") is not None:
        return "analysis"
    if step.get("experiment") is not None:
        return "experiment"
    return "invalid"


class Synced:
    """The state one reconciliation of a Rollout holds (rollout._Sync sets it), which the
    strategy, analysis and conditions mixins read."""

    ro: Obj  # the Rollout as stored, its workloadRef resolved
    new: Obj | None  # the ReplicaSet of the current template
    stable: Obj | None  # the ReplicaSet of status.stableRS
    all: list[Obj]  # every ReplicaSet the Rollout owns
    others: list[Obj]  # neither new nor stable
    olds: list[Obj]  # all but new
    pause: Pause
    new_status: Obj
    ns: str
    name: str
    store: Any
    ctl: Any
    res: Any
    step_ar: Obj | None
    pre_ar: Obj | None
    other_ars: list[Obj]
