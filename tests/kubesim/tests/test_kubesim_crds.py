"""CustomResourceDefinitions, judged by the real kubectl: the Secrets Store CSI Driver's CRDs as
published (release 1.6.0, tests/manifests/secrets-store-csi-driver/) are accepted, established,
and their kinds served with discovery, OpenAPI (kubectl explain), CRUD, watch, label selectors,
tables and the structural schema (apiextensions-apiserver, see storage/crds.py)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.kubesim.cluster import Cluster
from tests.support.kubectl import KUBECTL, Kubectl

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "secrets-store-csi-driver"

SPC = """apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: web-kv
  labels: {app: web}
spec:
  provider: azure
  parameters:
    keyvaultName: web-kv
    objects: |
      array:
        - |
          objectName: FEATURE_CREDENTIAL
          objectType: secret
  secretObjects:
  - secretName: web-secrets
    type: Opaque
    data:
    - {objectName: FEATURE_CREDENTIAL, key: FEATURE_CREDENTIAL}
"""


def _install(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(MANIFESTS))


def test_the_published_crds_apply_and_become_established(kubectl: Kubectl) -> None:
    out = kubectl("apply", "-f", str(MANIFESTS))
    assert (
        "customresourcedefinition.apiextensions.k8s.io/secretproviderclasses.secrets-store.csi.x-k8s.io created"
        in out
    )
    kubectl(
        "wait",
        "--for",
        "condition=established",
        "--timeout",
        "30s",
        "crd/secretproviderclasses.secrets-store.csi.x-k8s.io",
        "crd/secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io",
    )
    crd = json.loads(kubectl("get", "crd", "secretproviderclasses.secrets-store.csi.x-k8s.io", "-o", "json"))
    assert crd["status"]["acceptedNames"]["kind"] == "SecretProviderClass"
    assert crd["status"]["storedVersions"] == ["v1"]
    # applying again changes nothing
    assert "unchanged" in kubectl("apply", "-f", str(MANIFESTS))
    resources = kubectl("api-resources", "--api-group", "secrets-store.csi.x-k8s.io")
    assert "secretproviderclasses" in resources and "secretproviderclasspodstatuses" in resources
    assert "secrets-store.csi.x-k8s.io/v1" in kubectl("api-versions")


def test_a_custom_resource_is_created_printed_selected_and_deleted(kubectl: Kubectl) -> None:
    _install(kubectl)
    assert "secretproviderclass.secrets-store.csi.x-k8s.io/web-kv created" in kubectl(
        "apply", "-f", "-", input=SPC
    )
    table = kubectl("get", "secretproviderclass,secretproviderclasspodstatus")
    assert table.splitlines()[0].split() == ["NAME", "AGE"]
    assert "secretproviderclass.secrets-store.csi.x-k8s.io/web-kv" in table
    got = json.loads(kubectl("get", "secretproviderclass", "web-kv", "-o", "json"))
    assert got["apiVersion"] == "secrets-store.csi.x-k8s.io/v1" and got["metadata"]["generation"] == 1
    assert got["spec"]["secretObjects"][0]["secretName"] == "web-secrets"
    assert kubectl("get", "secretproviderclass", "-l", "app=web", "-o", "name") == (
        "secretproviderclass.secrets-store.csi.x-k8s.io/web-kv\n"
    )
    assert kubectl("get", "secretproviderclass", "-l", "app=other", "-o", "name") == ""
    kubectl("apply", "-f", "-", input=SPC.replace("keyvaultName: web-kv", "keyvaultName: other-kv"))
    got = json.loads(kubectl("get", "secretproviderclass", "web-kv", "-o", "json"))
    assert got["spec"]["parameters"]["keyvaultName"] == "other-kv" and got["metadata"]["generation"] == 2
    kubectl("label", "secretproviderclass", "web-kv", "tier=x")
    assert (
        json.loads(kubectl("get", "secretproviderclass", "web-kv", "-o", "json"))["metadata"]["generation"]
        == 2
    )
    kubectl("delete", "secretproviderclass", "web-kv")
    gone = kubectl.run("get", "secretproviderclass", "web-kv", check=False)
    assert gone.returncode != 0
    assert 'secretproviderclasses.secrets-store.csi.x-k8s.io "web-kv" not found' in gone.stderr


def test_the_schema_refuses_unknown_fields_and_wrong_types(kubectl: Kubectl) -> None:
    _install(kubectl)
    unknown = kubectl.run(
        "apply",
        "-f",
        "-",
        input=SPC.replace("  provider: azure", "  provider: azure\n  bogus: 1"),
        check=False,
    )
    assert unknown.returncode != 0 and 'unknown field "spec.bogus"' in unknown.stderr
    wrong = kubectl.run(
        "apply", "-f", "-", input=SPC.replace("provider: azure", "provider: [azure]"), check=False
    )
    assert wrong.returncode != 0
    assert (
        'spec.provider: Invalid value: "array": spec.provider in body must be of type string' in wrong.stderr
    )
    kubectl(
        "apply",
        "--validate=false",
        "-f",
        "-",
        input=SPC.replace("  provider: azure", "  provider: azure\n  bogus: 1"),
    )
    stored = json.loads(kubectl("get", "secretproviderclass", "web-kv", "-o", "json"))
    assert "bogus" not in stored["spec"]  # pruned, as the structural schema prunes


def test_explain_reads_the_crd_schema(kubectl: Kubectl) -> None:
    _install(kubectl)
    out = kubectl("explain", "secretproviderclass.spec.secretObjects")
    assert "KIND:       SecretProviderClass" in out and "secretName\t<string>" in out
    assert "name of the K8s secret object" in out


def test_a_watch_sees_custom_resources_come_and_go(kubectl: Kubectl, kubeconfig: str, tmp_path: Path) -> None:
    _install(kubectl)
    kubectl("get", "secretproviderclass")  # fills the discovery cache first
    env = {"KUBECONFIG": kubeconfig, "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    watch = subprocess.Popen(
        [KUBECTL, "--cache-dir", str(tmp_path / "cache"), "get", "secretproviderclass", "-w", "-o", "name"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        time.sleep(1.0)
        kubectl("apply", "-f", "-", input=SPC)
        assert watch.stdout is not None
        assert watch.stdout.readline().strip() == "secretproviderclass.secrets-store.csi.x-k8s.io/web-kv"
    finally:
        watch.kill()
        watch.wait()


def test_deleting_the_crd_stops_serving_its_kind_and_removes_its_objects(
    kubectl: Kubectl, cluster: Cluster
) -> None:
    _install(kubectl)
    kubectl("apply", "-f", "-", input=SPC)
    kubectl("delete", "crd", "secretproviderclasses.secrets-store.csi.x-k8s.io")
    cluster.wait_for(
        lambda: (
            cluster.call(
                lambda: cluster.store.custom.lookup("secrets-store.csi.x-k8s.io", "secretproviderclasses")
            )
            is None
        )
    )
    res = kubectl.run("get", "secretproviderclass", check=False)
    # with discovery cached from before the delete, kubectl's list meets the 404 itself
    assert res.returncode != 0
    assert (
        "could not find the requested resource" in res.stderr or "doesn't have a resource type" in res.stderr
    )
    kubectl("apply", "-f", str(MANIFESTS / "secrets-store.csi.x-k8s.io_secretproviderclasses.yaml"))
    assert kubectl("get", "secretproviderclass", "-o", "name") == ""


WIDGETS = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget, shortNames: [wdg], categories: [all]}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"""


def test_a_cluster_scoped_kind_prints_its_columns_and_keeps_status_apart(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=WIDGETS)
    kubectl("wait", "--for", "condition=established", "--timeout", "30s", "crd/widgets.example.com")
    kubectl(
        "apply",
        "-f",
        "-",
        input="apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n",
    )
    header, row = kubectl("get", "wdg").splitlines()
    assert header.split() == ["NAME", "SIZE", "PHASE", "AGE"]
    assert row.split()[:2] == ["w1", "3"]
    # the status subresource: the main resource ignores status, /status writes only it
    kubectl("patch", "widget", "w1", "--type", "merge", "-p", '{"status": {"phase": "Ignored"}}')
    assert "Ignored" not in kubectl("get", "widget", "w1", "-o", "json")
    kubectl(
        "patch",
        "widget",
        "w1",
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        '{"status": {"phase": "Ready"}}',
    )
    got = json.loads(kubectl("get", "widget", "w1", "-o", "json"))
    assert got["status"] == {"phase": "Ready"} and got["metadata"]["generation"] == 1
    assert "Ready" in kubectl("get", "widgets")
    assert "widget.example.com/w1" in kubectl("get", "all", "-o", "name")
    bad = kubectl.run(
        "apply",
        "-f",
        "-",
        input="apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {size: big}\n",
        check=False,
    )
    assert bad.returncode != 0 and 'spec.size in body must be of type integer: "string"' in bad.stderr
