"""Server-side apply as structured-merge-diff decides it (apiserver/managed.py, fieldsets.py), judged
by the real kubectl: a list item is no field of its own (merge/update.go takes its conflicts from
typed/compare.go, which modifies leaves only), so a changed image is one conflict; equal values
are no conflict and leave the field with both managers; create-then-apply of the same manifest
is no conflict with `kubectl-create`; conflicts are listed once per field, by manager, with
upstream's names for appliers and updaters (apimachinery managedfields/internal/conflict.go)."""

from __future__ import annotations

import json

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: busybox, image: "IMAGE", command: [sleep, "3600"]}
"""
CM = """apiVersion: v1
kind: ConfigMap
metadata: {name: shared}
data: DATA
"""


def _entries(kubectl: Kubectl, kind: str, name: str) -> dict[str, dict[str, object]]:
    obj = json.loads(kubectl("get", kind, name, "-o", "json", "--show-managed-fields"))
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}


def _apply(kubectl: Kubectl, manifest: str, *flags: str) -> tuple[int, str]:
    proc = kubectl.run("apply", "--server-side", *flags, "-f", "-", input=manifest, check=False)
    return proc.returncode, proc.stderr


def test_create_then_apply_conflicts_once_per_changed_field_never_on_a_list_item(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "deployment", "web", "--image=busybox:1.36", "--", "sleep", "3600")
    # the manifest of what was created: no conflict with kubectl-create, whose fields stay shared
    assert _apply(kubectl, DEPLOY.replace("IMAGE", "busybox:1.36")) == (0, "")
    owned = _entries(kubectl, "deployment", "web")
    item = owned["kubectl"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"busybox"}']  # type: ignore[index]
    assert item == {".": {}, "f:command": {}, "f:image": {}, "f:name": {}}
    assert "f:image" in owned["kubectl-create"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"busybox"}']  # type: ignore[index]
    code, err = _apply(kubectl, DEPLOY.replace("IMAGE", "busybox:1.37"))
    assert code == 1
    assert err.startswith(
        'error: Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: '
        '.spec.template.spec.containers[name="busybox"].image\n'
    ), err
    assert _apply(kubectl, DEPLOY.replace("IMAGE", "busybox:1.37"), "--force-conflicts")[0] == 0
    owned = _entries(kubectl, "deployment", "web")
    containers = owned["kubectl-create"]["f:spec"]["f:template"]["f:spec"]["f:containers"]  # type: ignore[index]
    assert "f:image" not in containers['k:{"name":"busybox"}']  # taken over by the forced apply


def test_equal_values_share_a_field_and_conflicts_are_listed_by_manager(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "configmap", "shared", "--from-literal=a=1", "--from-literal=b=2")
    assert _apply(kubectl, CM.replace("DATA", '{a: "1", b: "2"}'), "--field-manager=alice")[0] == 0
    assert _apply(kubectl, CM.replace("DATA", '{a: "1"}'), "--field-manager=bob")[0] == 0
    owned = _entries(kubectl, "configmap", "shared")
    assert owned["alice"] == {"f:data": {"f:a": {}, "f:b": {}}} and owned["bob"] == {"f:data": {"f:a": {}}}
    # one field owned by two appliers and an updater, another by one applier and the updater
    code, err = _apply(kubectl, CM.replace("DATA", '{a: "9", b: "9"}'), "--field-manager=carol")
    assert code == 1
    assert err.startswith(
        "error: Apply failed with 5 conflicts: "
        'conflicts with "alice":\n- .data.a\n- .data.b\n'
        'conflicts with "bob":\n- .data.a\n'
        'conflicts with "kubectl-create" using v1:\n- .data.a\n- .data.b\n'
    ), err
    # a field two appliers share stays while either still applies it, and goes with the last
    duo = CM.replace("shared", "duo")
    assert _apply(kubectl, duo.replace("DATA", '{a: "1", b: "2"}'), "--field-manager=alice")[0] == 0
    assert _apply(kubectl, duo.replace("DATA", '{a: "1"}'), "--field-manager=bob")[0] == 0
    assert _apply(kubectl, duo.replace("DATA", '{b: "2"}'), "--field-manager=alice")[0] == 0
    assert json.loads(kubectl("get", "configmap", "duo", "-o", "json"))["data"] == {"a": "1", "b": "2"}
    assert _apply(kubectl, duo.replace("DATA", "{}"), "--field-manager=bob")[0] == 0
    assert json.loads(kubectl("get", "configmap", "duo", "-o", "json"))["data"] == {"b": "2"}
