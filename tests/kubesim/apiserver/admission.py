"""Admission: the apiserver's defaulting and validation of what is written (Secrets, ConfigMap
keys, pod specs, Deployments, ReplicaSets, StatefulSets, DaemonSets), and a mutating webhook.

StatefulSet/DaemonSet defaulting is traced from `pkg/apis/apps/v1/defaults.go`."""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING

from ..storage.crds import CustomResource
from ..storage.errors import ApiError
from ..storage.resources import Resource
from ..storage.selection import labels_match, selector_from_match
from ..storage.store import Obj
from .claims import default_claim
from .customresources import check_types
from .pod_defaults import default_pod_spec

if TYPE_CHECKING:
    from ..knobs import Knobs

WEBHOOK_STAMP = "policy.example.com/stamp"


def webhook(res: Resource, obj: Obj, sub: str | None, knobs: Knobs) -> None:
    """Knobs.mutating_webhook: stamp the pod template of a Deployment written via the API."""
    if res.kind != "Deployment" or sub or not knobs.mutating_webhook:
        return
    template = obj.setdefault("spec", {}).setdefault("template", {})
    annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[WEBHOOK_STAMP] = str(int(annotations.get(WEBHOOK_STAMP, "0")) + 1)


def prepare(res: Resource, obj: Obj) -> None:
    """Apiserver-side defaulting and validation that kubesim's clients rely on."""
    kind = res.kind
    name = obj.get("metadata", {}).get("name", "")
    if isinstance(res, CustomResource):
        check_types(res, obj)
    if kind == "Secret":
        data = dict(obj.get("data") or {})
        for k, v in (obj.pop("stringData", None) or {}).items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        for k, v in data.items():
            try:
                base64.b64decode(v, validate=True)
            except Exception:
                raise ApiError.invalid(
                    "Secret", name, f"data[{k}]", "Invalid value: illegal base64 data"
                ) from None
        if data or "data" in obj:
            obj["data"] = data
        obj.setdefault("type", "Opaque")
    if kind in ("ConfigMap", "Secret"):
        for k in list((obj.get("data") or {}).keys()) + list((obj.get("binaryData") or {}).keys()):
            if not re.fullmatch(r"[-._a-zA-Z0-9]+", k):
                raise ApiError.invalid(
                    kind,
                    name,
                    f"data[{k}]",
                    "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                )
    if kind == "Namespace" and name:
        # SetDefaults_Namespace: a label naming it, on every write
        labels = obj.setdefault("metadata", {}).get("labels") or {}
        labels["kubernetes.io/metadata.name"] = name
        obj["metadata"]["labels"] = labels
    if kind == "PersistentVolumeClaim":
        default_claim(obj)
    if kind == "Deployment":
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strat = spec.setdefault("strategy", {"type": "RollingUpdate"})
        strat.setdefault("type", "RollingUpdate")
        if strat["type"] == "RollingUpdate":
            ru = strat.setdefault("rollingUpdate", {})
            ru.setdefault("maxSurge", "25%")
            ru.setdefault("maxUnavailable", "25%")
        default_pod_spec(spec.setdefault("template", {}).setdefault("spec", {}))
        # ValidateDeploymentSpec: the selector is required and must select the template's labels
        # (apps validation; the same errors, texts and Deployment.apps details as the other kinds)
        if not spec.get("selector"):
            raise _invalid("Deployment", name, "spec.selector", "FieldValueRequired", "Required value")
        labels = spec["template"].setdefault("metadata", {}).get("labels") or {}
        if not labels_match(labels, selector_from_match(spec["selector"])):
            pairs = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(labels.items()))
            raise _invalid(
                "Deployment",
                name,
                "spec.template.metadata.labels",
                "FieldValueInvalid",
                f"Invalid value: map[string]string{{{pairs}}}: `selector` does not match template `labels`",
            )
    if kind in ("StatefulSet", "DaemonSet"):
        default_workload(kind, obj)
    if kind == "ReplicaSet":
        obj.setdefault("spec", {}).setdefault("replicas", 1)
        default_pod_spec(obj["spec"].setdefault("template", {}).setdefault("spec", {}))
    if kind == "Pod":
        default_pod_spec(obj.setdefault("spec", {}), pod=True)


def default_workload(kind: str, obj: Obj) -> None:
    """SetDefaults_StatefulSet / SetDefaults_DaemonSet, plus the selector checks of validation."""
    name = (obj.get("metadata") or {}).get("name", "")
    spec = obj.setdefault("spec", {})
    strat = spec.get("updateStrategy")
    if not isinstance(strat, dict):
        strat = spec["updateStrategy"] = {}
    if kind == "StatefulSet":
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        if not strat.get("type"):
            strat["type"] = "RollingUpdate"
            if strat.get("rollingUpdate") is None:
                strat["rollingUpdate"] = {}
        ru = strat.get("rollingUpdate")
        if strat["type"] == "RollingUpdate" and isinstance(ru, dict) and ru.get("partition") is None:
            ru["partition"] = 0
        policy = spec.get("persistentVolumeClaimRetentionPolicy")
        if not isinstance(policy, dict):
            policy = spec["persistentVolumeClaimRetentionPolicy"] = {}
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
        if spec.get("replicas") is None:
            spec["replicas"] = 1
    else:
        if not strat.get("type"):
            strat["type"] = "RollingUpdate"
        if strat["type"] == "RollingUpdate":
            ru = strat.get("rollingUpdate")
            if not isinstance(ru, dict):
                ru = strat["rollingUpdate"] = {}
            if ru.get("maxUnavailable") is None:
                ru["maxUnavailable"] = 1
            if ru.get("maxSurge") is None:
                ru["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    tpl = spec.get("template")
    if not isinstance(tpl, dict):
        tpl = spec["template"] = {}
    default_pod_spec(tpl.setdefault("spec", {}))
    if not spec.get("selector"):
        raise _invalid(kind, name, "spec.selector", "FieldValueRequired", "Required value")
    labels = (tpl.get("metadata") or {}).get("labels") or {}
    if not labels_match(labels, selector_from_match(spec["selector"])):
        pairs = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(labels.items()))
        raise _invalid(
            kind,
            name,
            "spec.template.metadata.labels",
            "FieldValueInvalid",
            f"Invalid value: map[string]string{{{pairs}}}: `selector` does not match template `labels`",
        )


def _invalid(kind: str, name: str, field: str, reason: str, message: str) -> ApiError:
    """`errors.NewInvalid` for an apps kind: the message names `Kind.apps`, the details kind and group."""
    return ApiError(
        422,
        "Invalid",
        f'{kind}.apps "{name}" is invalid: {field}: {message}',
        {
            "name": name,
            "group": "apps",
            "kind": kind,
            "causes": [{"reason": reason, "message": message, "field": field}],
        },
    )


def admit_namespace(obj: Obj) -> None:
    """The namespace strategy's PrepareForCreate: phase Active, whatever the client sent, and the
    `kubernetes` finalizer (the namespace controller's, removed once the contents are gone)."""
    obj["status"] = {"phase": "Active"}
    spec = obj.get("spec") or {}
    finalizers = list(spec.get("finalizers") or [])
    if "kubernetes" not in finalizers:
        finalizers.append("kubernetes")
    spec["finalizers"] = finalizers
    obj["spec"] = spec
