"""Whether a pod is still the one that was selected: deleted, recreated or terminating pods
explain failed execs and HTTP checks better than the failure itself."""

from __future__ import annotations

from verify import errors
from verify.findings import PodTarget, Uninspectable
from verify.kube import objects
from verify.kube.api import Api


def pod_gone(*, api: Api, namespace: str, pod: PodTarget) -> Uninspectable | None:
    """Why the pod is gone, if it is: deleted (or being deleted) while it was inspected."""
    try:
        live = api.get(f"/api/v1/namespaces/{namespace}/pods/{pod.name}")
    except errors.NotFound:
        return Uninspectable("pod_gone", f"pod {pod.name} was deleted during inspection", permanent=False)
    except errors.VerifyError:
        return None
    live_uid = objects.uid(live)
    if pod.uid and live_uid and live_uid != pod.uid:
        return Uninspectable(
            "pod_gone", f"pod {pod.name} was deleted and recreated during inspection", permanent=False
        )
    if objects.deleting(live):
        return Uninspectable(
            "pod_gone", f"pod {pod.name} is terminating (deleted during inspection)", permanent=False
        )
    return None
