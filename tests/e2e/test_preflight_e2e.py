"""The preflight end to end: before any wait, SelfSubjectAccessReviews for every rule the run needs,
over real HTTP to kubesim, with a ServiceAccount set up by kubectl only (`create serviceaccount`,
`create role`, `create rolebinding`, `create token`), as an operator would."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import (
    REPO,
    Outcome,
    deployment,
    http_app_deployment,
    run_verify,
    since_first_request,
)
from tests.support.kubectl import Kubectl

HOLD = {"rollout-verify.test/hold": "true"}  # a label no node has: the new pods never schedule
SA = "system:serviceaccount:default:rollout-verify"
# what examples/rbac.yaml grants, less pods/exec and the patch: made with kubectl's typed commands
LEAST = [
    ("reader", ["--verb=get,watch", "--resource=deployments.apps"]),
    ("lister", ["--verb=list", "--resource=pods,replicasets.apps"]),
]
MISSING = {"create pods --subresource=exec", "get pods --subresource=exec", "patch deployments.apps/web"}


def least_privilege(kubectl: Kubectl) -> None:
    kubectl("create", "serviceaccount", "rollout-verify")
    for role, flags in LEAST:
        kubectl("create", "role", role, *flags)
        kubectl("create", "rolebinding", role, f"--role={role}", "--serviceaccount=default:rollout-verify")


def token_kubeconfig(cluster: Cluster, kubectl: Kubectl, tmp_path: Path) -> str:
    """A kubeconfig holding a token from `kubectl create token` (a TokenRequest)."""
    token = kubectl("create", "token", "rollout-verify", "--duration=1h")
    return cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token=token, user="rollout-verify")


def stuck_rollout(cluster: Cluster) -> None:
    """`web` rolled out once, then given a template whose pods fit no node: never complete."""
    web = deployment("web", replicas=2, env=[{"name": "FEATURE", "value": "on"}])
    cluster.apply(web)
    cluster.wait_rollout("web")
    web["spec"]["template"]["spec"]["nodeSelector"] = HOLD
    cluster.apply(web)
    cluster.wait_for(
        lambda: any(
            (p["spec"].get("nodeSelector") or {}) == HOLD and p["status"].get("phase") == "Pending"
            for p in cluster.list("Pod")
        ),
        what="a new pod that cannot be scheduled",
    )
    assert not cluster.rollout_complete("web")


def named_rules(out: Outcome) -> set[str]:
    """The rules the preflight's one line names, in backquotes (it is printed on stderr, with the
    other errors met before any workload is verified); the report's message is the same line."""
    (line,) = [ln for ln in (out.stdout + out.stderr).splitlines() if "checked before waiting" in ln]
    assert out.report is not None and out.report["message"] in line
    return set(re.findall(r"`([^`]+)`", line.split("checked before waiting", 1)[1]))


def test_a_least_privilege_token_fails_at_once_naming_every_missing_rule(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    least_privilege(kubectl)
    kc = token_kubeconfig(cluster, kubectl, tmp_path)
    stuck_rollout(cluster)
    cluster.reset_counts()
    cluster.mark()
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path)
    took = since_first_request(cluster)
    assert out.code == 3, out.everything
    # at once: the stuck rollout is never waited for (--timeout is 10m); seconds even on a loaded machine
    assert took < 5.0, f"the preflight took {took:.2f}s"
    assert named_rules(out) == MISSING, out.everything
    assert "in namespace default: `" in out.report["message"]
    # nothing waited on, nothing exec'd, nothing restarted: only reads and the reviews
    assert cluster.requests[("watch", "deployments")] == 0
    assert cluster.requests[("patch", "deployments")] == 0
    assert cluster.requests[("create", "pods/exec")] + cluster.requests[("get", "pods/exec")] == 0
    assert cluster.requests[("create", "selfsubjectaccessreviews")] >= len(MISSING)
    # kubectl, asked each rule as the product phrases it, agrees with the verdict
    sa = Kubectl(kc, tmp_path)
    for rule in MISSING:
        proc = sa.run("auth", "can-i", *rule.split(), check=False)
        assert (proc.returncode, proc.stdout.strip()) == (1, "no"), rule
    for granted in (
        "get deployments.apps/web",
        "watch deployments.apps/web",
        "list pods",
        "list replicasets.apps",
    ):
        assert sa("auth", "can-i", *granted.split()).strip() == "yes", granted
    assert sa("auth", "whoami").splitlines()[1].split() == ["Username", SA]


def test_only_the_patch_missing_is_named_and_restart_never_passes_the_preflight(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    least_privilege(kubectl)
    kubectl("create", "role", "exec", "--verb=create,get", "--resource=pods/exec")
    kubectl("create", "rolebinding", "exec", "--role=exec", "--serviceaccount=default:rollout-verify")
    kc = token_kubeconfig(cluster, kubectl, tmp_path)
    cluster.apply(deployment("web", replicas=2, env=[{"name": "FEATURE", "value": "on"}]))
    cluster.wait_rollout("web")
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    assert named_rules(out) == {"patch deployments.apps/web"}
    assert cluster.requests[("watch", "deployments")] == 0
    # the line's own advice: without the restart, the patch is not needed, and the run verifies
    out = run_verify("--deployment", "web", "--restart", "never", kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert cluster.requests[("patch", "deployments")] == 0


def test_with_the_example_role_the_preflight_passes_and_the_run_verifies(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    docs = [d for d in yaml.safe_load_all((REPO / "examples" / "rbac.yaml").read_text()) if d]
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    kc = token_kubeconfig(cluster, kubectl, tmp_path)
    cluster.apply(deployment("web", replicas=2, env=[{"name": "FEATURE", "value": "on"}]))
    cluster.wait_rollout("web")
    cluster.reset_counts()
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert "forbidden" not in out.everything
    assert out.report is not None and out.report["restarted"] is False
    reviews = cluster.requests[("create", "selfsubjectaccessreviews")]
    assert reviews >= 5  # the preflight ran, every review allowed, then the run went on
    assert cluster.requests[("create", "pods/exec")] + cluster.requests[("get", "pods/exec")] >= 2


def test_where_the_review_api_is_not_served_the_run_goes_on_and_the_request_names_the_rule(
    tmp_path: Path,
) -> None:
    knobs = Knobs(sync_period=1.0, access_reviews=False)
    with Cluster(nodes=2, knobs=knobs, root=str(tmp_path / "sim")) as cluster:
        (tmp_path / "home").mkdir()
        kubectl = Kubectl(cluster.write_kubeconfig(tmp_path / "admin.kubeconfig"), tmp_path / "home")
        least_privilege(kubectl)
        kc = token_kubeconfig(cluster, kubectl, tmp_path)
        cluster.apply(deployment("web", replicas=1, env=[{"name": "FEATURE", "value": "on"}]))
        cluster.wait_rollout("web")
        out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path)
        assert cluster.requests[("create", "selfsubjectaccessreviews")] >= 1  # asked, got 404
        assert "checked before waiting" not in out.everything  # then went on as before
        # the exec's own 403 names the rule (a WebSocket exec is `get pods/exec` first)
        assert out.code == 1, out.everything
        assert "missing RBAC rule `get pods/exec`" in out.stderr
        assert SA in out.stderr
        assert cluster.requests[("patch", "deployments")] == 0


def test_an_http_only_run_is_not_refused_for_exec_rules_it_never_uses(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    least_privilege(kubectl)
    kubectl("create", "role", "proxy", "--verb=get", "--resource=pods/proxy")
    kubectl("create", "rolebinding", "proxy", "--role=proxy", "--serviceaccount=default:rollout-verify")
    kc = token_kubeconfig(cluster, kubectl, tmp_path)
    cluster.apply(http_app_deployment("web", replicas=1))
    cluster.wait_rollout("web")
    flags = ("--deployment", "web", "--no-from-spec", "--expect-http", "8080/health", "--restart", "never")
    out = run_verify(*flags, kubeconfig=kc, tmp_path=tmp_path)
    assert cluster.requests[("create", "pods/exec")] + cluster.requests[("get", "pods/exec")] == 0
    assert out.code == 0, out.everything


def _shop(cluster: Cluster, names: list[str]) -> None:
    for name in names:
        web = deployment(name, replicas=1, env=[{"name": "FEATURE", "value": "on"}])
        web["metadata"]["labels"] = {"part-of": "shop"}
        cluster.apply(web)
    for name in names:
        cluster.wait_rollout(name)


def test_a_kind_is_reviewed_once_for_many_workloads_and_by_name_only_where_rbac_lists_names(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    names = [f"w{i}" for i in range(6)]
    _shop(cluster, names)
    kubectl("create", "serviceaccount", "rollout-verify")
    grants = [
        ("finder", ["--verb=list", "--resource=deployments.apps,statefulsets.apps,daemonsets.apps"]),
        ("lister", ["--verb=list", "--resource=pods,replicasets.apps"]),
        ("exec", ["--verb=create,get", "--resource=pods/exec"]),
        # RBAC by resourceNames: every workload but w5
        ("named", ["--verb=get,watch,patch", "--resource=deployments.apps", *(f"--resource-name={n}" for n in names[:5])]),
    ]
    for role, flags in grants:
        kubectl("create", "role", role, *flags)
        kubectl("create", "rolebinding", role, f"--role={role}", "--serviceaccount=default:rollout-verify")
    kc = token_kubeconfig(cluster, kubectl, tmp_path)
    args = ("--selector", "part-of=shop", "--expect-env", "FEATURE")
    out = run_verify(*args, kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    # the kind was denied without a name, so each name was asked: only w5's are missing
    assert named_rules(out) == {f"{verb} deployments.apps/w5" for verb in ("get", "watch", "patch")}

    kubectl("create", "role", "all", "--verb=get,watch,patch", "--resource=deployments.apps")
    kubectl("create", "rolebinding", "all", "--role=all", "--serviceaccount=default:rollout-verify")
    cluster.reset_counts()
    out = run_verify(*args, kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    # get, watch and patch deployments asked once each without a name, not once per workload,
    # plus list pods, list replicasets and the two exec verbs
    assert cluster.requests[("create", "selfsubjectaccessreviews")] == 7
