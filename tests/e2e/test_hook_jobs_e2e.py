"""rollout-verify run the way in-cluster hooks run it: the Argo CD PostSync Job
(examples/argocd/postsync-job.yaml) and the Helm test Job (examples/helm), applied with the real
kubectl beside a workload, their pod the rollout-verify image (kubesim runs this checkout's
package as it), credentials only what Kubernetes mounts for the Job's ServiceAccount (token,
ca.crt, namespace; the API server at 10.96.0.1:443). The Job's outcome is the hook's verdict:
Complete when the rollout delivered its configuration (after the one restart), Failed with the
diagnosis in its logs when no restart can."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.kubesim import Cluster
from tests.support.helmtemplate import render
from tests.support.helpers import REPO, cache_keepers, deployment, secret, seen
from tests.support.kubectl import Kubectl

ARGOCD = REPO / "examples" / "argocd" / "postsync-job.yaml"
CHART = REPO / "examples" / "helm"
MANIFESTS = REPO / "tests" / "manifests"
PLANTED = "hook-planted-credential-9d2e"


def seed_two(cluster: Cluster, kubectl: Kubectl) -> None:
    """The second seed: the Secret got FEATURE_CREDENTIAL after the pods started; one pod was
    replaced since and has it, the other (green, Ready) has not."""
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-secrets"}}]))
    cluster.wait_rollout("web")
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    first = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))[0]
    kubectl("delete", "pod", first)
    cluster.wait_rollout("web")


def immutable_recreated(cluster: Cluster, kubectl: Kubectl) -> None:
    """An immutable ConfigMap deleted and recreated with new content: every node's kubelet keeps
    serving its cached copy, so no restart can deliver the new one."""
    kubectl("create", "-f", str(MANIFESTS / "cm-test.yaml"))
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=90s", timeout=120)
    cache_keepers(cluster, "testcm", ["node-1", "node-2", "node-3"])
    kubectl("delete", "cm", "testcm")
    kubectl(
        "apply", "-f", "-", input=(MANIFESTS / "cm-test.yaml").read_text().replace("content7", "content8")
    )
    kubectl("rollout", "restart", "deployment", "cm-test")
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=90s", timeout=120)


ARGS = {
    "seed-two": ["--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", "--timeout", "10m"],
    "immutable": ["--deployment", "cm-test", "--expect-file", "/cm/script.py=configmap:testcm/script.py"],
}


def hook_docs(hook: str, state: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the release's resources, the hook Job) as the example gives them for this state: the
    Argo CD file as shipped for the second seed, else with its `args` and the Role's named
    object edited as its comments say; the Helm chart rendered with values for the state."""
    if hook == "helm":
        names = {"secrets": ["web-secrets"], "configMaps": []}
        if state == "immutable":
            names = {"secrets": [], "configMaps": ["testcm"]}
        values = {"rolloutVerify": {"args": ARGS[state], **names}}
        text = render(CHART, release="web", namespace="default", values=values)
        docs = [d for d in yaml.safe_load_all(text) if d]
        job = next(d for d in docs if d["kind"] == "Job")
        assert job["metadata"]["annotations"]["helm.sh/hook"] == "test"
    else:
        docs = [d for d in yaml.safe_load_all(ARGOCD.read_text()) if d]
        job = next(d for d in docs if d["kind"] == "Job")
        assert job["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "PostSync"
        assert job["spec"]["template"]["spec"]["containers"][0]["args"] == ARGS["seed-two"]
        if state == "immutable":
            job["spec"]["template"]["spec"]["containers"][0]["args"] = ARGS[state]
            role = next(d for d in docs if d["kind"] == "Role")
            (named,) = [r for r in role["rules"] if r.get("resourceNames")]
            named.update({"resources": ["configmaps"], "resourceNames": ["testcm"]})
    return [d for d in docs if d is not job], job


def outcome(kubectl: Kubectl, job: str) -> tuple[str, dict[str, Any], str]:
    """Wait for the Job to finish: (Complete | Failed, its status, its pod's logs)."""
    kubectl(
        "wait", f"job/{job}", "--for=jsonpath={.status.conditions[-1].status}=True", "--timeout=300s",
        timeout=330,
    )  # fmt: skip
    status = json.loads(kubectl("get", "job", job, "-o", "json"))["status"]
    logs = kubectl("logs", f"job/{job}")
    seen(logs)  # the leak guard reads them: no secret value, no token, no traceback
    return status["conditions"][-1]["type"], status, logs


@pytest.mark.parametrize("hook", ["argocd", "helm"])
def test_the_hook_job_verifies_in_cluster_restarts_once_and_completes(
    cluster: Cluster, kubectl: Kubectl, hook: str
) -> None:
    seed_two(cluster, kubectl)
    before = {p["metadata"]["name"] for p in cluster.list("Pod")}
    release, job = hook_docs(hook, "seed-two")
    if hook == "argocd":  # the file as shipped: Argo CD syncs it, the Job last (a hook)
        kubectl("apply", "-f", str(ARGOCD))
    else:  # `helm install` creates the release's resources; `helm test` then the hook Job
        kubectl("apply", "-f", "-", input=yaml.safe_dump_all(release))
        kubectl("apply", "-f", "-", input=yaml.safe_dump(job))

    verdict, status, logs = outcome(kubectl, job["metadata"]["name"])
    assert verdict == "Complete", logs
    assert status["succeeded"] == 1 and not status.get("failed")
    assert "lacks env FEATURE_CREDENTIAL" in logs
    assert "PASSED deployment web: 2 pods verified after 1 restart" in logs
    assert PLANTED not in logs
    web = json.loads(kubectl("get", "deployment", "web", "-o", "json"))
    assert "kubectl.kubernetes.io/restartedAt" in web["spec"]["template"]["metadata"]["annotations"]
    sa = job["spec"]["template"]["spec"]["serviceAccountName"]
    (hook_pod,) = [
        p for p in cluster.list("Pod") if p["metadata"].get("generateName") == f"{job['metadata']['name']}-"
    ]
    assert hook_pod["spec"]["serviceAccountName"] == sa
    assert any(v["name"].startswith("kube-api-access-") for v in hook_pod["spec"]["volumes"])
    assert not any(
        e["name"].startswith("KUBECONFIG") for e in hook_pod["spec"]["containers"][0].get("env") or []
    )
    # the restart really happened: every app pod is new (an old one may still be Terminating: its
    # sleep, as PID 1, ignores SIGTERM until the 1 s grace period is over)
    assert not before & {
        p["metadata"]["name"]
        for p in cluster.list("Pod")
        if p["metadata"]["name"].startswith("web-") and not p["metadata"].get("deletionTimestamp")
    }


@pytest.mark.parametrize("hook", ["argocd", "helm"])
def test_the_hook_job_fails_with_the_diagnosis_when_no_restart_can_fix_it(
    cluster: Cluster, kubectl: Kubectl, hook: str
) -> None:
    immutable_recreated(cluster, kubectl)
    release, job = hook_docs(hook, "immutable")
    role = next(d for d in release if d["kind"] == "Role")
    assert not any(r["resources"] == ["secrets"] for r in role["rules"])  # none asked, none granted
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(release))
    kubectl("apply", "-f", "-", input=yaml.safe_dump(job))

    verdict, status, logs = outcome(kubectl, job["metadata"]["name"])
    assert verdict == "Failed", logs
    assert status["failed"] == 1 and not status.get("succeeded")
    assert status["conditions"][-1]["reason"] == "BackoffLimitExceeded"
    assert "configmap testcm is immutable and was recreated" in logs
    assert "a restart will not help; publish new content under a new name" in logs
    assert "FAILED deployment cm-test: 7 of 7 pods failed: container test file /cm/script.py differs" in logs
    assert "file /cm/script.py differs from configmap testcm/script.py" in logs
    assert "restarting" not in logs
    cm_test = json.loads(kubectl("get", "deployment", "cm-test", "-o", "json"))
    assert cm_test["metadata"]["generation"] == 2  # only the test's own rollout restart: none from the hook


def test_a_hook_pod_without_its_serviceaccount_token_says_what_to_mount(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    release, job = hook_docs("argocd", "seed-two")
    job["spec"]["template"]["spec"]["automountServiceAccountToken"] = False
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(release))
    kubectl("apply", "-f", "-", input=yaml.safe_dump(job))

    verdict, status, logs = outcome(kubectl, "rollout-verify")
    assert verdict == "Failed" and status["failed"] == 1
    (line,) = logs.splitlines()  # exit 2, one line, before any call to the cluster
    # uid 65532 has no passwd entry in the image: HOME is /, as under a container runtime
    assert line.startswith(
        'rollout-verify: error: the default kubeconfig: file "/.kube/config" does not exist'
    )
    assert line.endswith(
        "or, in this pod, mount its ServiceAccount's token (/var/run/secrets/kubernetes.io/serviceaccount/token"
        " is missing: automountServiceAccountToken is false on the pod or its ServiceAccount)"
    )
    (pod,) = [p for p in cluster.list("Pod") if p["metadata"].get("generateName") == "rollout-verify-"]
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 2
