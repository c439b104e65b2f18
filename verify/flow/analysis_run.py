"""Whether this run is an Argo Rollouts analysis step: its own pod (HOSTNAME, in-cluster) belongs
to a Job whose owner is an AnalysisRun. Inside one, nothing is restarted: the run's failure fails
the measurement, the AnalysisRun fails and Argo aborts the rollout back to stable, which is the
remedy a canary needs (a restart would evict the stable pods too).

Argo's Job provider (argoproj/argo-rollouts v1.9.1 metricproviders/job/job.go) names the Job
`<run uid>.<metric>.<n>`, sets the AnalysisRun as its controller and annotates it with
`analysisrun.argoproj.io/name`; the Job controller sets the Job as the pod's controller."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify import errors
from verify.kube.api import Api
from verify.kube.objects import annotations_of, mapping, maps, text

RUN_ANNOTATION = "analysisrun.argoproj.io/name"


def _controller(obj: Mapping[str, Any], kind: str) -> str:
    """The name of the object's controller of `kind` (\"\" without one)."""
    for ref in maps(mapping(obj, "metadata"), "ownerReferences"):
        if ref.get("controller") and text(ref, "kind") == kind:
            return text(ref, "name")
    return ""


def run_of(*, pod: Mapping[str, Any], job: Mapping[str, Any] | None) -> str:
    """The AnalysisRun a pod measures for (\"\" when it is none's), from its Job's owner."""
    if job is None or _controller(pod, "Job") != text(mapping(job, "metadata"), "name"):
        return ""
    owner = next(
        (
            text(r, "name")
            for r in maps(mapping(job, "metadata"), "ownerReferences")
            if text(r, "kind") == "AnalysisRun" and text(r, "apiVersion").startswith("argoproj.io/")
        ),
        "",
    )
    return owner or annotations_of(job).get(RUN_ANNOTATION, "")


def find(*, api: Api, namespace: str, pod_name: str) -> str:
    """The AnalysisRun this run's own pod measures for, or \"\": outside a pod, without the
    permission to read its pod (`list pods`) or Job (`get jobs`), or when it is none's."""
    if not pod_name or not namespace:
        return ""
    try:
        pods = api.get(f"/api/v1/namespaces/{namespace}/pods", fieldSelector=f"metadata.name={pod_name}")
        pod = next(iter(pods.get("items") or []), None)
        job_name = _controller(pod, "Job") if pod is not None else ""
        if pod is None or not job_name:
            return ""
        job = api.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{job_name}")
    except errors.VerifyError:
        return ""  # a courtesy: its absence only leaves the restart to the usual judgment
    return run_of(pod=pod, job=job)


def notice(run: str) -> str:
    """The line that opens a run inside an AnalysisRun."""
    return (
        f"this run is AnalysisRun {run}'s measurement: nothing is restarted; a failure fails the "
        "analysis and Argo aborts the rollout back to stable (Argo's own remedy)"
    )


def held(run: str) -> str:
    """Why nothing is restarted inside an AnalysisRun, said with the verdict."""
    return (
        f"not restarted: this run is AnalysisRun {run}'s measurement, so its failure fails the "
        "analysis and Argo aborts the rollout back to stable (Argo's own remedy)"
    )
