"""batch/v1 Job admission: the defaulting of kubernetes/kubernetes pkg/apis/batch/v1/defaults.go
(SetDefaults_Job), the selector the Job strategy generates (pkg/registry/batch/job/strategy.go,
generateSelector) and the validation kubectl users meet first (pkg/apis/batch/validation)."""

from __future__ import annotations

from ..storage.errors import ApiError
from ..storage.store import Obj
from .pod_defaults import default_pod_spec

CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
# the legacy label names, still written beside the prefixed ones
LEGACY_UID, LEGACY_NAME = "controller-uid", "job-name"


def admit_job(obj: Obj) -> None:
    """Default and validate a Job in place; its metadata.uid is already set (the selector names it)."""
    meta = obj.setdefault("metadata", {})
    name = meta.get("name", "")
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    template = spec.setdefault("template", {})
    default_pod_spec(template.setdefault("spec", {}))
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    uid = meta.get("uid", "")
    if not spec.get("manualSelector"):
        # generateSelector: the pods carry the Job's uid and name, the selector matches the uid
        if uid and "selector" not in spec:
            labels.setdefault(CONTROLLER_UID, uid)
            labels.setdefault(JOB_NAME, name)
            labels.setdefault(LEGACY_UID, uid)
            labels.setdefault(LEGACY_NAME, name)
            spec["selector"] = {"matchLabels": {CONTROLLER_UID: uid}}
    elif not spec.get("selector"):
        raise _invalid(name, "spec.selector", "FieldValueRequired", "Required value")
    if not meta.get("labels"):
        # SetDefaults_Job: a Job without labels shows its template's (as read back from storage)
        meta["labels"] = dict(labels)
    for field in ("parallelism", "completions", "backoffLimit"):
        v = spec.get(field)
        if v is not None and (not isinstance(v, int) or v < 0):
            raise _invalid(
                name,
                f"spec.{field}",
                "FieldValueInvalid",
                f"Invalid value: {v}: must be greater than or equal to 0",
            )
    policy = template["spec"].get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        raise _invalid(
            name,
            "spec.template.spec.restartPolicy",
            "FieldValueNotSupported",
            f'Unsupported value: "{policy}": supported values: "OnFailure", "Never"',
        )


def _invalid(name: str, field: str, reason: str, message: str) -> ApiError:
    return ApiError(
        422,
        "Invalid",
        f'Job.batch "{name}" is invalid: {field}: {message}',
        {
            "name": name,
            "group": "batch",
            "kind": "Job",
            "causes": [{"reason": reason, "message": message, "field": field}],
        },
    )
