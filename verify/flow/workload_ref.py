"""The template a Rollout borrows: a workloadRef's Deployment, read as Argo's controller reads it
(rollout/templateref.go), so the pods are judged against the template they were made from."""

from __future__ import annotations

from typing import Any

from verify.flow import argo_rollout
from verify.kube.api import Api
from verify.kube.kinds import api_path
from verify.model import Kind


def resolved(api: Api, *, kind: Kind, namespace: str, workload: dict[str, Any]) -> dict[str, Any]:
    """The workload with what it borrows in place (a Rollout's workloadRef: the Deployment's
    template, and its selector when the Rollout has none); any other workload as it is."""
    ref = argo_rollout.workload_ref(workload) if kind == "rollout" else ""
    if not ref:
        return workload
    deployment = api.get(api_path(kind="deployment", namespace=namespace, name=ref))
    return argo_rollout.with_workload(workload, deployment)
