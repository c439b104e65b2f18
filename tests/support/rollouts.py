"""Argo Rollouts on kubesim, driven as its users drive it: the published CRDs applied with the real
kubectl, Rollouts built like the upstream e2e manifests, and the `kubectl argo rollouts` plugin's
own patches sent with kubectl (the plugin is not installable here): promote clears
status.pauseConditions (and spec.paused), abort and retry set status.abort
(pkg/kubectl-argo-rollouts/cmd/{promote,abort,retry} in argoproj/argo-rollouts v1.9.1)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.support.helpers import REPO
from tests.support.kubectl import Kubectl

CRDS = REPO / "tests" / "manifests" / "argo-rollouts"
UPSTREAM_E2E = CRDS / "e2e"  # three of upstream's e2e manifests (test/e2e/functional/), unchanged
HASH = "rollouts-pod-template-hash"


def install(kubectl: Kubectl) -> None:
    """The four CRDs as published, established (Rollout, AnalysisRun, (Cluster)AnalysisTemplate)."""
    kubectl("apply", "-f", str(CRDS))
    kubectl("wait", "--for=condition=established", "--timeout=30s", "crd/rollouts.argoproj.io")


def rollout(
    name: str,
    *,
    containers: list[dict[str, Any]],
    replicas: int = 4,
    strategy: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Rollout selecting app=NAME, by default a canary [setWeight: 50, pause: {}]."""
    labels = labels or {"app": name}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": name, "namespace": "default", "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}},
            "strategy": strategy or {"canary": {"steps": [{"setWeight": 50}, {"pause": {}}]}},
        },
    }


def get(kubectl: Kubectl, name: str, kind: str = "rollout") -> dict[str, Any]:
    out: dict[str, Any] = json.loads(kubectl("get", kind, name, "-o", "json"))
    return out


def status(kubectl: Kubectl, name: str) -> dict[str, Any]:
    return dict(get(kubectl, name).get("status") or {})


def wait(pred: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def wait_phase(kubectl: Kubectl, name: str, phase: str, timeout: float = 90.0) -> dict[str, Any]:
    """Wait until the Rollout's status.phase is `phase` for its current generation; its status."""
    seen: dict[str, Any] = {}

    def reached() -> bool:
        ro = get(kubectl, name)
        seen.update(ro.get("status") or {})
        st = ro.get("status") or {}
        return st.get("phase") == phase and st.get("observedGeneration") == str(ro["metadata"]["generation"])

    try:
        wait(reached, f"rollout {name} to be {phase}", timeout)
    except AssertionError:
        raise AssertionError(
            f"rollout {name} never became {phase}: {seen.get('phase')} {seen.get('message')}"
        ) from None
    return status(kubectl, name)


def promote(kubectl: Kubectl, name: str) -> None:
    """`kubectl argo rollouts promote NAME`: spec.paused false if set, then the status patch
    clearing pauseConditions (or, for a canary with none, the next step's index)."""
    ro = get(kubectl, name)
    if ro["spec"].get("paused"):
        kubectl("patch", "rollout", name, "--type", "merge", "-p", '{"spec":{"paused":false}}')
    st = ro.get("status") or {}
    if st.get("pauseConditions"):
        status_patch(kubectl, name, {"pauseConditions": None})
    elif ro["spec"]["strategy"].get("canary", {}).get("steps"):
        steps = len(ro["spec"]["strategy"]["canary"]["steps"])
        index = min(steps, st.get("currentStepIndex", 0) + 1)
        status_patch(kubectl, name, {"pauseConditions": None, "currentStepIndex": index})


def status_patch(kubectl: Kubectl, name: str, status: dict[str, Any]) -> None:
    """A merge patch of the Rollout's status subresource, as the plugin sends its own."""
    patch = json.dumps({"status": status})
    kubectl("patch", "rollout", name, "--subresource", "status", "--type", "merge", "-p", patch)


def abort(kubectl: Kubectl, name: str) -> None:
    """`kubectl argo rollouts abort NAME`."""
    status_patch(kubectl, name, {"abort": True})


def retry(kubectl: Kubectl, name: str) -> None:
    """`kubectl argo rollouts retry rollout NAME`."""
    status_patch(kubectl, name, {"abort": False})


def pods_by_hash(kubectl: Kubectl, app: str) -> dict[str, list[str]]:
    """The live (not terminating) pods of app=APP by their rollouts-pod-template-hash."""
    items = json.loads(kubectl("get", "pods", "-l", f"app={app}", "-o", "json"))["items"]
    out: dict[str, list[str]] = {}
    for p in items:
        if p["metadata"].get("deletionTimestamp"):
            continue
        out.setdefault(p["metadata"]["labels"].get(HASH, ""), []).append(p["metadata"]["name"])
    return out
