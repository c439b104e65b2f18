"""The texts of apiserver/validation.py without a cluster: field.Error's ErrorBody for each type,
Go's %#v of a LabelSelector (nil and empty fields, matchExpressions), and NewInvalid's aggregate
(one error as is, several bracketed, duplicates dropped, one cause each)."""

from __future__ import annotations

from tests.kubesim.apiserver.validation import FieldError, invalid, label_selector, validate_update
from tests.kubesim.storage.resources import BY_KIND


def test_each_error_type_prints_its_value_as_error_body_does() -> None:
    assert FieldError("spec.replicas", "Invalid value", -1, "must be greater than or equal to 0").text() == (
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    )
    assert FieldError("x.image", "Required value").text() == "x.image: Required value"
    assert FieldError("x.name", "Not found", "data").text() == 'x.name: Not found: "data"'
    assert FieldError("spec", "Forbidden", "ignored", "no").text() == "spec: Forbidden: no"
    assert FieldError("f", "Invalid value", True, "d").body() == "Invalid value: true: d"
    assert FieldError("f", "Invalid value", None, "d").body() == "Invalid value: null: d"


def test_a_label_selector_prints_as_gos_percent_sharp_v() -> None:
    assert label_selector({"matchLabels": {"b": "2", "a": "1"}}) == (
        'v1.LabelSelector{MatchLabels:map[string]string{"a":"1", "b":"2"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    )
    assert label_selector({"matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]}) == (
        "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement"
        '{v1.LabelSelectorRequirement{Key:"k", Operator:"In", Values:[]string{"x", "y"}}}}'
    )
    assert label_selector({"matchExpressions": [{"key": "k", "operator": "Exists"}]}).endswith(
        'Operator:"Exists", Values:[]string(nil)}}}'
    )
    assert label_selector(None) == "null"


def test_several_errors_aggregate_in_brackets_and_keep_a_cause_each() -> None:
    a = FieldError("spec.template.spec.containers[0].image", "Required value")
    b = FieldError("spec.replicas", "Invalid value", -1, "must be greater than or equal to 0")
    err = invalid(BY_KIND["Deployment"], "web", [b, a, a])
    assert err.code == 422 and err.reason == "Invalid"
    assert err.message == (
        'Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or '
        "equal to 0, spec.template.spec.containers[0].image: Required value]"
    )
    assert err.details is not None
    assert list(err.details) == ["name", "group", "kind", "causes"]  # StatusDetails' field order
    assert [c["reason"] for c in err.details["causes"]] == [
        "FieldValueInvalid",
        "FieldValueRequired",
        "FieldValueRequired",
    ]
    one = invalid(BY_KIND["Pod"], "p", [a])
    assert one.message == 'Pod "p" is invalid: spec.template.spec.containers[0].image: Required value'
    assert one.details is not None and "group" not in one.details


def test_the_selector_is_immutable_for_deployments_replicasets_and_daemonsets_alike() -> None:
    old = {"spec": {"selector": {"matchLabels": {"app": "a"}}}}
    new = {"spec": {"selector": {"matchLabels": {"app": "b"}}}}
    for kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        assert [e.text() for e in validate_update(kind, new, old)] == [
            'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"b"}, '
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        ]
    assert validate_update("DaemonSet", old, old) == []
