"""Stored pods carry the defaults the apiserver applies (apiserver/pod_defaults.py, from
pkg/apis/core/v1/defaults.go), so what kubectl reads back and `describe` prints is upstream's:
`80/TCP`, not `80/`; `timeout=1s period=10s #success=1 #failure=3`, not `timeout=0s`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl

DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "registry.local:5000/web",
                        "command": ["sleep", "infinity"],
                        "ports": [{"containerPort": 80}],
                        "readinessProbe": {"httpGet": {"port": 8080}},
                        "livenessProbe": {"exec": {"command": ["true"]}, "initialDelaySeconds": 5},
                        "env": [{"name": "ME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                        "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                    }
                ],
                "volumes": [{"name": "scratch"}],
            },
        },
    },
}


def test_a_controllers_pod_is_stored_with_the_apiservers_defaults(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    (tmp_path / "d.json").write_text(json.dumps(DEPLOY))
    kubectl("apply", "-f", str(tmp_path / "d.json"))
    cluster.wait_for(lambda: len(cluster.list("Pod")) == 1, what="the pod")
    pod = json.loads(kubectl("get", "pods", "-l", "app=web", "-o", "json"))["items"][0]
    spec = pod["spec"]
    c = spec["containers"][0]
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert c["readinessProbe"] == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert c["livenessProbe"]["initialDelaySeconds"] == 5 and c["livenessProbe"]["periodSeconds"] == 10
    assert c["env"][0]["valueFrom"]["fieldRef"] == {"apiVersion": "v1", "fieldPath": "metadata.name"}
    # a registry's port is not a tag: no tag means `latest`, so Always
    assert c["imagePullPolicy"] == "Always"
    assert (c["terminationMessagePath"], c["terminationMessagePolicy"]) == ("/dev/termination-log", "File")
    # the ServiceAccount admission plugin adds the projected token volume after the template's own
    scratch, token = spec["volumes"]
    assert scratch == {"name": "scratch", "emptyDir": {}}
    assert token["name"].startswith("kube-api-access-") and token["projected"]["defaultMode"] == 420
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["schedulerName"]) == (
        "Always",
        "ClusterFirst",
        "default-scheduler",
    )
    assert spec["securityContext"] == {} and spec["terminationGracePeriodSeconds"] == 30
    assert spec["enableServiceLinks"] is True  # SetDefaults_Pod: Pods only, never a template
    # the Priority and DefaultTolerationSeconds admission plugins, on create
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert spec["tolerations"] == [
        {"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
    ]
    template = json.loads(kubectl("get", "deployment", "web", "-o", "json"))["spec"]["template"]["spec"]
    assert "enableServiceLinks" not in template and "tolerations" not in template and "priority" not in template
    assert template["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


def test_describe_pod_prints_the_defaulted_port_and_probe_as_upstream(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    (tmp_path / "d.json").write_text(json.dumps(DEPLOY))
    kubectl("apply", "-f", str(tmp_path / "d.json"))
    cluster.wait_for(lambda: len(cluster.list("Pod")) == 1, what="the pod")
    out = kubectl("describe", "pods", "-l", "app=web")
    assert re.search(r"\n +Port: +80/TCP\n", out)  # describe aligns its columns by the longest key
    assert "http-get http://:8080/ delay=0s timeout=1s period=10s #success=1 #failure=3\n" in out
    assert "exec [true] delay=5s timeout=1s period=10s #success=1 #failure=3\n" in out
    assert "timeout=0s" not in out and "80/\n" not in out
    assert "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s" in out
    assert re.search(r"\nPriority: +0\n", out)
