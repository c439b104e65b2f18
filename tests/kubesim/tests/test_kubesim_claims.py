"""PersistentVolumeClaims (controllers/binder.py after pv_controller.go, apiserver/claims.py,
node/claims.py), judged by the real kubectl: a claim of the default class is provisioned and
goes Pending -> Bound, `kubectl get pvc|pv|sc` print upstream's columns, a pod mounts the claim
and its data outlives the pod, a pod waits for a claim that does not exist yet, a claim without
a class binds only to a matching volume, and deleting the claim deletes its volume."""

from __future__ import annotations

import json
from typing import Any

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl


def claim(name: str, *, size: str = "1Gi", **spec: Any) -> str:
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec},
    }
    return json.dumps(body)


def pod_with_claim(name: str, claim_name: str) -> str:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "app",
                    "image": "busybox:1.36",
                    "command": ["sleep", "3600"],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
        },
    }
    return json.dumps(body)


def phase(cluster: Cluster, kind: str, name: str) -> str:
    obj = cluster.get(kind, name, "default" if kind != "PersistentVolume" else "") or {}
    return str((obj.get("status") or {}).get("phase", ""))


def running(cluster: Cluster, name: str) -> bool:
    return phase(cluster, "Pod", name) == "Running"


def test_a_claim_of_the_default_class_is_provisioned_bound_and_printed_as_upstream(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    assert kubectl("apply", "-f", "-", input=claim("data")).strip() == "persistentvolumeclaim/data created"
    cluster.wait_for(
        lambda: phase(cluster, "PersistentVolumeClaim", "data") == "Bound", timeout=30, what="Bound"
    )
    pvc = json.loads(kubectl("get", "pvc", "data", "-o", "json"))
    volume = pvc["spec"]["volumeName"]
    assert volume == f"pvc-{pvc['metadata']['uid']}"
    assert pvc["spec"]["storageClassName"] == "standard" and pvc["spec"]["volumeMode"] == "Filesystem"
    assert pvc["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1Gi"},
    }
    table = kubectl("get", "pvc").splitlines()
    assert table[0].split() == [
        "NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"
    ]  # fmt: skip
    assert table[1].split()[:7] == ["data", "Bound", volume, "1Gi", "RWO", "standard", "<unset>"]
    pv_row = kubectl("get", "pv", "--no-headers").split()
    assert pv_row[:7] == [volume, "1Gi", "RWO", "Delete", "Bound", "default/data", "standard"]
    assert kubectl("get", "sc", "--no-headers").split()[:5] == [
        "standard", "(default)", "kubesim.local/hostpath", "Delete", "Immediate"
    ]  # fmt: skip
    events = kubectl("get", "events", "--field-selector", "involvedObject.name=data")
    assert "ProvisioningSucceeded" in events and f"Successfully provisioned volume {volume}" in events
    kubectl("delete", "pvc", "data")
    cluster.wait_for(
        lambda: cluster.get("PersistentVolume", volume, "") is None, timeout=30, what="pv deleted"
    )


def test_a_pod_mounts_its_claim_and_the_data_outlives_the_pod(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=claim("state"))
    kubectl("apply", "-f", "-", input=pod_with_claim("writer", "state"))
    cluster.wait_for(lambda: running(cluster, "writer"), timeout=60, what="writer running")
    kubectl("exec", "writer", "--", "sh", "-c", "echo kept > /data/file")
    kubectl("delete", "pod", "writer", "--wait=true")
    kubectl("apply", "-f", "-", input=pod_with_claim("reader", "state"))
    cluster.wait_for(lambda: running(cluster, "reader"), timeout=60, what="reader running")
    assert kubectl("exec", "reader", "--", "cat", "/data/file").strip() == "kept"
    described = kubectl("describe", "pod", "reader")
    assert "PersistentVolumeClaim" in described and "state" in described


def test_a_pod_waits_for_a_claim_created_after_it(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=pod_with_claim("early", "later"))

    def reason() -> str:
        p = cluster.get("Pod", "early") or {}
        conds = (p.get("status") or {}).get("conditions") or []
        return next((str(c.get("message", "")) for c in conds if c["type"] == "PodScheduled"), "")

    cluster.wait_for(lambda: "not found" in reason(), timeout=30, what="FailedScheduling")
    assert reason().startswith('0/3 nodes are available: persistentvolumeclaim "later" not found.')
    kubectl("apply", "-f", "-", input=claim("later"))
    cluster.wait_for(lambda: running(cluster, "early"), timeout=60, what="early running")


def test_a_claim_without_a_class_binds_only_to_a_volume_that_fits(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=claim("static", size="5Gi", storageClassName=""))
    cluster.wait_for(
        lambda: "FailedBinding" in kubectl("get", "events", "--field-selector", "involvedObject.name=static"),
        timeout=30,
        what="FailedBinding",
    )
    assert phase(cluster, "PersistentVolumeClaim", "static") == "Pending"
    assert kubectl("get", "pvc", "static", "--no-headers").split()[:2] == ["static", "Pending"]

    def volume(name: str, size: str) -> str:
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name},
                "spec": {
                    "capacity": {"storage": size},
                    "accessModes": ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "hostPath": {"path": f"/mnt/{name}"},
                },
            }
        )

    kubectl("apply", "-f", "-", input=volume("small", "1Gi"))  # too small: stays Available
    kubectl("apply", "-f", "-", input=volume("big", "10Gi"))
    cluster.wait_for(
        lambda: phase(cluster, "PersistentVolumeClaim", "static") == "Bound", timeout=30, what="Bound"
    )
    assert (cluster.get("PersistentVolumeClaim", "static") or {})["spec"]["volumeName"] == "big"
    assert phase(cluster, "PersistentVolume", "small") in ("", "Available")
    kubectl("delete", "pvc", "static")
    cluster.wait_for(
        lambda: phase(cluster, "PersistentVolume", "big") == "Released", timeout=30, what="Released"
    )


def test_a_claim_without_access_modes_is_refused_with_the_apiservers_422(kubectl: Kubectl) -> None:
    body = json.loads(claim("bad"))
    del body["spec"]["accessModes"]
    out = kubectl.run("apply", "-f", "-", input=json.dumps(body), check=False)
    assert out.returncode != 0
    assert (
        'PersistentVolumeClaim "bad" is invalid: spec.accessModes: Required value: at least 1 access mode is required'
        in out.stderr
    )


def test_a_wait_for_first_consumer_class_binds_only_once_a_pod_is_scheduled(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    """kind's `standard` class is WaitForFirstConsumer: a claim alone stays Pending (waiting on it
    hangs on a real cluster too); the scheduler writes the pod's node on it, then it binds."""
    local = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubesim.local/hostpath",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    kubectl("apply", "-f", "-", input=json.dumps(local))
    kubectl("apply", "-f", "-", input=claim("later-bound", storageClassName="local"))
    cluster.wait_for(
        lambda: (
            "WaitForFirstConsumer"
            in kubectl("get", "events", "--field-selector", "involvedObject.name=later-bound")
        ),
        timeout=30,
        what="WaitForFirstConsumer",
    )
    shown = kubectl("describe", "pvc", "later-bound")
    assert "waiting for first consumer to be created before binding" in shown
    out = kubectl.run(
        "wait", "--for=jsonpath={.status.phase}=Bound", "pvc/later-bound", "--timeout=2s", check=False
    )
    assert out.returncode != 0
    kubectl("apply", "-f", "-", input=pod_with_claim("consumer", "later-bound"))
    cluster.wait_for(lambda: running(cluster, "consumer"), timeout=60, what="consumer running")
    pvc = cluster.get("PersistentVolumeClaim", "later-bound") or {}
    node = (cluster.get("Pod", "consumer") or {})["spec"]["nodeName"]
    assert pvc["status"]["phase"] == "Bound"
    assert pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
