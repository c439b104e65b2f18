"""The apiserver's validation of what is written, with its texts: field errors formatted as
apimachinery's `field.Error.ErrorBody` (pkg/util/validation/field/errors.go) and gathered into one
422 as `apierrors.NewInvalid` does (`Deployment.apps "web" is invalid: [a, b]`).

What it checks, each traced from kubernetes/kubernetes:
- pkg/apis/core/validation/validation.go: `validateContainerCommon` (an empty image is
  `Required value`), `ValidateVolumeMounts` (a mount naming no volume is `Not found: "data"`),
  `ValidateNonnegativeField` (`must be greater than or equal to 0`), `ValidateImmutableField`
  (`field is immutable`, the new value shown with Go's `%#v`);
- pkg/apis/apps/validation/validation.go: replicas of Deployments, ReplicaSets and StatefulSets;
  `ValidateStatefulSetUpdate` (only some spec fields may change: `spec: Forbidden: updates to
  statefulset spec for fields other than ...`);
- pkg/registry/apps/{deployment,replicaset,daemonset}/strategy.go `ValidateUpdate`: `spec.selector`
  is immutable in apps/v1;
- pkg/apis/batch/validation/validation.go `ValidateJobSpecUpdate`: completions, selector and the
  pod template are immutable;
- pkg/apis/core/validation/validation.go `ValidatePodUpdate`: a pod's spec is immutable but for
  its containers' images, activeDeadlineSeconds, added tolerations and a negative grace period
  set to 1 (`ValidateContainerUpdates`: no containers added or removed).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import Resource
from ..storage.store import Obj
from .objectmeta import meta_errors

# field.ErrorType -> metav1.CauseType (apimachinery field/errors.go)
_CAUSES = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Not found": "FieldValueNotFound",
    "Forbidden": "FieldValueForbidden",
    "Unsupported value": "FieldValueNotSupported",
    "Duplicate value": "FieldValueDuplicate",
    "Too long": "FieldValueTooLong",
}
_NO_VALUE = ("Required value", "Forbidden", "Too long")  # ErrorBody prints no value for these
NONNEGATIVE = "must be greater than or equal to 0"
IMMUTABLE = "field is immutable"
STS_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)
# the StatefulSet spec fields an update may change (ValidateStatefulSetUpdate's clone)
_STS_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)
_WITH_REPLICAS = ("Deployment", "ReplicaSet", "StatefulSet")
# updatablePodSpecFields (InPlacePodVerticalScaling is off by default in 1.32)
POD_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
    "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
    "was previously negative)"
)


class GoValue(str):
    """A value already rendered as Go's `%#v` prints it (structs in `field is immutable`)."""


@dataclass(frozen=True)
class FieldError:
    field: str
    type: str
    value: Any = None
    detail: str = ""

    def body(self) -> str:
        """field.Error.ErrorBody: the type, the bad value (if the type shows one), the detail."""
        s = self.type
        if self.type not in _NO_VALUE:
            v = self.value
            if isinstance(v, GoValue):
                s += f": {v}"
            elif isinstance(v, bool):
                s += f": {str(v).lower()}"
            elif isinstance(v, int | float):
                s += f": {v}"
            elif v is None:
                s += ": null"
            else:
                s += f": {json.dumps(str(v))}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def text(self) -> str:
        return f"{self.field}: {self.body()}"


def invalid(res: Resource, name: str, errs: list[FieldError]) -> ApiError:
    """apierrors.NewInvalid: one cause per field error; the message aggregates them
    (utilerrors.NewAggregate: one error as is, several in brackets, duplicates dropped)."""
    texts: list[str] = []
    for e in errs:
        if e.text() not in texts:
            texts.append(e.text())
    shown = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    kind = f"{res.kind}.{res.group}" if res.group else res.kind
    details: dict[str, Any] = {"name": name}
    if res.group:
        details["group"] = res.group
    details["kind"] = res.kind
    details["causes"] = [{"reason": _CAUSES[e.type], "message": e.body(), "field": e.field} for e in errs]
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {shown}', details)


def admit(res: Resource, obj: Obj, old: Obj | None) -> None:
    """The Store's admission hook: validate a create (`old` None) or an update; raise the 422.
    The metadata's errors come first, as each kind's ValidateX starts with ValidateObjectMeta."""
    errs = [FieldError(*e) for e in meta_errors(res.kind, obj, create=old is None)]
    errs += validate_object(res.kind, obj)
    if old is not None:
        errs += validate_update(res.kind, obj, old)
    if errs:
        raise invalid(res, (obj.get("metadata") or {}).get("name", ""), errs)


SCALE = Resource("autoscaling", "v1", "scale", "Scale", True)


def check_scale(name: str, replicas: int) -> None:
    """The scale subresource's ValidateScale (pkg/apis/autoscaling/validation)."""
    if replicas < 0:
        raise invalid(SCALE, name, [FieldError("spec.replicas", "Invalid value", replicas, NONNEGATIVE)])


def validate_object(kind: str, obj: Obj) -> list[FieldError]:
    """ValidateDeployment/ReplicaSet/StatefulSet/DaemonSet/Job/Pod: the checks kubesim makes."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    errs: list[FieldError] = []
    if kind in _WITH_REPLICAS:
        replicas = spec.get("replicas")
        if isinstance(replicas, int) and replicas < 0:
            errs.append(FieldError("spec.replicas", "Invalid value", replicas, NONNEGATIVE))
    if kind == "Pod":
        errs += pod_spec_errors(spec, "spec")
    elif kind in (*_WITH_REPLICAS, "DaemonSet", "Job"):
        template = spec.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            errs += pod_spec_errors(template["spec"], "spec.template.spec")
    return errs


def pod_spec_errors(spec: Obj, path: str) -> list[FieldError]:
    """ValidatePodSpec's container checks: containers, then initContainers (validateContainers,
    validateInitContainers), each image required and each mount naming a declared volume."""
    volumes = {v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)}
    errs: list[FieldError] = []
    for group in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(group) or []):
            if not isinstance(c, dict):
                continue
            at = f"{path}.{group}[{i}]"
            if not c.get("image"):
                errs.append(FieldError(f"{at}.image", "Required value"))
            for j, m in enumerate(c.get("volumeMounts") or []):
                name = (m or {}).get("name") or ""
                if not name:
                    errs.append(FieldError(f"{at}.volumeMounts[{j}].name", "Required value"))
                elif name not in volumes:
                    errs.append(FieldError(f"{at}.volumeMounts[{j}].name", "Not found", name))
    return errs


def validate_update(kind: str, new: Obj, old: Obj) -> list[FieldError]:
    """The update-only checks: immutable selectors, the StatefulSet's frozen spec, a Job's template."""
    spec, was = new.get("spec") or {}, old.get("spec") or {}
    errs: list[FieldError] = []
    if kind in ("Deployment", "ReplicaSet", "DaemonSet") and spec.get("selector") != was.get("selector"):
        errs.append(
            FieldError("spec.selector", "Invalid value", label_selector(spec.get("selector")), IMMUTABLE)
        )
    if kind == "StatefulSet":
        rest = {k: v for k, v in spec.items() if k not in _STS_MUTABLE}
        rest_was = {k: v for k, v in was.items() if k not in _STS_MUTABLE}
        if rest != rest_was:
            errs.append(FieldError("spec", "Forbidden", detail=STS_FORBIDDEN))
    if kind == "Pod":
        errs += pod_update_errors(spec, was)
    if kind == "Job":
        if spec.get("completions") != was.get("completions"):
            errs.append(FieldError("spec.completions", "Invalid value", spec.get("completions"), IMMUTABLE))
        if spec.get("selector") != was.get("selector"):
            errs.append(
                FieldError("spec.selector", "Invalid value", label_selector(spec.get("selector")), IMMUTABLE)
            )
        if spec.get("template") != was.get("template"):
            # the apiserver dumps the whole internal core.PodTemplateSpec with %#v (some 3 KB of
            # Go syntax); kubesim shows its type and elides the fields
            errs.append(
                FieldError("spec.template", "Invalid value", GoValue("core.PodTemplateSpec{...}"), IMMUTABLE)
            )
    return errs


def pod_update_errors(spec: Obj, was: Obj) -> list[FieldError]:
    """ValidatePodUpdate's spec check: the new spec with its updatable fields set back to the old
    values must equal the old. Two writes kubesim makes through plain updates are let through: a
    binding (spec.nodeName set once, by the scheduler) and ephemeralContainers (their subresource)."""
    for group in ("containers", "initContainers"):
        if len(spec.get(group) or []) != len(was.get(group) or []):
            return [
                FieldError(
                    f"spec.{group}", "Forbidden", detail="pod updates may not add or remove containers"
                )
            ]
    errs: list[FieldError] = []
    munged = copy.deepcopy(spec)
    for group in ("containers", "initContainers"):
        for i, (c, old) in enumerate(zip(munged.get(group) or [], was.get(group) or [], strict=True)):
            if not c.get("image"):
                errs.append(FieldError(f"spec.{group}[{i}].image", "Required value"))
            c["image"] = old.get("image")
    for k in ("activeDeadlineSeconds", "ephemeralContainers"):
        _set_like(munged, k, was)
    if not was.get("nodeName"):
        _set_like(munged, "nodeName", was)
    # validation.go: schedulingGates may only be removed (validateOnlyDeletedSchedulingGates),
    # then mungedPodSpec.SchedulingGates = oldPod.Spec.SchedulingGates
    old_gates = [g.get("name") for g in was.get("schedulingGates") or []]
    for i, g in enumerate(spec.get("schedulingGates") or []):
        if g.get("name") not in old_gates:
            errs.append(
                FieldError(
                    f"spec.schedulingGates[{i}]",
                    "Forbidden",
                    detail=f"only deletion is allowed, but found new scheduling gate '{g.get('name')}'",
                )
            )
    _set_like(munged, "schedulingGates", was)
    tolerations = munged.get("tolerations") or []
    if all(t in tolerations for t in was.get("tolerations") or []):
        _set_like(munged, "tolerations", was)
    grace, old_grace = munged.get("terminationGracePeriodSeconds"), was.get("terminationGracePeriodSeconds")
    if grace == 1 and isinstance(old_grace, int) and old_grace < 0:
        munged["terminationGracePeriodSeconds"] = old_grace
    if munged != was:
        errs.append(FieldError("spec", "Forbidden", detail=POD_FORBIDDEN + "\n" + _spec_diff(was, munged)))
    return errs


def _set_like(munged: Obj, key: str, was: Obj) -> None:
    if key in was:
        munged[key] = copy.deepcopy(was[key])
    else:
        munged.pop(key, None)


def _spec_diff(old: Obj, new: Obj) -> str:
    """The apiserver appends cmp.Diff(old, new) of the internal core.PodSpec; kubesim shows the
    fields that differ in its shape (`-`/`+` lines, JSON values), not its exact text."""
    lines = ["  core.PodSpec{"]
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            field = key[:1].upper() + key[1:]
            if key in old:
                lines.append(f"- \t{field}: {json.dumps(old[key], separators=(',', ':'))},")
            if key in new:
                lines.append(f"+ \t{field}: {json.dumps(new[key], separators=(',', ':'))},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def label_selector(sel: Any) -> GoValue:
    """A *metav1.LabelSelector as field.Error prints it: dereferenced, then `%#v`."""
    if not isinstance(sel, dict):
        return GoValue("null")
    labels = sel.get("matchLabels")
    if labels is None:
        shown_labels = "map[string]string(nil)"
    else:
        pairs = ", ".join(f"{_q(k)}:{_q(v)}" for k, v in sorted(labels.items()))
        shown_labels = f"map[string]string{{{pairs}}}"
    exprs = sel.get("matchExpressions")
    if exprs is None:
        shown_exprs = "[]v1.LabelSelectorRequirement(nil)"
    else:
        items = []
        for e in exprs:
            values = e.get("values")
            shown_values = (
                "[]string(nil)" if values is None else "[]string{" + ", ".join(_q(v) for v in values) + "}"
            )
            items.append(
                f"v1.LabelSelectorRequirement{{Key:{_q(e.get('key', ''))}, "
                f"Operator:{_q(e.get('operator', ''))}, Values:{shown_values}}}"
            )
        shown_exprs = "[]v1.LabelSelectorRequirement{" + ", ".join(items) + "}"
    return GoValue(f"v1.LabelSelector{{MatchLabels:{shown_labels}, MatchExpressions:{shown_exprs}}}")


def _q(s: Any) -> str:
    """Go's %q of a string (ASCII cases: json.dumps agrees)."""
    return json.dumps(str(s))
