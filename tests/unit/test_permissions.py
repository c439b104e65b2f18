"""The rules a run needs, phrased as `kubectl auth can-i` asks them."""

from __future__ import annotations

from verify.config.job import TargetPlan
from verify.flow.permissions import needed
from verify.kube.access import Rule
from verify.model import FileSpec, HttpExpectation, WorkloadRef


def plan(kind: str = "deployment", **kw: object) -> TargetPlan:
    base: dict[str, object] = {
        "ref": WorkloadRef(kind=kind, name="web"),  # type: ignore[arg-type]
        "namespace": None,
        "containers": (),
        "expect_env": ("A",),
        "expect_file": (),
        "expect_http": (),
        "from_spec": False,
        "restart": "once",
    }
    return TargetPlan(**{**base, **kw})  # type: ignore[arg-type]


def test_rules_are_phrased_as_kubectl_auth_can_i_asks_them() -> None:
    assert Rule("create", "pods", subresource="exec").phrase() == "create pods --subresource=exec"
    assert Rule("patch", "deployments", "apps", name="web").phrase() == "patch deployments.apps/web"
    assert Rule("list", "pods").phrase() == "list pods"


def test_a_deployment_needs_its_reads_the_execs_and_the_one_patch() -> None:
    phrases = {r.phrase() for r in needed(plan=plan(), workload=None, restart=True)}
    assert phrases == {
        "get deployments.apps/web",
        "watch deployments.apps/web",
        "list pods",
        "list replicasets.apps",
        "get pods --subresource=exec",
        "create pods --subresource=exec",
        "patch deployments.apps/web",
    }
    assert "patch deployments.apps/web" not in {
        r.phrase() for r in needed(plan=plan(), workload=None, restart=False)
    }


def test_sources_http_checks_and_daemonset_revisions_add_their_rules() -> None:
    files = (FileSpec(path="/etc/a", source="secret", name="tls", key="crt"),)
    http = (HttpExpectation(port=8080, path="/config", field="v", equals_configmap="web-config/v"),)
    workload = {"spec": {"template": {"spec": {"volumes": [{"name": "c", "configMap": {"name": "extra"}}]}}}}
    rules = needed(
        plan=plan("daemonset", expect_file=files, expect_http=http, from_spec=True),
        workload=workload,
        restart=False,
    )
    phrases = {r.phrase() for r in rules}
    assert {"get secrets/tls", "get configmaps/web-config", "get configmaps/extra"} <= phrases
    assert {
        "get pods --subresource=proxy",
        "list controllerrevisions.apps",
        "watch daemonsets.apps/web",
    } <= phrases
