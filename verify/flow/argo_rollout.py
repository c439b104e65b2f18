"""An Argo Rollout read as its own tools read it, pure: where it stands (the phase and message its
controller writes, as `kubectl argo rollouts status` reads them: rollout.GetRolloutPhase), when
its pods are ready to verify (Healthy, or stopped at a step that waits: a canary's pause or
analysis step, a blue-green preview awaiting its pre-promotion analysis or promotion), whether a
restart may be sent, and its template when a workloadRef lends it a Deployment's.

Upstream (argoproj/argo-rollouts v1.9.1): utils/rollout/rolloututil.go (GetRolloutPhase,
isGenerationObserved, IsUnpausing, CanaryStepString), pkg/kubectl-argo-rollouts/cmd/status
(Healthy and Degraded end the watch; Degraded fails with the message), rollout/templateref.go
(a workloadRef's template and selector, never written back), cmd/restart (spec.restartAt)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from verify.kube.objects import integer, mapping, maps, text

HASH_LABEL = "rollouts-pod-template-hash"  # v1alpha1.DefaultRolloutUniqueLabelKey
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
WORKLOAD_GENERATION = "rollout.argoproj.io/workload-generation"
PROMOTE = "kubectl argo rollouts promote"
ABORT = "kubectl argo rollouts abort"


def _status(rollout: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(rollout, "status")


def fully_promoted(rollout: Mapping[str, Any]) -> bool:
    """rolloututil.IsFullyPromoted: the current revision is the stable one."""
    status = _status(rollout)
    return bool(text(status, "stableRS")) and text(status, "stableRS") == text(status, "currentPodHash")


def step_text(step: Mapping[str, Any]) -> str:
    """rolloututil.CanaryStepString."""
    if "setWeight" in step:
        return f"setWeight: {step['setWeight']}"
    if "pause" in step:
        duration = mapping(step, "pause").get("duration")
        return "pause" if duration is None else f"pause: {duration}"
    for kind in ("analysis", "experiment", "setCanaryScale", "plugin"):
        if kind in step:
            return kind
    return "step"


def _waiting_step(rollout: Mapping[str, Any]) -> str:
    """Where a rollout that is not fully promoted stops for its pods to be looked at, as one
    phrase ("at step 2/2 (pause)", "with its preview awaiting promotion"); "" when it does not:
    a canary at a pause or analysis step reached it once the step before had its pods available,
    a blue-green preview is up once its pre-promotion analysis runs or its pause begins."""
    status = _status(rollout)
    strategy = mapping(rollout, "spec", "strategy")
    pauses = {text(p, "reason") for p in maps(status, "pauseConditions")}
    if "blueGreen" in strategy:
        if text(status, "currentPodHash") == text(mapping(status, "blueGreen"), "activeSelector"):
            return ""
        if "BlueGreenPause" in pauses:
            return "with its preview awaiting promotion"
        if mapping(status, "blueGreen", "prePromotionAnalysisRunStatus"):
            return "with its preview under pre-promotion analysis"
        return ""
    steps = maps(mapping(strategy, "canary"), "steps")
    index = integer(status, "currentStepIndex")
    if index >= len(steps):
        return ""
    step = steps[index]
    if any(k in step for k in ("pause", "analysis", "experiment")):
        return f"at step {index + 1}/{len(steps)} ({step_text(step)})"
    return ""


def rollout_state(*, rollout: Mapping[str, Any]) -> tuple[bool, bool, str]:
    """(done, failed, message): done when Healthy, or stopped at a step that waits with the
    current revision's pods up (to verify a canary before its promotion); failed when Degraded,
    aborted or paused by hand; else the phase and message Argo's status shows."""
    meta, spec, status = mapping(rollout, "metadata"), mapping(rollout, "spec"), _status(rollout)
    name = text(meta, "name")
    observed = text(status, "observedGeneration")
    if not observed.isdigit() or int(observed) < integer(meta, "generation"):
        # no status at all: no Argo Rollouts controller has seen it yet (is one running?)
        return False, False, f'Waiting for rollout "{name}" spec update to be observed...'
    if status.get("controllerPause") and not maps(status, "pauseConditions"):
        return False, False, f'Waiting for rollout "{name}" to unpause...'
    wanted = text(mapping(meta, "annotations"), WORKLOAD_GENERATION)
    if wanted and wanted != text(status, "workloadObservedGeneration"):
        return False, False, f'Waiting for rollout "{name}" to observe its workloadRef\'s update...'
    phase, message = text(status, "phase"), text(status, "message")
    if phase == "Degraded" or status.get("abort"):
        return False, True, f'rollout "{name}" is {phase or "aborted"}: {message or "aborted"}'
    if phase == "Healthy":
        return True, False, f'rollout "{name}" is Healthy'
    if spec.get("paused"):
        replicas = integer(spec, "replicas", 1)
        settled = integer(status, "updatedReplicas") == integer(status, "availableReplicas") == replicas
        if fully_promoted(rollout) and settled:  # paused on its stable revision, every pod up
            return True, False, f'rollout "{name}" is paused by hand on its stable revision'
        hint = f"resume it with `{PROMOTE} {name}`"
        return False, True, f'rollout "{name}" is paused by hand (spec.paused); {hint}'
    where = _waiting_step(rollout)
    if where and not fully_promoted(rollout):
        return True, False, f'rollout "{name}" is {phase} {where}'
    return (
        False,
        False,
        f'Waiting for rollout "{name}" to finish: {phase or "Progressing"}'
        + (f" - {message}" if message else ""),
    )


def restart_held(*, rollout: Mapping[str, Any]) -> str:
    """Why no restart may be sent (\"\" when one may): a rollout mid-way (a paused canary, a
    preview) is Argo's to promote or abort; `spec.restartAt` would evict the stable pods too and
    is not what replaces a stale canary: an abort and a retry (or its next revision) do."""
    if fully_promoted(rollout) and not mapping(rollout, "spec").get("paused"):
        return ""
    name = text(mapping(rollout, "metadata"), "name")
    where = _waiting_step(rollout) or "mid-rollout"
    return (
        f"rollout {name} is {where}: not restarted (spec.restartAt would evict its stable pods too); "
        f"`{ABORT} {name}` returns it to stable, and once the source is right `kubectl argo rollouts "
        f"retry rollout {name}` starts new pods"
    )


def with_workload(rollout: Mapping[str, Any], workload: Mapping[str, Any] | None) -> dict[str, Any]:
    """The Rollout as its controller sees it: a workloadRef's template (and, without its own, its
    selector) in place, as templateref.go resolves them in memory."""
    out = copy.deepcopy(dict(rollout))
    if workload is None:
        return out
    spec = out.setdefault("spec", {})
    spec["template"] = copy.deepcopy(dict(mapping(workload, "spec", "template")))
    if not spec.get("selector"):
        spec["selector"] = copy.deepcopy(dict(mapping(workload, "spec", "selector")))
    return out


def workload_ref(rollout: Mapping[str, Any]) -> str:
    """The Deployment a workloadRef names (\"\" without one; only Deployments are read)."""
    ref = mapping(rollout, "spec", "workloadRef")
    return text(ref, "name") if text(ref, "kind") == "Deployment" else ""


def restart_body(*, now: str, resource_version: str, record: Mapping[str, str]) -> dict[str, Any]:
    """`kubectl argo rollouts restart`'s merge patch (spec.restartAt, RFC 3339 in UTC), with the
    restart record and the inspected resourceVersion as its precondition."""
    return {
        "metadata": {"resourceVersion": resource_version, "annotations": dict(record)},
        "spec": {"restartAt": now},
    }
