"""examples/rbac.yaml against kubesim's RBAC: enough for a pass and a restart, and each rule needed.

The Role is applied with the real kubectl and the verifier authenticates with the
ServiceAccount's token, passed as kubeconfig *content* (VERIFY_KUBECONFIG_DATA) as CI would.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kubesim import Cluster
from tests.support.helpers import REPO, Outcome, configmap, deployment, run_verify, secret
from tests.support.kubectl import Kubectl

RBAC = REPO / "examples" / "rbac.yaml"
FLAGS = (
    "--deployment",
    "web",
    "--expect-env",
    "FEATURE_CREDENTIAL",
    "--expect-file",
    "/etc/web/app.conf=configmap:web-config/app.conf",
    "--expect-file",
    "/etc/tls/tls.crt=secret:web-tls/tls.crt",
)


def rbac_docs() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(RBAC.read_text()) if d]


def role(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Role")


def rule_verbs() -> list[tuple[int, str, str]]:
    """(rule index, resource, verb) for every verb the Role grants."""
    return [
        (i, res, verb)
        for i, rule in enumerate(role(rbac_docs())["rules"])
        for res in rule["resources"]
        for verb in rule["verbs"]
    ]


def apply(kubectl: Kubectl, docs: list[dict[str, Any]]) -> None:
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))


def sa_kubeconfig(cluster: Cluster) -> str:
    return cluster.kubeconfig(
        token=cluster.serviceaccount_token("default", "rollout-verify"), user="rollout-verify"
    )


def web_app(cluster: Cluster, *, stale_file: bool) -> None:
    """`web` with env from Secret web-env, Secret web-tls mounted at /etc/tls and web-config's
    app.conf mounted with subPath at /etc/web/app.conf. With `stale_file`, web-config changes after
    the pods started: a subPath mount never receives updates, so every pod keeps the old file until
    a restart, which is judged able to deliver it from web-config (a ConfigMap the Role may read)."""
    cluster.apply(configmap("web-config", {"app.conf": "mode=prod\n"}))
    cluster.apply(secret("web-tls", {"tls.crt": "CERT"}))
    cluster.apply(secret("web-env", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": "on"}))
    cluster.apply(
        deployment(
            "web",
            replicas=2,
            env_from=[{"secretRef": {"name": "web-env"}}],
            volumes=[
                {"name": "conf", "configMap": {"name": "web-config"}},
                {"name": "tls", "secret": {"secretName": "web-tls"}},
            ],
            mounts=[
                {"name": "conf", "mountPath": "/etc/web/app.conf", "subPath": "app.conf"},
                {"name": "tls", "mountPath": "/etc/tls"},
            ],
        )
    )
    cluster.wait_rollout("web")
    if stale_file:
        cluster.apply(configmap("web-config", {"app.conf": "mode=prod-2\n"}))
        cluster.sync_volumes()


def verify_as_sa(cluster: Cluster, tmp_path: Path) -> Outcome:
    return run_verify(
        *FLAGS,
        kubeconfig=str(tmp_path / "no-such-kubeconfig"),
        tmp_path=tmp_path,
        env={"VERIFY_KUBECONFIG_DATA": sa_kubeconfig(cluster)},
    )


def test_rbac_example_passes_a_healthy_rollout(cluster: Cluster, kubectl: Kubectl, tmp_path: Path) -> None:
    apply(kubectl, rbac_docs())
    web_app(cluster, stale_file=False)
    out = verify_as_sa(cluster, tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is False
    assert cluster.requests[("patch", "deployments")] == 0


def test_rbac_example_allows_the_one_restart(cluster: Cluster, kubectl: Kubectl, tmp_path: Path) -> None:
    apply(kubectl, rbac_docs())
    web_app(cluster, stale_file=True)
    out = verify_as_sa(cluster, tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    first, second = out.report["workloads"][0]["attempts"]
    assert {p["status"] for p in first["pods"]} == {"mismatch"}
    assert {p["status"] for p in second["pods"]} == {"ok"}
    assert cluster.requests[("patch", "deployments")] == 1


# What the verifier must say when one verb is missing, and its exit code. kubesim serves
# SelfSubjectAccessReviews, so the preflight names the missing rule as `kubectl auth can-i` asks
# it, before any wait (exit 3, on stderr like the other errors met before a workload is verified).
EXPECTED = {
    ("deployments", "get"): ("`get deployments.apps/web`", 3),
    ("deployments", "watch"): ("`watch deployments.apps/web`", 3),
    ("deployments", "patch"): ("`patch deployments.apps/web`", 3),
    ("replicasets", "list"): ("`list replicasets.apps`", 3),
    ("pods", "list"): ("`list pods`", 3),
    ("pods/exec", "create"): ("`create pods --subresource=exec`", 3),
    ("pods/exec", "get"): ("`get pods --subresource=exec`", 3),
    ("configmaps", "get"): ("`get configmaps/web-config`", 3),
    ("secrets", "get"): ("`get secrets/web-tls`", 3),
}
# every granted verb is checked: kubesim authorises a WebSocket exec as `get` and (1.35's gate)
# `create`
NOT_CHECKED_BY_KUBESIM: set[tuple[str, str]] = set()
# optional rules: without them a run still passes (tests/e2e/test_secretsstore_e2e.py)
OPTIONAL = {
    (res, verb)
    for res in ("secretproviderclasses", "secretproviderclasspodstatuses")
    for verb in ("get", "list")
} | {("events", "list"), ("pods/log", "get")}


def test_every_granted_verb_has_an_expected_failure() -> None:
    granted = {(res, verb) for _, res, verb in rule_verbs()}
    assert granted == set(EXPECTED) | NOT_CHECKED_BY_KUBESIM | OPTIONAL


@pytest.mark.parametrize(
    ("index", "resource", "verb"),
    [r for r in rule_verbs() if (r[1], r[2]) not in NOT_CHECKED_BY_KUBESIM | OPTIONAL],
    ids=[f"{r[1]}-{r[2]}" for r in rule_verbs() if (r[1], r[2]) not in NOT_CHECKED_BY_KUBESIM | OPTIONAL],
)
def test_removing_one_permission_names_it(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path, index: int, resource: str, verb: str
) -> None:
    docs = copy.deepcopy(rbac_docs())
    rules = role(docs)["rules"]
    rules[index]["verbs"] = [v for v in rules[index]["verbs"] if v != verb]
    if not rules[index]["verbs"]:
        del rules[index]
    apply(kubectl, docs)
    web_app(cluster, stale_file=True)  # a restart is needed, so patch and watch are exercised too
    out = verify_as_sa(cluster, tmp_path)
    message, code = EXPECTED[(resource, verb)]
    assert out.code == code, out.everything
    assert f"checked before waiting), in namespace default: {message};" in out.stderr, out.everything
    # (that line names the rule, not the identity lacking it, which the 403s used to name)
