"""Pods talk to the API server as their ServiceAccount, as in a real cluster, judged by the real
kubectl (outside, and inside a pod with its in-cluster config):

- every namespace gets `default` and `kube-root-ca.crt` (serviceaccounts_controller.go,
  rootcacertpublisher/publisher.go), put back when deleted or changed;
- the ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount/admission.go) defaults
  `serviceAccountName`, refuses a pod naming a missing one (403) and adds the projected
  `kube-api-access-*` volume (token, ca.crt, namespace) at /var/run/secrets/kubernetes.io/
  serviceaccount; a controller whose pod is refused records FailedCreate (controller_utils.go,
  stateful_pod_control.go) and tries again with back-off;
- the token the kubelet projects (pkg/kubelet/token/token_manager.go) authenticates, through
  10.96.0.1:443 inside the pod, as system:serviceaccount:NS:SA, and RBAC decides the rest."""

from __future__ import annotations

import base64
import json
from typing import Any

from tests.kubesim import Cluster
from tests.support.helpers import deployment
from tests.support.kubectl import Kubectl

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def pod(name: str, script: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": spec.pop("namespace", "default")},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", script]}],
            **spec,
        },
    }


def finished(cluster: Cluster, name: str, namespace: str = "default") -> dict[str, Any]:
    def done() -> bool:
        p = cluster.get("Pod", name, namespace) or {}
        return (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")

    cluster.wait_for(done, timeout=90, what=f"pod {name} to finish")
    return cluster.get("Pod", name, namespace) or {}


def events(kubectl: Kubectl, kind: str, name: str, namespace: str = "default") -> list[dict[str, Any]]:
    out = json.loads(kubectl("get", "events", "-n", namespace, "-o", "json"))
    return [
        e for e in out["items"] if e["involvedObject"]["kind"] == kind and e["involvedObject"]["name"] == name
    ]


def test_every_namespace_has_its_default_serviceaccount_and_root_ca_which_come_back(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "namespace", "team-a")
    sa = json.loads(kubectl("get", "serviceaccount", "default", "-n", "team-a", "-o", "json"))
    assert sa["metadata"]["name"] == "default"
    cm = json.loads(kubectl("get", "configmap", "kube-root-ca.crt", "-n", "team-a", "-o", "json"))
    assert cm["data"] == {"ca.crt": cluster.ca_path.read_text()}
    assert "kube-apiserver" in cm["metadata"]["annotations"]["kubernetes.io/description"]
    kubectl("delete", "serviceaccount", "default", "-n", "team-a")
    again = json.loads(kubectl("get", "serviceaccount", "default", "-n", "team-a", "-o", "json"))
    assert again["metadata"]["uid"] != sa["metadata"]["uid"]
    kubectl("patch", "configmap", "kube-root-ca.crt", "-n", "team-a", "-p", '{"data":{"ca.crt":"forged"}}')
    cm = json.loads(kubectl("get", "configmap", "kube-root-ca.crt", "-n", "team-a", "-o", "json"))
    assert cm["data"]["ca.crt"] == cluster.ca_path.read_text()  # the publisher put it back
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert "default" in kubectl("get", "serviceaccounts", "-n", ns, "-o", "name")


def test_a_pod_gets_the_default_serviceaccount_and_the_kube_api_access_volume_unless_it_opts_out(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("run", "plain", "--image=busybox:1.36", "--restart=Never", "--", "sleep", "3600")
    spec = json.loads(kubectl("get", "pod", "plain", "-o", "json"))["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    (vol,) = [v for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
    assert len(vol["name"]) == len("kube-api-access-") + 5
    sources = vol["projected"]["sources"]
    assert sources[0] == {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
    assert sources[1]["configMap"]["name"] == "kube-root-ca.crt"
    assert sources[2]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == "metadata.namespace"
    mounts = spec["containers"][0]["volumeMounts"]
    assert {"name": vol["name"], "readOnly": True, "mountPath": MOUNT} in mounts

    cluster.apply(pod("optout", "sleep 3600", automountServiceAccountToken=False))
    spec = json.loads(kubectl("get", "pod", "optout", "-o", "json"))["spec"]
    assert spec["serviceAccountName"] == "default"
    assert not spec.get("volumes") and not spec["containers"][0].get("volumeMounts")

    # a ServiceAccount that opts out is followed unless the pod says otherwise
    kubectl("create", "serviceaccount", "quiet")
    kubectl("patch", "serviceaccount", "quiet", "-p", '{"automountServiceAccountToken":false}')
    cluster.apply(pod("quiet", "sleep 3600", serviceAccountName="quiet"))
    assert not (cluster.get("Pod", "quiet") or {})["spec"].get("volumes")
    cluster.apply(pod("loud", "sleep 3600", serviceAccountName="quiet", automountServiceAccountToken=True))
    assert (cluster.get("Pod", "loud") or {})["spec"]["volumes"][0]["name"].startswith("kube-api-access-")


def test_a_pod_naming_a_missing_serviceaccount_is_refused_with_the_admission_plugins_403(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    body = json.dumps(pod("orphan", "true", serviceAccountName="ghost"))
    proc = kubectl.run("create", "-f", "-", input=body, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": pods "orphan" is forbidden: '
        'error looking up service account default/ghost: serviceaccount "ghost" not found'
    )
    assert cluster.get("Pod", "orphan") is None


def test_kubectl_inside_a_pod_is_its_serviceaccount_through_10_96_0_1_and_rbac_decides(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "namespace", "ci")
    kubectl("create", "serviceaccount", "reader", "-n", "ci")
    kubectl("create", "role", "pod-reader", "-n", "ci", "--verb=get,list", "--resource=pods")
    kubectl("create", "rolebinding", "reader", "-n", "ci", "--role=pod-reader", "--serviceaccount=ci:reader")
    script = (
        f"cat {MOUNT}/namespace; echo; "
        "echo host=$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT; "
        "/usr/bin/kubectl auth whoami -o jsonpath='{.status.userInfo.username}'; echo; "
        "/usr/bin/kubectl get pods -o name; "
        "/usr/bin/kubectl get secrets 2>&1; echo exit=$?"
    )
    cluster.apply(pod("probe", script, namespace="ci", serviceAccountName="reader"))
    assert finished(cluster, "probe", "ci")["status"]["phase"] == "Succeeded"
    lines = kubectl("logs", "probe", "-n", "ci").splitlines()
    assert lines[:4] == ["ci", "host=10.96.0.1:443", "system:serviceaccount:ci:reader", "pod/probe"]
    assert lines[4] == (
        'Error from server (Forbidden): secrets is forbidden: User "system:serviceaccount:ci:reader" '
        'cannot list resource "secrets" in API group "" in the namespace "ci"'
    )
    assert lines[5] == "exit=1"


def test_the_projected_token_dies_with_its_pod(cluster: Cluster, kubectl: Kubectl) -> None:
    cluster.apply(pod("holder", f"cat {MOUNT}/token; sleep 3600"))
    cluster.wait_for(lambda: bool(kubectl("logs", "holder", check=False)), timeout=60, what="token read")
    token = kubectl("logs", "holder").strip()
    _, claims, _ = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    assert body["sub"] == "system:serviceaccount:default:default"
    assert body["kubernetes.io"]["pod"]["name"] == "holder"
    assert body["exp"] - body["iat"] == 3607
    as_pod = Kubectl(cluster.write_kubeconfig(kubectl.cache / "pod.kubeconfig", token=token), kubectl.cache)
    assert as_pod("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}") == (
        "system:serviceaccount:default:default"
    )
    kubectl("delete", "pod", "holder", "--grace-period=0", "--force")
    cluster.wait_for(lambda: cluster.get("Pod", "holder") is None, timeout=60, what="pod gone")
    proc = as_pod.run("auth", "whoami", check=False)
    assert proc.returncode == 1 and "Unauthorized" in proc.stderr


def test_controllers_record_failed_create_for_a_missing_serviceaccount_and_recover_when_it_appears(
    cluster: Cluster, kubectl: Kubectl, capfd: Any
) -> None:
    web = deployment("web", replicas=2, command=["sleep", "3600"])
    web["spec"]["template"]["spec"]["serviceAccountName"] = "app"
    cluster.apply(web)
    db = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "serviceAccountName": "app",
                    "containers": [{"name": "db", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
                },
            },
        },
    }
    agent = json.loads(json.dumps(db))
    agent.update({"kind": "DaemonSet", "metadata": {"name": "agent"}})
    agent["spec"] = {k: v for k, v in agent["spec"].items() if k not in ("replicas", "serviceName")}
    agent["spec"]["selector"] = {"matchLabels": {"app": "agent"}}
    agent["spec"]["template"]["metadata"]["labels"] = {"app": "agent"}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hook"},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": "app",
                    "restartPolicy": "Never",
                    "containers": [{"name": "hook", "image": "busybox:1.36", "command": ["true"]}],
                }
            }
        },
    }
    for obj in (db, agent, job):
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    why = 'error looking up service account default/app: serviceaccount "app" not found'

    def failed_create(kind: str, name: str) -> list[str]:
        return [e["message"] for e in events(kubectl, kind, name) if e["reason"] == "FailedCreate"]

    rs_name = ""

    def all_refused() -> bool:
        nonlocal rs_name
        rss = cluster.list("ReplicaSet")
        rs_name = rss[0]["metadata"]["name"] if rss else ""
        return bool(
            rs_name
            and failed_create("ReplicaSet", rs_name)
            and failed_create("StatefulSet", "db")
            and failed_create("DaemonSet", "agent")
            and failed_create("Job", "hook")
        )

    cluster.wait_for(all_refused, timeout=60, what="FailedCreate from every controller")
    assert failed_create("ReplicaSet", rs_name)[0] == f'Error creating: pods "{rs_name}-" is forbidden: {why}'
    assert failed_create("StatefulSet", "db")[0] == (
        f'create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: {why}'
    )
    assert failed_create("DaemonSet", "agent")[0] == f'Error creating: pods "agent-" is forbidden: {why}'
    assert failed_create("Job", "hook")[0] == f'Error creating: pods "hook-" is forbidden: {why}'
    rs = json.loads(kubectl("get", "rs", rs_name, "-o", "json"))
    (cond,) = rs["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("ReplicaFailure", "True", "FailedCreate")
    assert cond["message"] == f'pods "{rs_name}-" is forbidden: {why}'
    # the Deployment surfaces it (progress.go syncRolloutStatus)
    cluster.wait_for(
        lambda: "ReplicaFailure" in str((cluster.get("Deployment", "web") or {}).get("status")),
        what="the Deployment's ReplicaFailure",
    )
    dep = json.loads(kubectl("get", "deployment", "web", "-o", "json"))
    (failure,) = [c for c in dep["status"]["conditions"] if c["type"] == "ReplicaFailure"]
    assert (failure["reason"], failure["message"]) == ("FailedCreate", cond["message"])
    assert cluster.list("Pod") == []

    kubectl("create", "serviceaccount", "app")
    cluster.wait_for(lambda: cluster.rollout_complete("web"), timeout=90, what="web after the SA exists")
    cluster.wait_statefulset("db", timeout=90)
    cluster.wait_daemonset("agent", timeout=90)
    kubectl("wait", "--for=condition=complete", "job/hook", "--timeout=90s", timeout=120)
    rs = json.loads(kubectl("get", "rs", rs_name, "-o", "json"))
    assert not rs["status"].get("conditions")  # a sync without error removes ReplicaFailure
    dep = json.loads(kubectl("get", "deployment", "web", "-o", "json"))
    assert [c["type"] for c in dep["status"]["conditions"]] == ["Available", "Progressing"]
    reasons = [e["reason"] for e in events(kubectl, "Job", "hook")]
    assert "SuccessfulCreate" in reasons and "Completed" in reasons
    assert all(p["spec"]["serviceAccountName"] == "app" for p in cluster.list("Pod"))
    assert "Traceback" not in capfd.readouterr().err  # no controller crashed on the refusals


def test_clusterroles_bind_through_a_clusterrolebinding_everywhere_or_a_rolebinding_in_one_namespace(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    for ns in ("ci", "apps", "other"):
        kubectl("create", "namespace", ns)
    kubectl("create", "serviceaccount", "reader", "-n", "ci")
    kubectl("create", "clusterrole", "pod-lister", "--verb=list", "--resource=pods")
    kubectl("create", "clusterrole", "deploy-getter", "--verb=get,list", "--resource=deployments.apps")
    kubectl(
        "create",
        "clusterrolebinding",
        "reader-pods",
        "--clusterrole=pod-lister",
        "--serviceaccount=ci:reader",
    )
    kubectl(
        "create",
        "rolebinding",
        "reader-deploys",
        "-n",
        "apps",
        "--clusterrole=deploy-getter",
        "--serviceaccount=ci:reader",
    )
    roles = kubectl("get", "clusterroles", "-o", "name")
    assert "clusterrole.rbac.authorization.k8s.io/pod-lister" in roles.split()
    as_sa = ["--as=system:serviceaccount:ci:reader"]
    assert kubectl("auth", "can-i", "list", "pods", "-n", "other", *as_sa).strip() == "yes"  # everywhere
    assert kubectl("auth", "can-i", "list", "deployments", "-n", "apps", *as_sa).strip() == "yes"
    no = kubectl.run("auth", "can-i", "list", "deployments", "-n", "other", *as_sa, check=False)
    assert no.stdout.strip() == "no"  # a RoleBinding grants its ClusterRole in its namespace only
    script = "/usr/bin/kubectl get pods -A -o name >/dev/null && echo pods-ok; /usr/bin/kubectl get deploy -n other 2>&1"
    cluster.apply(pod("probe", script, namespace="ci", serviceAccountName="reader"))
    finished(cluster, "probe", "ci")
    lines = kubectl("logs", "probe", "-n", "ci").splitlines()
    assert lines == [
        "pods-ok",
        'Error from server (Forbidden): deployments.apps is forbidden: User "system:serviceaccount:ci:reader" '
        'cannot list resource "deployments" in API group "apps" in the namespace "other"',
    ]
