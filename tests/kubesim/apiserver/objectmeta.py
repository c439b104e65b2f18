"""ValidateObjectMeta, the metadata half of every kind's validation, with the apiserver's texts.

From kubernetes/apimachinery pkg/api/validation/objectmeta.go (`ValidateObjectMetaAccessor`: a
generateName and a name checked by the kind's name rule, then labels, annotations, owner
references and finalizers; on update `ValidateObjectMetaAccessorUpdate`, which never checks the
name again), pkg/api/validation/generic.go (`NameIsDNSSubdomain`, `NameIsDNSLabel`,
`NameIsDNS1035Label`, a generateName's trailing dash masked), pkg/util/validation/validation.go
and pkg/api/validate/content/kube.go (the RFC 1123 and label-key texts), and
pkg/api/validation/path/name.go (`IsValidPathSegmentName`).

Each kind's own rule, from kubernetes/kubernetes: most kinds' names are DNS-1123 subdomains
(pkg/apis/core/validation/validation.go ValidatePodName, ValidateConfigMapName,
ValidateSecretName, ValidateServiceAccountName, ValidatePersistentVolumeName, ...;
pkg/apis/apps/validation/validation.go for Deployments, ReplicaSets, DaemonSets and
ControllerRevisions; batch Jobs through ValidateReplicationControllerName); a Namespace's and a
StatefulSet's are DNS-1123 labels (ValidateNamespaceName, ValidateStatefulSetName: its pods'
hostnames); a Service's a DNS-1035 label (ValidateServiceName, 1.32); RBAC objects' any path
segment (pkg/apis/rbac/validation ValidateRBACName), so `Bad_Name` is a valid Role."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# (field, error type, bad value, detail): a field.Error, which validation.py renders
FieldError = tuple[str, str, Any, str]

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE = "(" + _KEY + ")?"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
ANNOTATIONS_LIMIT = 256 * 1024  # TotalAnnotationSizeLimitB


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    shown = "".join(f"'{e}', " if i == 0 else f"or '{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _full(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value) is not None


def dns1123_subdomain(value: str) -> list[str]:
    errs = ["must be no more than 253 characters"] if len(value) > 253 else []
    if not _full(_SUBDOMAIN, value):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN, "example.com"))
    return errs


def dns1123_label(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _full(_LABEL, value):
        if _full(_SUBDOMAIN, value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_LABEL_MSG, _LABEL, "my-name", "123-abc"))
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _full(_DNS1035, value):
        errs.append(_regex_error(_DNS1035_MSG, _DNS1035, "my-name", "abc-123"))
    return errs


def path_segment(value: str) -> list[str]:
    """path.IsValidPathSegmentName."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def qualified_name(value: str) -> list[str]:
    """content.IsLabelKey (IsQualifiedName): an optional DNS subdomain prefix and '/', a name."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(_KEY_MSG, _KEY, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(parts[0])]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _full(_KEY, name):
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY, "MyName", "my.name", "123-abc"))
    return errs


def label_value(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _full(_VALUE, value):
        errs.append(_regex_error(_VALUE_MSG, _VALUE, "MyValue", "my_value", "12345"))
    return errs


_RBAC = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
# kind -> its name rule; any other kind (custom resources too) has a DNS-1123 subdomain
NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "Namespace": dns1123_label,
    "StatefulSet": dns1123_label,
    "Service": dns1035_label,
    **{kind: path_segment for kind in _RBAC},
}


def _mask_trailing_dash(prefix: str) -> str:
    """maskTrailingDash: a generateName may end in '-' (the generated suffix follows)."""
    return prefix[:-2] + "a" if len(prefix) > 1 and prefix.endswith("-") else prefix


def _maps(meta: dict[str, Any]) -> list[FieldError]:
    """ValidateLabels and ValidateAnnotations (keys as qualified names, case-insensitive for
    annotations; label values; annotations' total size)."""
    errs: list[FieldError] = []
    labels = meta.get("labels")
    for k, v in (labels if isinstance(labels, dict) else {}).items():
        errs += [("metadata.labels", "Invalid value", k, m) for m in qualified_name(str(k))]
        errs += [("metadata.labels", "Invalid value", v, m) for m in label_value(str(v))]
    notes = meta.get("annotations")
    notes = notes if isinstance(notes, dict) else {}
    for k in notes:
        errs += [("metadata.annotations", "Invalid value", k, m) for m in qualified_name(str(k).lower())]
    if sum(len(str(k)) + len(str(v)) for k, v in notes.items()) > ANNOTATIONS_LIMIT:
        errs.append(("metadata.annotations", "Too long", "", f"must have at most {ANNOTATIONS_LIMIT} bytes"))
    return errs


def meta_errors(kind: str, obj: dict[str, Any], *, create: bool) -> list[FieldError]:
    """The metadata's field errors: on create the name rule too, on update labels and annotations."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return []
    errs: list[FieldError] = []
    if create:
        rule = NAME_RULES.get(kind, dns1123_subdomain)
        prefix = meta.get("generateName")
        if isinstance(prefix, str) and prefix:
            masked = _mask_trailing_dash(prefix)
            errs += [("metadata.generateName", "Invalid value", prefix, m) for m in rule(masked)]
        name = meta.get("name")
        if isinstance(name, str) and name:
            errs += [("metadata.name", "Invalid value", name, m) for m in rule(name)]
    return errs + _maps(meta)
