"""The apiserver's 422s, judged by the real kubectl (what it prints) and the official client
(the Status body): a negative replica count, an empty image, a mount of an undeclared volume,
an immutable selector, a StatefulSet's frozen spec and a Job's immutable template
(apiserver/validation.py cites the upstream sources)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: IMAGE
        command: [sleep, infinity]
        volumeMounts: MOUNTS
"""


def deployment(tmp_path: Path, *, replicas: int = 1, image: str = "busybox", mounts: str = "[]") -> str:
    path = tmp_path / "deploy.yaml"
    path.write_text(
        DEPLOY.replace("REPLICAS", str(replicas))
        .replace("IMAGE", json.dumps(image))
        .replace("MOUNTS", mounts)
    )
    return str(path)


def test_a_negative_replica_count_is_refused_with_the_apiservers_text(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    proc = kubectl.run("apply", "-f", deployment(tmp_path, replicas=-1), check=False)
    assert proc.returncode == 1
    assert (
        'The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
        in proc.stderr
    )
    kubectl("apply", "-f", deployment(tmp_path))
    proc = kubectl.run("patch", "deployment", "web", "-p", '{"spec":{"replicas":-2}}', check=False)
    assert "spec.replicas: Invalid value: -2: must be greater than or equal to 0" in proc.stderr
    assert kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}") == "1"


def test_an_empty_image_and_a_mount_of_no_volume_are_both_named(kubectl: Kubectl, tmp_path: Path) -> None:
    path = deployment(tmp_path, image="", mounts="[{name: data, mountPath: /data}]")
    proc = kubectl.run("apply", "-f", path, check=False)
    assert proc.returncode == 1
    # two causes: kubectl lists them one a line under the object's name
    assert 'The Deployment "web" is invalid: \n' in proc.stderr
    assert "* spec.template.spec.containers[0].image: Required value\n" in proc.stderr
    assert '* spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"' in proc.stderr
    assert kubectl.run("get", "deployment", "web", check=False).returncode == 1


def test_a_pod_with_an_empty_image_is_refused_by_the_official_client(
    cluster: Cluster, tmp_path: Path
) -> None:
    api = client.CoreV1Api(
        config.new_client_from_config(config_file=cluster.write_kubeconfig(tmp_path / "kc"))
    )
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app", "image": ""}]}}
    with pytest.raises(ApiException) as err:
        api.create_namespaced_pod("default", pod)
    assert err.value.status == 422
    body = json.loads(err.value.body)
    assert body["message"] == 'Pod "p" is invalid: spec.containers[0].image: Required value'
    assert body["details"] == {
        "name": "p",
        "kind": "Pod",
        "causes": [
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].image"}
        ],
    }


def test_a_deployments_selector_is_immutable(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl("apply", "-f", deployment(tmp_path))
    patch = {
        "spec": {
            "selector": {"matchLabels": {"app": "other"}},
            "template": {"metadata": {"labels": {"app": "other"}}},
        }
    }
    proc = kubectl.run("patch", "deployment", "web", "-p", json.dumps(patch), check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        'The Deployment "web" is invalid: spec.selector: Invalid value: '
        'v1.LabelSelector{MatchLabels:map[string]string{"app":"other"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    )


def test_a_replicasets_selector_is_immutable(cluster: Cluster, tmp_path: Path) -> None:
    api = client.AppsV1Api(
        config.new_client_from_config(config_file=cluster.write_kubeconfig(tmp_path / "kc"))
    )
    rs = {
        "metadata": {"name": "rs"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "rs"}},
            "template": {
                "metadata": {"labels": {"app": "rs", "tier": "x"}},
                "spec": {"containers": [{"name": "app", "image": "busybox"}]},
            },
        },
    }
    api.create_namespaced_replica_set("default", rs)
    patch = {"spec": {"selector": {"matchLabels": {"app": "rs", "tier": "x"}}}}
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_replica_set("rs", "default", patch)
    assert err.value.status == 422
    assert json.loads(err.value.body)["message"] == (
        'ReplicaSet.apps "rs" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:'
        'map[string]string{"app":"rs", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
        "field is immutable"
    )


def test_a_statefulset_refuses_changes_outside_its_mutable_fields(kubectl: Kubectl, tmp_path: Path) -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "replicas": 0,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "busybox"}]},
            },
        },
    }
    (tmp_path / "sts.json").write_text(json.dumps(sts))
    kubectl("apply", "-f", str(tmp_path / "sts.json"))
    proc = kubectl.run("patch", "statefulset", "db", "-p", '{"spec":{"serviceName":"other"}}', check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        'The StatefulSet "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than '
        "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    # the mutable ones still change
    kubectl("patch", "statefulset", "db", "-p", '{"spec":{"replicas":1,"minReadySeconds":2}}')


def test_a_jobs_template_is_immutable(kubectl: Kubectl) -> None:
    kubectl("create", "job", "once", "--image=busybox", "--", "true")
    proc = kubectl.run("set", "image", "job/once", "once=busybox:1.37", check=False)
    assert proc.returncode == 1
    # `set image` prints the Status message itself, after its own words
    assert proc.stderr.startswith("error: failed to patch image update to pod template: ")
    assert 'Job.batch "once" is invalid: spec.template: Invalid value: core.PodTemplateSpec{' in proc.stderr
    assert proc.stderr.rstrip().endswith("}: field is immutable")
    assert (
        kubectl("get", "job", "once", "-o", "jsonpath={.spec.template.spec.containers[0].image}") == "busybox"
    )


def test_server_side_dry_run_validates_without_storing(kubectl: Kubectl, tmp_path: Path) -> None:
    proc = kubectl.run("apply", "--dry-run=server", "-f", deployment(tmp_path, replicas=-1), check=False)
    assert "spec.replicas: Invalid value: -1" in proc.stderr
    assert "created (server dry run)" in kubectl("apply", "--dry-run=server", "-f", deployment(tmp_path))
    assert kubectl.run("get", "deployment", "web", check=False).returncode == 1


def test_a_pods_spec_is_immutable_but_for_its_images(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("run", "solo", "--image=debian", "--command", "--", "sleep", "infinity")
    cluster.wait_for(
        lambda: ((cluster.get("Pod", "solo") or {}).get("spec") or {}).get("nodeName"), what="bound"
    )
    env = '{"spec":{"containers":[{"name":"solo","env":[{"name":"A","value":"1"}]}]}}'
    proc = kubectl.run("patch", "pod", "solo", "-p", env, check=False)
    assert proc.returncode == 1
    first = proc.stderr.splitlines()[0]
    assert first == (
        'The Pod "solo" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
        "(allow it to be set to 1 if it was previously negative)"
    )
    assert "  core.PodSpec{" in proc.stderr
    assert "env" not in json.dumps(cluster.get("Pod", "solo")["spec"]["containers"][0])  # type: ignore[index]
    # the image may change, and labels (metadata) always
    assert "image updated" in kubectl("set", "image", "pod/solo", "solo=debian:12")
    assert "labeled" in kubectl("label", "pod", "solo", "tier=x")
    extra = '{"spec":{"containers":[{"name":"solo"},{"name":"two","image":"debian"}]}}'
    proc = kubectl.run("patch", "pod", "solo", "--type=merge", "-p", extra, check=False)
    assert "spec.containers: Forbidden: pod updates may not add or remove containers" in proc.stderr


def test_a_deployment_whose_selector_misses_its_template_is_refused_as_apps_validation_says(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        Path(deployment(tmp_path)).read_text().replace("labels: {app: web}", "labels: {app: other}")
    )
    proc = kubectl.run("apply", "-f", str(path), check=False)
    assert proc.stderr.strip() == (
        'The Deployment "web" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"other"}: `selector` does not match template `labels`'
    )


def test_a_negative_scale_is_refused_by_the_scale_subresource(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", deployment(tmp_path))
    api = client.AppsV1Api(
        config.new_client_from_config(config_file=cluster.write_kubeconfig(tmp_path / "kc"))
    )
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -3}})
    assert err.value.status == 422
    body = json.loads(err.value.body)
    assert body["message"] == (
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0'
    )
    assert body["details"]["group"] == "autoscaling" and body["details"]["kind"] == "Scale"
    assert kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}") == "1"
