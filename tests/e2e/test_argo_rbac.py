"""examples/argo/rbac.yaml on kubesim, applied with the real kubectl: the step's pod runs as a
ServiceAccount of the workflow's namespace (`argo`) and verifies the app's (`shop`) with exactly
the rules the file lists there; the rule Argo's executor needs (WorkflowTaskResults, Argo >= 3.4)
is granted in the workflow's namespace and nowhere else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from kubernetes import config as k8s_config

from tests.e2e.test_rbac import FLAGS
from tests.kubesim import Cluster
from tests.support.helpers import REPO, configmap, deployment, run_verify, secret
from tests.support.kubectl import Kubectl

ARGO_RBAC = REPO / "examples" / "argo" / "rbac.yaml"
WORKFLOWS, APP = "argo", "shop"


def docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def find(kind: str, name: str) -> dict[str, Any]:
    (doc,) = [d for d in docs(ARGO_RBAC) if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def test_the_app_namespace_gets_exactly_the_steps_rules_and_the_workflow_namespace_the_executors() -> None:
    (single_role,) = [d for d in docs(REPO / "examples" / "rbac.yaml") if d["kind"] == "Role"]
    app_role = find("Role", "rollout-verify")
    assert app_role["metadata"]["namespace"] == APP
    assert app_role["rules"] == single_role["rules"]  # one list of the step's rules, kept equal
    executor = find("Role", "rollout-verify-executor")
    assert executor["metadata"]["namespace"] == WORKFLOWS
    assert executor["rules"] == [
        {"apiGroups": ["argoproj.io"], "resources": ["workflowtaskresults"], "verbs": ["create", "patch"]}
    ]
    sa = find("ServiceAccount", "rollout-verify")
    assert sa["metadata"]["namespace"] == WORKFLOWS
    for binding in (find("RoleBinding", "rollout-verify"), find("RoleBinding", "rollout-verify-executor")):
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "rollout-verify", "namespace": WORKFLOWS}
        ]


def shop_app(cluster: Cluster) -> None:
    """tests/e2e/test_rbac.py's `web` in namespace shop, its subPath file changed after start:
    one restart is needed, so every rule (patch and watch too) is exercised."""
    objects = [
        configmap("web-config", {"app.conf": "mode=prod\n"}),
        secret("web-tls", {"tls.crt": "CERT"}),
        secret("web-env", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": "on"}),
        deployment(
            "web", replicas=2, env_from=[{"secretRef": {"name": "web-env"}}],
            volumes=[{"name": "conf", "configMap": {"name": "web-config"}}, {"name": "tls", "secret": {"secretName": "web-tls"}}],
            mounts=[{"name": "conf", "mountPath": "/etc/web/app.conf", "subPath": "app.conf"}, {"name": "tls", "mountPath": "/etc/tls"}],
        ),
    ]  # fmt: skip
    for obj in objects:
        obj["metadata"]["namespace"] = APP
        cluster.apply(obj)
    cluster.wait_rollout("web", namespace=APP)
    stale = configmap("web-config", {"app.conf": "mode=prod-2\n"})
    stale["metadata"]["namespace"] = APP
    cluster.apply(stale)
    cluster.sync_volumes()


def test_the_step_verifies_the_app_namespace_as_the_workflows_serviceaccount(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    for ns in (WORKFLOWS, APP):
        kubectl("create", "namespace", ns)
    kubectl("apply", "-f", str(ARGO_RBAC))
    shop_app(cluster)
    token = cluster.serviceaccount_token(WORKFLOWS, "rollout-verify")
    # as in the pod: the default namespace is the ServiceAccount's own
    sa_config = cluster.kubeconfig(token=token, user="rollout-verify", namespace=WORKFLOWS)
    env = {"VERIFY_KUBECONFIG_DATA": sa_config}
    unused = str(tmp_path / "no-such-kubeconfig")

    # without `namespace`, the step looks in the workflow's namespace, where it may read nothing
    out = run_verify(*FLAGS, kubeconfig=unused, tmp_path=tmp_path, env=env)
    assert out.code == 3, out.everything
    assert f"(checked before waiting), in namespace {WORKFLOWS}: " in out.stderr, out.everything
    assert "`get deployments.apps/web`" in out.stderr

    out = run_verify(*FLAGS, "--namespace", APP, kubeconfig=unused, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    assert cluster.requests[("patch", "deployments")] == 1

    # What Argo's executor (the pod's `wait` container, same ServiceAccount) may do, asked of the
    # API server with that token as a SelfSubjectAccessReview, through the official client.
    # (`kubectl auth can-i` cannot ask it here: without Argo's CRD installed, its RESTMapper does
    # not resolve the group and it sends `workflowtaskresults.argoproj.io` as a core resource, as
    # it would on a real cluster without Argo.)
    (tmp_path / "sa.kubeconfig").write_text(sa_config)
    reviews = client.AuthorizationV1Api(
        k8s_config.new_client_from_config(config_file=str(tmp_path / "sa.kubeconfig"))
    )

    def allowed(verb: str, group: str, resource: str, ns: str) -> bool:
        attributes = client.V1ResourceAttributes(namespace=ns, verb=verb, group=group, resource=resource)
        review = client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attributes)
        )
        return bool(reviews.create_self_subject_access_review(review).status.allowed)

    assert allowed("create", "argoproj.io", "workflowtaskresults", WORKFLOWS)
    assert allowed("patch", "argoproj.io", "workflowtaskresults", WORKFLOWS)
    assert not allowed("create", "argoproj.io", "workflowtaskresults", APP)
    assert not allowed("list", "", "pods", WORKFLOWS)  # none of the step's rules where the workflow runs
    assert allowed("list", "", "pods", APP)


def test_kubectl_refuses_a_planted_mistake_in_the_rbac_file(kubectl: Kubectl) -> None:
    """The RBAC files are judged by the API server as kubectl applies them (strict field
    validation): a misspelt field is refused, so the test above shows the file as written."""
    for ns in (WORKFLOWS, APP):
        kubectl("create", "namespace", ns)
    broken = docs(ARGO_RBAC)
    executor = next(
        d for d in broken if d["metadata"]["name"] == "rollout-verify-executor" and d["kind"] == "Role"
    )
    executor["rules"][0]["verb"] = executor["rules"][0].pop("verbs")
    done = kubectl.run("apply", "-f", "-", input=yaml.safe_dump_all(broken), check=False)
    assert done.returncode != 0
    assert 'unknown field "rules[0].verb"' in done.stderr, done.stderr
    assert kubectl.run("apply", "-f", str(ARGO_RBAC), "--dry-run=server", check=False).returncode == 0
