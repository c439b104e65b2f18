"""A Deployment whose pods the API refuses (here: the ServiceAccount its template names does not
exist, plugin/pkg/admission/serviceaccount/admission.go) has no pod to carry a waiting reason;
the ReplicaSet's ReplicaFailure condition, copied to the Deployment, is the only trace. The
verdict names it instead of a bare "exceeded its progress deadline"."""

from __future__ import annotations

from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify


def test_a_deployment_whose_pods_are_refused_fails_naming_the_apis_reason(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    web = deployment("web", replicas=1, progressDeadlineSeconds=3)
    web["spec"]["template"]["spec"]["serviceAccountName"] = "app"
    cluster.apply(web)
    out = run_verify("--deployment", "web", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    assert 'deployment "web" exceeded its progress deadline; pods cannot be created: pods "web-' in out.stdout
    assert (
        'is forbidden: error looking up service account default/app: serviceaccount "app" not found'
        in out.stdout
    )
    assert cluster.list("Pod") == []
