"""kubectl explain, server-side apply and field validation against kubesim, judged by the real
kubectl: OpenAPI schemas, managedFields and conflicts, fieldValidation Strict/Warn/Ignore."""

from __future__ import annotations

import json

from tests.support.kubectl import Kubectl

CM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
data:
  k: {value}
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  foo: bar
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: busybox:1.36
        command: [sleep, "3600"]
"""


def test_explain_shows_the_real_fields_types_and_descriptions(kubectl: Kubectl) -> None:
    spec = kubectl("explain", "deployment.spec")
    assert "KIND:       Deployment" in spec and "FIELD: spec <DeploymentSpec>" in spec
    assert "progressDeadlineSeconds\t<integer>" in spec
    assert "selector\t<LabelSelector> -required-" in spec
    assert "template\t<PodTemplateSpec> -required-" in spec
    assert "The maximum time in seconds for a deployment to make progress before it is" in spec
    containers = kubectl("explain", "pods.spec.containers")
    assert "FIELD: containers <[]Container>" in containers
    assert "name\t<string> -required-" in containers
    assert "livenessProbe\t<Probe>" in containers
    assert "A single application container that you want to run within a pod." in containers
    recursive = kubectl("explain", "deployment.spec.strategy.rollingUpdate", "--recursive")
    assert "FIELD: rollingUpdate <RollingUpdateDeployment>" in recursive
    assert "maxSurge\t<IntOrString>" in recursive and "maxUnavailable\t<IntOrString>" in recursive
    assert "Spec to control the desired behavior of rolling update." in recursive
    missing = kubectl.run("explain", "deployment.spec.nosuchfield", check=False)
    assert missing.returncode != 0 and 'field "nosuchfield" does not exist' in missing.stderr


def _managed(kubectl: Kubectl) -> list[dict[str, object]]:
    cm = json.loads(kubectl("get", "cm", "ssa", "-o", "json", "--show-managed-fields"))
    return cm["metadata"]["managedFields"]


def test_server_side_apply_creates_then_a_second_manager_conflicts_until_it_forces(kubectl: Kubectl) -> None:
    out = kubectl("apply", "--server-side", "-f", "-", input=CM.format(value="one"))
    assert "configmap/ssa serverside-applied" in out
    (entry,) = _managed(kubectl)
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == ("kubectl", "Apply", "v1")
    assert entry["fieldsType"] == "FieldsV1" and entry["fieldsV1"] == {"f:data": {"f:k": {}}}

    # the same manager changes its own field: no conflict
    kubectl("apply", "--server-side", "-f", "-", input=CM.format(value="two"))
    assert json.loads(kubectl("get", "cm", "ssa", "-o", "json"))["data"] == {"k": "two"}

    proc = kubectl.run(
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        "-",
        input=CM.format(value="three"),
        check=False,
    )
    assert proc.returncode != 0
    # an applier is named alone, an updater with its apiVersion (internal/conflict.go printManager)
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.k' in proc.stderr
    assert json.loads(kubectl("get", "cm", "ssa", "-o", "json"))["data"] == {"k": "two"}

    # the same value is no conflict: the field is then shared
    kubectl("apply", "--server-side", "--field-manager=sharer", "-f", "-", input=CM.format(value="two"))
    assert sorted(e["manager"] for e in _managed(kubectl)) == ["kubectl", "sharer"]

    kubectl(
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        "-",
        input=CM.format(value="three"),
    )
    assert json.loads(kubectl("get", "cm", "ssa", "-o", "json"))["data"] == {"k": "three"}
    (entry,) = _managed(kubectl)
    assert (entry["manager"], entry["operation"]) == ("other", "Apply")
    assert entry["fieldsV1"] == {"f:data": {"f:k": {}}}


def test_an_update_records_its_manager_and_an_apply_conflicts_with_it(kubectl: Kubectl) -> None:
    kubectl("create", "configmap", "ssa", "--from-literal=k=one")
    (entry,) = _managed(kubectl)
    assert (entry["manager"], entry["operation"]) == ("kubectl-create", "Update")
    assert entry["fieldsV1"] == {"f:data": {".": {}, "f:k": {}}}
    proc = kubectl.run("apply", "--server-side", "-f", "-", input=CM.format(value="two"), check=False)
    assert 'conflict with "kubectl-create" using v1: .data.k' in proc.stderr


def test_validate_strict_refuses_an_unknown_field_with_the_apiserver_text(kubectl: Kubectl) -> None:
    proc = kubectl.run("apply", "--validate=strict", "-f", "-", input=DEPLOYMENT, check=False)
    assert proc.returncode != 0
    assert (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.foo"' in proc.stderr
    )
    assert kubectl.run("get", "deploy", "web", check=False).returncode != 0
    # kubectl's default is Strict too
    assert kubectl.run("apply", "-f", "-", input=DEPLOYMENT, check=False).returncode != 0


def test_validate_warn_prints_the_warning_and_drops_the_field_ignore_is_silent(kubectl: Kubectl) -> None:
    proc = kubectl.run("apply", "--validate=warn", "-f", "-", input=DEPLOYMENT)
    assert 'Warning: unknown field "spec.foo"' in proc.stderr
    assert "deployment.apps/web created" in proc.stdout
    assert "foo" not in json.loads(kubectl("get", "deploy", "web", "-o", "json"))["spec"]
    quiet = kubectl.run("apply", "--validate=ignore", "-f", "-", input=DEPLOYMENT.replace("web", "web2"))
    assert "Warning" not in quiet.stderr and "deployment.apps/web2 created" in quiet.stdout


def test_kubectl_scale_is_recorded_in_managed_fields_as_a_scale_update(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=debian", "--", "sleep", "infinity")
    kubectl("scale", "deployment/web", "--replicas=2")
    entries = json.loads(kubectl("get", "deployment", "web", "--show-managed-fields", "-o", "json"))[
        "metadata"
    ]["managedFields"]
    scale = [e for e in entries if e.get("subresource") == "scale"]
    assert len(scale) == 1
    # kubectl 1.32's scale sends no fieldManager: the manager is its User-Agent's prefix
    assert (scale[0]["manager"], scale[0]["operation"], scale[0]["apiVersion"]) == (
        "kubectl",
        "Update",
        "apps/v1",
    )
    assert scale[0]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
