"""Defaulting and the first validation errors of the kinds every cluster serves beside the
workloads: CronJob (pkg/apis/batch/v1/defaults.go SetDefaults_CronJob, pkg/apis/batch/validation
ValidateCronJob's schedule), HorizontalPodAutoscaler v2 (pkg/apis/autoscaling/v2/defaults.go),
PodDisruptionBudget (pkg/apis/policy/validation), ReplicationController (pkg/apis/core/v1/
defaults.go SetDefaults_ReplicationController), LimitRange (SetDefaults_LimitRangeItem),
NetworkPolicy (pkg/apis/networking/v1/defaults.go), PriorityClass (pkg/apis/scheduling/v1/
defaults.go, its immutable value), Ingress status (`status.loadBalancer: {}` as the registry's
PrepareForCreate leaves it) and APIService (`Available` for a local group, as the
aggregator's available controller reports it). Run for every write through the Store's
admission list."""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Any

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH, Resource, group_versions
from ..storage.store import Obj, now_rfc3339
from . import limitranger, priority, quota
from .jobs import admit_job
from .pod_defaults import default_pod_spec

if TYPE_CHECKING:
    from ..storage.store import Store

APISERVICES = BY_PATH[("apiregistration.k8s.io", "apiservices")]

_GROUPS = {
    "CronJob": "batch",
    "HorizontalPodAutoscaler": "autoscaling",
    "PodDisruptionBudget": "policy",
    "PriorityClass": "scheduling.k8s.io",
    "NetworkPolicy": "networking.k8s.io",
    "Ingress": "networking.k8s.io",
}


def register(store: Store) -> None:
    """The admission of these kinds, and the plugins that read other objects: LimitRanger and
    Priority (mutating), then LimitRanger's checks and ResourceQuota, last as upstream orders them."""
    store.admission.append(admit)
    store.mutating += [partial(limitranger.default, store), partial(priority.admit, store)]
    store.admission += [partial(limitranger.validate, store), partial(quota.admit, store)]


def invalid(kind: str, name: str, field: str, message: str, reason: str = "FieldValueInvalid") -> ApiError:
    """errors.NewInvalid for one field: `CronJob.batch "x" is invalid: spec.schedule: ...`."""
    group = _GROUPS.get(kind, "")
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [{"reason": reason, "message": message, "field": field}]
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {field}: {message}', details)


def admit(res: Resource, obj: Obj, old: Obj | None) -> None:
    kind = res.kind
    if kind == "CronJob":
        _cronjob(obj)
    elif kind == "HorizontalPodAutoscaler":
        default_hpa(obj)
        _validate_hpa(obj)
    elif kind == "PodDisruptionBudget":
        _pdb(obj)
    elif kind == "ReplicationController":
        _replication_controller(obj)
    elif kind == "LimitRange":
        for item in (obj.get("spec") or {}).get("limits") or []:
            if isinstance(item, dict):
                _limit_range_item(item)
    elif kind == "NetworkPolicy":
        spec = obj.setdefault("spec", {})
        if not spec.get("policyTypes"):
            spec["policyTypes"] = ["Ingress", *(["Egress"] if spec.get("egress") else [])]
        spec.setdefault("podSelector", {})
    elif kind == "PriorityClass":
        _priority_class(obj, old)
    elif kind == "Ingress":
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        if not isinstance(status.get("loadBalancer"), dict):
            status["loadBalancer"] = {}
    elif kind == "APIService" and not (obj.get("spec") or {}).get("service"):
        # a group the apiserver serves itself: the aggregator's available controller says so
        status = obj.setdefault("status", {})
        if not status.get("conditions"):
            status["conditions"] = [
                {
                    "type": "Available",
                    "status": "True",
                    "lastTransitionTime": now_rfc3339(),
                    "reason": "Local",
                    "message": "Local APIServices are always available",
                }
            ]


def _cronjob(obj: Obj) -> None:
    """SetDefaults_CronJob, the Job template's defaults, and ValidateCronJob's schedule check."""
    name = (obj.get("metadata") or {}).get("name", "")
    spec = obj.setdefault("spec", {})
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    schedule = spec.get("schedule")
    if not schedule:
        raise invalid("CronJob", name, "spec.schedule", "Required value", "FieldValueRequired")
    problem = schedule_error(str(schedule))
    if problem:
        raise invalid("CronJob", name, "spec.schedule", f"Invalid value: {json.dumps(schedule)}: {problem}")
    zone = spec.get("timeZone")
    if zone is not None and not _known_zone(str(zone)):
        raise invalid(
            "CronJob", name, "spec.timeZone", f"Invalid value: {json.dumps(zone)}: unknown time zone {zone}"
        )
    if spec["concurrencyPolicy"] not in ("Allow", "Forbid", "Replace"):
        raise invalid(
            "CronJob",
            name,
            "spec.concurrencyPolicy",
            f'Unsupported value: "{spec["concurrencyPolicy"]}": supported values: "Allow", "Forbid", "Replace"',
            "FieldValueNotSupported",
        )
    template = spec.setdefault("jobTemplate", {})
    job = {"metadata": {}, "spec": template.setdefault("spec", {})}
    jspec = job["spec"]
    # the template's Job defaults, without the generated selector (the Job gets one when created)
    had_selector = "selector" in jspec
    admit_job(job)
    if not had_selector:
        jspec.pop("selector", None)
    default_pod_spec(jspec.setdefault("template", {}).setdefault("spec", {}))


def schedule_error(schedule: str) -> str:
    """robfig/cron ParseStandard's complaint about a schedule, '' when it parses."""
    from croniter import croniter

    text = schedule.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        text = text.split(None, 1)[1] if " " in text else ""
    if text.startswith("@every "):
        return ""
    if text.startswith("@"):
        ok = text in ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
        return "" if ok else f"unrecognized descriptor: {text}"
    fields = text.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for field, (low, high) in zip(fields, _BOUNDS, strict=True):
        for part in field.split(","):
            span = part.split("/", 1)[0]
            ends = [] if span in ("*", "?") else span.split("-", 1)
            if not all(e.isdigit() for e in ends):
                continue  # names (JAN, MON): croniter judges them
            if ends and int(ends[0]) < low:
                return f"beginning of range ({ends[0]}) below minimum ({low}): {part}"
            if ends and int(ends[-1]) > high:
                return f"end of range ({ends[-1]}) above maximum ({high}): {part}"
    return "" if croniter.is_valid(text) else f"failed to parse schedule: {text}"


# robfig/cron's bounds of the five fields (minutes, hours, day of month, month, day of week)
_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))


def _known_zone(name: str) -> bool:
    """time.LoadLocation's verdict (validateTimeZone): an IANA name the host's database holds."""
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return bool(name) and name.lower() != "local"


def default_hpa(obj: Obj) -> None:
    """SetDefaults_HorizontalPodAutoscaler (autoscaling/v2): minReplicas 1, a CPU utilization
    target of 80% when no metric is given, and the behavior's missing rules."""
    spec = obj.setdefault("spec", {})
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
            }
        ]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        up = behavior.get("scaleUp") or {}
        up.setdefault("stabilizationWindowSeconds", 0)
        up.setdefault("selectPolicy", "Max")
        up.setdefault(
            "policies",
            [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        )
        down = behavior.get("scaleDown") or {}
        down.setdefault("stabilizationWindowSeconds", 300)
        down.setdefault("selectPolicy", "Max")
        down.setdefault("policies", [{"type": "Percent", "value": 100, "periodSeconds": 15}])
        behavior["scaleUp"], behavior["scaleDown"] = up, down


def _validate_hpa(obj: Obj) -> None:
    name = (obj.get("metadata") or {}).get("name", "")
    spec = obj["spec"]
    top, low = spec.get("maxReplicas"), spec.get("minReplicas")
    if not isinstance(top, int) or top < 1:
        raise invalid(
            "HorizontalPodAutoscaler",
            name,
            "spec.maxReplicas",
            f"Invalid value: {top}: must be greater than or equal to 1",
        )
    if isinstance(low, int) and low > top:
        raise invalid(
            "HorizontalPodAutoscaler",
            name,
            "spec.minReplicas",
            f"Invalid value: {low}: must be less than or equal to maxReplicas",
        )
    if not (spec.get("scaleTargetRef") or {}).get("name"):
        raise invalid(
            "HorizontalPodAutoscaler",
            name,
            "spec.scaleTargetRef.name",
            "Required value",
            "FieldValueRequired",
        )


def _pdb(obj: Obj) -> None:
    name = (obj.get("metadata") or {}).get("name", "")
    spec = obj.setdefault("spec", {})
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        raise invalid(
            "PodDisruptionBudget",
            name,
            "spec",
            'Invalid value: "{...}": minAvailable and maxUnavailable cannot be both set',
        )
    # PrepareForCreate/Update keep the status the disruption controller writes
    obj.setdefault("status", {}).setdefault("disruptionsAllowed", 0)
    for k in ("currentHealthy", "desiredHealthy", "expectedPods"):
        obj["status"].setdefault(k, 0)


def _replication_controller(obj: Obj) -> None:
    """SetDefaults_ReplicationController: the selector and labels of the template when unset."""
    spec = obj.setdefault("spec", {})
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if template:
        default_pod_spec(template.setdefault("spec", {}))
    status = obj.setdefault("status", {})
    status.setdefault("replicas", 0)


def _limit_range_item(item: Obj) -> None:
    """SetDefaults_LimitRangeItem: a Container item's default limit is its max, its default
    request the default limit, else the min."""
    if item.get("type") != "Container":
        return
    default = dict(item.get("default") or {})
    request = dict(item.get("defaultRequest") or {})
    for k, v in (item.get("max") or {}).items():
        default.setdefault(k, v)
    for k, v in default.items():
        request.setdefault(k, v)
    for k, v in (item.get("min") or {}).items():
        request.setdefault(k, v)
    if default:
        item["default"] = default
    if request:
        item["defaultRequest"] = request


def _priority_class(obj: Obj, old: Obj | None) -> None:
    name = (obj.get("metadata") or {}).get("name", "")
    if not obj.get("preemptionPolicy"):
        obj["preemptionPolicy"] = "PreemptLowerPriority"
    if not isinstance(obj.get("value"), int):
        raise invalid("PriorityClass", name, "value", "Required value", "FieldValueRequired")
    if old is not None and obj.get("value") != old.get("value"):
        raise invalid(
            "PriorityClass",
            name,
            "value",
            "Forbidden: may not be changed in an update.",
            "FieldValueForbidden",
        )


# kube-aggregator's priorities of the built-in groups (pkg/controlplane/apiserver/aggregator.go
# apiVersionPriorities): group minimum, version priority
_PRIORITIES = {
    "": (18000, 1),
    "apiregistration.k8s.io": (18000, 15),
    "apps": (17800, 15),
    "authentication.k8s.io": (17700, 15),
    "authorization.k8s.io": (17600, 15),
    "autoscaling": (17500, 15),
    "batch": (17400, 15),
    "networking.k8s.io": (17200, 15),
    "policy": (17100, 15),
    "rbac.authorization.k8s.io": (17000, 15),
    "storage.k8s.io": (16800, 15),
    "apiextensions.k8s.io": (16700, 15),
    "scheduling.k8s.io": (16600, 15),
    "coordination.k8s.io": (16500, 15),
    "discovery.k8s.io": (16200, 15),
}


def install_local_apiservices(store: Store) -> None:
    """The APIService objects the aggregator's autoregistration keeps for every built-in group
    and version (`v1.`, `v1.apps`, `v2.autoscaling`, ...), all Local and Available."""
    for group, versions in group_versions().items():
        for version in versions:
            low, priority = _PRIORITIES.get(group, (16000, 15))
            if (group, version) == ("autoscaling", "v2"):
                priority = 30  # the preferred version ranks higher
            store.create(
                APISERVICES,
                "",
                {
                    "metadata": {
                        "name": f"{version}.{group}",
                        "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
                    },
                    "spec": {
                        "group": group,
                        "version": version,
                        "groupPriorityMinimum": low,
                        "versionPriority": priority,
                    },
                    "status": {
                        "conditions": [
                            {
                                "type": "Available",
                                "status": "True",
                                "lastTransitionTime": now_rfc3339(),
                                "reason": "Local",
                                "message": "Local APIServices are always available",
                            }
                        ]
                    },
                },
            )
