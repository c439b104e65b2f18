"""Several workloads in one run, --selector, --config files and the restart record, end to end
through the real CLI against kubesim."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.kubesim import Cluster, Fault, Rule
from tests.support.helpers import configmap, deployment, restarts_meet_a_late_sync, run_verify, secret
from tests.support.kubectl import Kubectl

PLANTED = "s3cr3t-multi-planted-9c1e"


def patches(cluster: Cluster, resource: str = "deployments") -> int:
    return cluster.requests[("patch", resource)]


def stale_pod(cluster: Cluster, kubectl: Kubectl, name: str, secret_name: str) -> None:
    """The second seed: the Secret gains FEATURE_CREDENTIAL after the pods started, then one pod
    is replaced and sees it, the other keeps its old environment."""
    cluster.apply(secret(secret_name, {"DB_URL": "postgres://x"}))
    cluster.apply(deployment(name, replicas=2, env_from=[{"secretRef": {"name": secret_name}}]))
    cluster.wait_rollout(name)
    cluster.apply(secret(secret_name, {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    pods = sorted(
        p["metadata"]["name"] for p in cluster.list("Pod") if p["metadata"]["name"].startswith(f"{name}-")
    )
    kubectl("delete", "pod", pods[0])
    cluster.wait_rollout(name)


def fixable_stale_key(cluster: Cluster, name: str = "web") -> None:
    """The second seed, every pod stale: the Secret gains FEATURE_CREDENTIAL after the pods started.
    A restart can add it (the Secret now provides it): judged fixable, one restart heals it."""
    cluster.apply(secret(f"{name}-secrets", {"DB_URL": "postgres://x"}))
    cluster.apply(deployment(name, replicas=1, env_from=[{"secretRef": {"name": f"{name}-secrets"}}]))
    cluster.wait_rollout(name)
    cluster.apply(secret(f"{name}-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))


RECORD = re.compile(r"revision=(?P<hash>[a-z0-9]+);next=(?P<next>\d+);sources=scrypt:(?P<salt>[0-9a-f]{32}):(?P<digest>[0-9a-f]{32});by=(?P<by>[0-9a-f]{8})")


def record_of(cluster: Cluster, name: str = "web") -> re.Match[str]:
    dep = cluster.get("Deployment", name) or {}
    found = RECORD.fullmatch(dep["metadata"]["annotations"]["rollout-verify.io/restarted-for"])
    assert found is not None
    return found


def test_one_failing_workload_fails_the_run_and_the_report_shows_every_workload(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(secret("api-secrets", {"FEATURE_CREDENTIAL": PLANTED}))
    cluster.apply(deployment("api", replicas=2, env_from=[{"secretRef": {"name": "api-secrets"}}]))
    stale_pod(cluster, kubectl, "web", "web-secrets")
    cluster.wait_rollout("api")
    cluster.reset_counts()

    out = run_verify(
        "--target",
        "deployment/api",
        "--target",
        "deploy/web",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    assert out.report is not None and out.report["result"] == "failed"
    by_name = {w["name"]: w for w in out.report["workloads"]}
    assert set(by_name) == {"api", "web"}
    assert (by_name["api"]["result"], by_name["web"]["result"]) == ("passed", "failed")
    # what failed leads the verdict: `FAILED deployment api: 2 pods verified; …` read as a pass
    assert out.stdout.splitlines()[-1] == (
        "rollout-verify: FAILED deployment web: 1 of 2 pods failed: container app lacks env FEATURE_CREDENTIAL; "
        "deployment api: 2 pods verified"
    )
    assert "deployment web: pod web-" in out.stderr and "lacks env FEATURE_CREDENTIAL" in out.stderr
    assert out.junit.count("<testsuite ") == 2
    assert patches(cluster) == 0
    assert PLANTED not in out.everything


def test_each_workload_gets_its_own_restart_and_both_then_pass(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    stale_pod(cluster, kubectl, "web", "web-secrets")
    stale_pod(cluster, kubectl, "worker", "worker-secrets")
    cluster.reset_counts()

    out = run_verify(
        "--target",
        "deployment/web,deployment/worker",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    assert [w["restarted"] for w in out.report["workloads"]] == [True, True]
    assert patches(cluster) == 2  # once each
    assert PLANTED not in out.everything


def test_selector_verifies_every_labelled_workload_and_only_those(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    for name, part_of in (("shop-web", "shop"), ("shop-api", "shop"), ("blog", "blog")):
        dep = deployment(name, replicas=1)
        dep["metadata"]["labels"] = {"app.kubernetes.io/part-of": part_of}
        cluster.apply(dep)
    out = run_verify(
        "--selector",
        "app.kubernetes.io/part-of=shop",
        "--expect-env",
        "PATH",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    assert out.report is not None
    assert sorted(w["name"] for w in out.report["workloads"]) == ["shop-api", "shop-web"]


def test_selector_matching_nothing_exits_3(cluster: Cluster, kubeconfig: str, tmp_path: Path) -> None:
    out = run_verify("--selector", "app=none", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    assert "--selector app=none matches no deployments, statefulsets, daemonsets in namespace default" in (
        out.stdout + out.stderr
    )


def test_config_file_gives_each_target_its_own_expectations(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("api-secrets", {"API_KEY": PLANTED}))
    cluster.apply(deployment("api", replicas=1, env_from=[{"secretRef": {"name": "api-secrets"}}]))
    cluster.apply(deployment("web", replicas=2))
    config = tmp_path / "verify.yaml"
    config.write_text(
        "targets:\n"
        "  - target: deployment/api\n"
        "    expect-env: [API_KEY]\n"
        "  - target: deployment/web\n"
        "    from-spec: false\n"
        "    expect-env: PATH,HOSTNAME\n"
    )
    out = run_verify("--config", str(config), kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None
    checks = {
        w["name"]: {c["target"] for c in w["attempts"][0]["pods"][0]["containers"][0]["checks"]}
        for w in out.report["workloads"]
    }
    assert checks == {"api": {"API_KEY"}, "web": {"PATH", "HOSTNAME"}}
    assert PLANTED not in out.everything


def test_config_file_error_names_file_line_and_field_and_sends_nothing(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    config = tmp_path / "verify.yaml"
    config.write_text(
        "targets:\n"
        "  - target: deployment/api\n"
        "    expect-env: [API_KEY]\n"
        "  - target: daemonset/agent\n"
        "    expect-env:\n"
        "      - GOOD\n"
        "      - 1BAD\n"
    )
    cluster.reset_counts()
    out = run_verify("--config", str(config), kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 2, out.everything
    errors = [line for line in out.stderr.splitlines() if line.startswith("rollout-verify: error:")]
    assert errors == [
        f'rollout-verify: error: --config: {config}:5: targets[1] (daemonset/agent): expect-env: "1BAD" '
        "is not an env var name; use letters, digits and _ (not starting with a digit), names only, "
        "no values (VERIFY_CONFIG)"
    ]
    assert cluster.requests.total() == 0


def test_config_file_unknown_key_and_bad_target_point_at_their_lines(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    config = tmp_path / "verify.yaml"
    config.write_text("targets:\n  - target: deployment/api\n    expect-envs: [A]\n    colour: x\n")
    out = run_verify("--config", str(config), kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 2
    said = f'{config}:3: targets[0] (deployment/api): unknown key "expect-envs"; did you mean expect-env?'
    assert said in out.stderr
    assert f'{config}:4: targets[0] (deployment/api): unknown key "colour"; use containers, ' in out.stderr
    config.write_text("targets:\n  - target: cronjob/nightly\n")
    out = run_verify("--config", str(config), kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 2
    assert f'{config}:2: targets[0] (cronjob/nightly): target: "cronjob" is not a workload kind' in out.stderr
    config.write_text("targets:\n  - target: [deployment\n")
    out = run_verify("--config", str(config), kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 2 and f"{config}:3: " in out.stderr and "fix the YAML syntax" in out.stderr
    assert cluster.requests.total() == 0


def test_a_revision_is_restarted_once_whatever_scales_or_touches_it_and_new_content_is_a_new_one(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    fixable_stale_key(cluster)
    inspected = {rs["metadata"]["labels"]["pod-template-hash"] for rs in cluster.list("ReplicaSet")}
    # the restart meets a sync that takes the key away: judged fixable, and still stale after it
    put_back = restarts_meet_a_late_sync(cluster, secret_name="web-secrets", key="FEATURE_CREDENTIAL")
    cluster.reset_counts()
    args = ("--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", "--timeout", "60s")

    first = run_verify(*args, kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert first.code == 1, first.everything
    assert "after 1 restart" in first.stdout
    # the revision this run's restart made is never said to be an earlier run's
    assert "earlier run" not in first.everything
    assert patches(cluster) == 1
    # the record names the revision restarted (its pod-template-hash) and the one its restart made
    # (revision 2), with the sources' salted digest and the run; it is never printed
    record = record_of(cluster)
    assert {record["hash"]} == inspected and record["next"] == "2"
    assert record["digest"] not in first.everything and record["salt"] not in first.everything
    put_back()  # the Secret's content as it was when the restart was decided

    # an HPA scales the Deployment (its generation moves), a controller labels and annotates the
    # Secret (its resourceVersion moves): the same revision, not restarted again
    touches = (
        ("scale", "deployment/web", "--replicas=2"),
        ("label", "secret", "web-secrets", "app.kubernetes.io/managed-by=external-secrets"),
        ("annotate", "secret", "web-secrets", "reconcile.external-secrets.io/data-hash=9f2c"),
    )
    for touch in touches:
        kubectl(*touch)
        cluster.wait_rollout("web")
        retried = run_verify(*args, kubeconfig=kubeconfig, tmp_path=tmp_path)
        assert retried.code == 1, retried.everything
        assert patches(cluster) == 1, touch  # no second restart for the same revision
        # the record names the revision the first run's restart made: that run restarted the one
        # before, so this one is said to be its restart, not to have been restarted
        at = (cluster.get("Deployment", "web") or {})["metadata"]["annotations"]["rollout-verify.io/restarted-at"]
        assert (
            f"deployment web: this revision is an earlier run's restart ({at}); it will not be restarted again"
        ) in retried.stderr
        assert "already restarted this revision" not in retried.everything
        assert retried.report is not None
        (wl,) = retried.report["workloads"]
        assert wl["restarted"] is False and wl["restarted_by_earlier_run"]
        assert "(an earlier run's restart covers this revision; not restarted again)" in retried.stdout
        assert record["digest"] not in retried.everything

    # new content in the Secret is a new revision to verify: its own single restart
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://y", "FEATURE_CREDENTIAL": PLANTED}))
    again = run_verify(*args, kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert again.code == 1, again.everything
    assert patches(cluster) == 2
    assert again.report is not None and again.report["restarted"] is True
    assert record_of(cluster)["next"] == "3"


def test_restart_record_is_one_patch_with_the_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    fixable_stale_key(cluster)
    cluster.reset_counts()
    out = run_verify(
        "--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 0, out.everything
    dep = cluster.get("Deployment", "web") or {}
    record_at = dep["metadata"]["annotations"]["rollout-verify.io/restarted-at"]
    restarted_at = dep["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
    assert record_at == restarted_at
    # the revision the restart made: the Deployment's revision 2, stamped as the restart said
    assert record_of(cluster)["next"] == dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
    assert patches(cluster) == 1
    assert json.dumps(out.report).count("restarted_by_earlier_run") == 1


def test_many_workloads_share_one_exec_budget_and_do_not_starve_each_other(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    names = [f"svc{i}" for i in range(8)]
    for name in names:
        cluster.apply(deployment(name, replicas=1))
    cluster.reset_counts()
    started = time.monotonic()
    out = run_verify(
        "--target",
        ",".join(f"deployment/{n}" for n in names),
        "--expect-env",
        "PATH",
        "--concurrency",
        "1",
        "--timeout",
        "60s",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    assert time.monotonic() - started < 60  # well inside --timeout 60s
    assert out.report is not None and len(out.report["workloads"]) == 8
    assert cluster.requests[("create", "pods/exec")] == 8
    assert cluster.requests[("watch", "deployments")] <= 8


def test_a_workload_named_with_and_without_its_namespace_is_refused_before_any_patch(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1))
    config = tmp_path / "verify.yaml"
    config.write_text("targets:\n  - target: deployment/web\n    namespace: default\n")
    out = run_verify(
        "--target", "deployment/web", "--config", str(config), "--expect-env", "NOPE",
        kubeconfig=kubeconfig, tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 2, out.everything
    assert "deployment/web in namespace default is named twice" in out.stderr
    assert patches(cluster) == 0


def test_two_runs_at_once_restart_the_workload_only_once(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    fixable_stale_key(cluster)
    # every exec takes 3 s: both runs are inspecting revision 1 before either restarts it, and
    # both then verify the revision the one restart made
    cluster.knobs.exec_latency = 3.0
    args = ("--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", "--timeout", "60s")
    with ThreadPoolExecutor(2) as pool:
        runs = [
            pool.submit(run_verify, *args, kubeconfig=kubeconfig, tmp_path=tmp_path / str(i))
            for i in range(2)
        ]
        outs = [r.result() for r in runs]
    assert [o.code for o in outs] == [0, 0], [o.everything for o in outs]
    revision = (cluster.get("Deployment", "web") or {})["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"
    ]
    assert revision == "2"  # one restart, not two
    # the other run saw the record: while sending its own patch (409) or, if it started late, at once
    assert sum("it will not be restarted again" in o.stderr for o in outs) == 1
    assert sum(bool(o.report and o.report["restarted"]) for o in outs) == 1


def test_a_refused_restart_is_not_reported_as_a_restart(cluster: Cluster, tmp_path: Path) -> None:
    # no access reviews, so no preflight: the patch itself is sent and refused
    cluster.knobs.access_reviews = False
    fixable_stale_key(cluster)
    # everything but the patch: the Secret is readable, so the restart is judged able to add the key
    token = cluster.add_user(
        "system:serviceaccount:default:verifier",
        [
            Rule.of(["get", "list", "watch"], ["deployments", "replicasets"], "apps"),
            Rule.of(["get", "list", "watch"], ["pods"]),
            Rule.of(["get", "create"], ["pods/exec"]),
            Rule.of(["get"], ["secrets"]),
        ],
    )
    kc = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token=token, user="verifier")
    cluster.reset_counts()
    out = run_verify(
        "--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kc, tmp_path=tmp_path
    )
    assert out.code == 3, out.everything
    assert patches(cluster) == 1  # sent, and refused
    assert 'cannot patch resource "deployments"' in out.stderr
    assert out.report is not None and out.report["restarted"] is False
    (wl,) = out.report["workloads"]
    assert wl["restarted"] is False
    assert "lacks env FEATURE_CREDENTIAL" in out.stderr  # the failing pods stay the verdict
    said = [line for line in out.stderr.splitlines() if "lacks env FEATURE_CREDENTIAL" in line]
    assert len(said) == len(set(said)), out.stderr  # said before the refused restart, not again
    assert PLANTED not in out.everything


def test_a_conflicting_restart_patch_is_read_again_and_sent_once_more(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    fixable_stale_key(cluster)
    cluster.reset_counts()
    cluster.inject(Fault("status", status=409, match="patch deployments", times=1))
    out = run_verify(
        "--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert cluster.injected["409"] == 1
    assert out.code == 0, out.everything
    assert patches(cluster) == 2  # the refused one, then the one that took
    assert out.report is not None and out.report["restarted"] is True
    revision = (cluster.get("Deployment", "web") or {})["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"
    ]
    assert revision == "2"


def test_an_object_named_by_several_expectations_is_read_once_per_attempt(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(configmap("web-config", {"app.conf": "mode=prod\n", "version": "7"}))
    cluster.apply(
        deployment(
            "web",
            replicas=1,
            volumes=[{"name": "conf", "configMap": {"name": "web-config"}}],
            mounts=[{"name": "conf", "mountPath": "/etc/web"}],
        )
    )
    cluster.wait_rollout("web")
    cluster.reset_counts()
    out = run_verify(
        "--deployment",
        "web",
        "--from-spec",
        "--expect-file",
        "/etc/web/app.conf=configmap:web-config/app.conf",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    assert cluster.requests[("get", "configmaps")] == 1  # the file spec and the pod spec share it


def test_a_restart_whose_answer_was_lost_is_counted_as_this_runs_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    fixable_stale_key(cluster)
    # the patch is stored, then the connection drops: the retried patch meets its own change (409)
    cluster.inject(Fault("reset-after", match="patch deployments", times=1))
    out = run_verify(
        "--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert cluster.injected["reset-after"] == 1
    assert out.code == 0, out.everything
    assert "another run" not in out.everything
    assert "restarted (once)" in out.stderr
    assert out.report is not None and out.report["restarted"] is True
    dep = cluster.get("Deployment", "web") or {}
    assert dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_a_deploy_landing_during_inspection_is_inspected_instead_of_restarted(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    # the inspected pods lack a key their Secret gained later (a restart can add it), and a deploy
    # lands while they are inspected: its new pods start with the key
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    secret_env = [{"secretRef": {"name": "web-secrets"}}]
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}], env_from=secret_env))
    cluster.wait_rollout("web")
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    cluster.reset_counts()
    cluster.knobs.exec_latency = 0.5

    def deploy_meanwhile() -> None:
        cluster.wait_for(lambda: cluster.requests[("create", "pods/exec")] >= 1, what="the first exec")
        cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "2"}], env_from=secret_env))

    with ThreadPoolExecutor(max_workers=1) as side:
        deployed = side.submit(deploy_meanwhile)
        out = run_verify(
            "--deployment",
            "web",
            "--expect-env",
            "FEATURE_CREDENTIAL",
            kubeconfig=kubeconfig,
            tmp_path=tmp_path,
        )
        deployed.result()
    assert out.code == 0, out.everything
    assert "changed to a new revision while it was inspected; inspecting that one instead of restarting" in (
        out.stderr
    )
    assert out.report is not None and out.report["restarted"] is False
    first, second = out.report["workloads"][0]["attempts"]
    assert (first["revision"], second["revision"]) == ("1", "2")
    stale = [c for p in first["pods"] for ct in p["containers"] for c in ct["checks"] if c["status"] != "ok"]
    assert len(stale) == 2 and all(c["restart_can_fix"] is True for c in stale)  # a restart was due
    assert {p["status"] for p in second["pods"]} == {"ok"}
    dep = cluster.get("Deployment", "web") or {}
    assert dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"  # no restart


def test_a_lost_restart_answer_is_counted_even_when_a_webhook_changed_the_template(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    # the stored template differs from the one the client predicted for its record, so only the
    # record's writer tells that the change found on the retry is this run's own restart
    fixable_stale_key(cluster)
    cluster.knobs.mutating_webhook = True
    cluster.reset_counts()
    cluster.inject(Fault("reset-after", match="patch deployments", times=1))
    out = run_verify(
        "--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert cluster.injected["reset-after"] == 1
    assert out.code == 0, out.everything
    assert "changed to a new revision" not in out.everything and "another run" not in out.everything
    assert "restarted (once)" in out.stderr
    assert out.report is not None and out.report["restarted"] is True
    assert cluster.requests[("patch", "deployments")] == 2  # the lost one and its retry, no more
    dep = cluster.get("Deployment", "web") or {}
    assert dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_a_missing_target_in_a_zero_config_run_is_its_own_error_and_the_others_are_verified(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    out = run_verify("--target", "deployment/web", "--target", "deployment/nope", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    by_name = {w["name"]: w for w in out.report["workloads"]}
    assert by_name["web"]["result"] == "passed"
    assert by_name["nope"]["result"] == "error" and "not found" in by_name["nope"]["error"]
    assert 'deployment nope: deployments.apps "nope" not found' in out.stdout
