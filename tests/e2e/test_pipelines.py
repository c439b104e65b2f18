"""The CLI as CI runs it: GitHub workflow commands and files, Argo's --output-dir, JUnit for GitLab."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import xmlschema

from tests.kubesim import Cluster
from tests.support import container_action
from tests.support.helpers import REPO, configmap, deployment, run_verify, secret
from tests.unit.test_github import parse_github_output

SCHEMA = xmlschema.XMLSchema(REPO / "tests" / "schemas" / "junit.xsd")


def stale_pod(cluster: Cluster) -> tuple[str, str]:
    """Two pods of `web`; the key was synced after they started and only one was replaced.

    Returns (stale pod, fresh pod)."""
    cluster.apply(secret("web-env", {"DB_URL": "postgres://x"}))
    cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-env"}}]))
    cluster.wait_rollout("web")
    cluster.apply(secret("web-env", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": "on"}))
    first, second = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))
    cluster.delete("Pod", first)
    cluster.wait_for(
        lambda: cluster.rollout_complete("web") and len(cluster.list("Pod")) == 2, what="replacement pod"
    )
    fresh = next(p["metadata"]["name"] for p in cluster.list("Pod") if p["metadata"]["name"] != second)
    return second, fresh


def github_env(tmp_path: Path, cluster: Cluster) -> dict[str, str]:
    (tmp_path / "tmp").mkdir()
    (tmp_path / "out").write_text("")
    (tmp_path / "summary").write_text("")
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "TMPDIR": str(tmp_path / "tmp"),
        # the action passes the `kubeconfig` input as content; here base64 of it, as secrets often are
        "VERIFY_KUBECONFIG_DATA": base64.b64encode(cluster.kubeconfig().encode()).decode(),
    }


def test_github_run_writes_outputs_summary_errors_and_masks_the_token(
    cluster: Cluster, tmp_path: Path
) -> None:
    stale, fresh = stale_pod(cluster)
    env = github_env(tmp_path, cluster)
    out = run_verify(
        "--deployment",
        "web",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--restart",
        "never",
        kubeconfig=str(tmp_path / "unused"),
        tmp_path=tmp_path,
        env=env,
    )
    assert out.code == 1, out.everything
    lines = out.stdout.splitlines()
    token = cluster.admin_token
    # masks come first, before any line that could carry them; the token is never printed otherwise
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert lines[: len(masks)] == masks and f"::add-mask::{token}" in masks
    assert f"::add-mask::{env['VERIFY_KUBECONFIG_DATA']}" in masks
    rest = "\n".join(lines[len(masks) :]) + out.stderr
    assert token not in rest and env["VERIFY_KUBECONFIG_DATA"] not in rest

    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 1, out.stdout
    assert errors[0].startswith(f"::error title=rollout-verify%3A deployment default/web::pod {stale} (node-")
    # the problem, then its remedy
    assert ") container app lacks env FEATURE_CREDENTIAL — " in errors[0]
    assert fresh not in "\n".join(errors)
    assert "::group::deployment web" in out.stderr and "::endgroup::" in out.stderr

    outputs = parse_github_output((tmp_path / "out").read_text())
    assert outputs["result"] == "failed"
    assert outputs["restarted"] == "false"
    assert outputs["failed-pods"] == stale
    assert outputs["exit-code"] == "1"
    report_path = outputs["report-path"]
    assert report_path.endswith(".json") and json.loads(Path(report_path).read_text())["result"] == "failed"

    md = (tmp_path / "summary").read_text()
    assert md.startswith("### rollout-verify\n") and "❌ FAILED deployment web" in md
    assert f"| {stale} |" in md and "❌ missing | container app lacks env FEATURE_CREDENTIAL" not in md
    assert "❌ missing | lacks env FEATURE_CREDENTIAL |" in md
    assert f"| {fresh} |" in md and "✅ ok" in md
    assert token not in md
    assert list((tmp_path / "tmp").iterdir()) == []  # the temp kubeconfig is gone


def test_github_run_after_a_restart_reports_passed_and_restarted(cluster: Cluster, tmp_path: Path) -> None:
    stale_pod(cluster)
    env = github_env(tmp_path, cluster)
    out = run_verify(
        "--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig="", tmp_path=tmp_path, env=env
    )
    assert out.code == 0, out.everything
    assert "::error" not in out.stdout
    outputs = parse_github_output((tmp_path / "out").read_text())
    assert (outputs["result"], outputs["restarted"], outputs["failed-pods"]) == ("passed", "true", "")
    md = (tmp_path / "summary").read_text()
    assert "✅ PASSED" in md and "- restarted once" in md and "1 of 2 pods failed" in md


def test_config_error_on_github_is_annotated_and_still_sets_outputs(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("")
    out = run_verify(
        "--deployment",
        "Not_A_Name",
        kubeconfig="",
        tmp_path=tmp_path,
        env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "out")},
    )
    assert out.code == 2
    assert out.stdout.startswith("::error title=rollout-verify::--deployment: ")
    outputs = parse_github_output((tmp_path / "out").read_text())
    assert outputs["result"] == "error" and outputs["exit-code"] == "2" and outputs["failed-pods"] == ""


def test_bad_kubeconfig_content_exits_2_without_echoing_it(tmp_path: Path) -> None:
    content = "apiVersion: v1\nusers: [ {name: x, user: {token: tok-never-printed-77}\n"
    out = run_verify(
        "--deployment", "web", kubeconfig="", tmp_path=tmp_path, env={"VERIFY_KUBECONFIG_DATA": content}
    )
    assert out.code == 2, out.everything
    assert "VERIFY_KUBECONFIG_DATA: is not valid YAML or JSON at line" in out.stderr
    assert "tok-never-printed-77" not in out.everything


def test_output_dir_and_junit_from_a_real_run(cluster: Cluster, kubeconfig: str, tmp_path: Path) -> None:
    cluster.apply(configmap("web-config", {"app.conf": "mode=prod\n"}))
    cluster.apply(
        deployment(
            "web",
            replicas=2,
            containers=[{"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
            volumes=[{"name": "conf", "configMap": {"name": "web-config"}}],
            mounts=[{"name": "conf", "mountPath": "/etc/web"}],
        )
    )
    outdir = tmp_path / "outputs"
    junit_path = tmp_path / "reports" / "junit.xml"
    out = run_verify(
        "--deployment",
        "web",
        "--container",
        "app",
        "--expect-file",
        "/etc/web/app.conf=configmap:web-config/app.conf",
        "--expect-env",
        "MISSING_KEY",
        "--restart",
        "never",
        "--output-dir",
        str(outdir),
        "--junit",
        str(junit_path),
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    files = {p.name: p.read_text() for p in outdir.iterdir()}
    assert set(files) == {
        "result",
        "restarted",
        "failed-pods",
        "exit-code",
        "report.json",
        "junit.xml",
        "summary.md",
    }
    assert (files["result"], files["restarted"], files["exit-code"]) == ("failed", "false", "1")
    pods = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))
    assert sorted(files["failed-pods"].split(",")) == pods
    assert json.loads(files["report.json"])["result"] == "failed"
    assert files["junit.xml"] == junit_path.read_text()
    SCHEMA.validate(str(junit_path))
    doc = SCHEMA.to_dict(str(junit_path))
    cases = doc["testsuite"][0]["testcase"]
    assert sorted(c["@name"] for c in cases) == [f"{p}/app" for p in pods]  # --container app only
    assert {c["failure"][0]["@message"] for c in cases} == {
        "lacks env MISSING_KEY — no source in deployment web's template provides MISSING_KEY: a restart cannot add it"
    }
    assert "| app | ❌ missing | lacks env MISSING_KEY |" in files["summary.md"]


def test_github_masks_the_token_of_the_default_kubeconfig(cluster: Cluster, tmp_path: Path) -> None:
    """No --kubeconfig and no $KUBECONFIG: ~/.kube/config is what gets loaded, so it is masked."""
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    (tmp_path / ".kube").mkdir()
    cluster.write_kubeconfig(tmp_path / ".kube" / "config")
    out = run_verify(
        "--deployment",
        "web",
        "--expect-env",
        "A",
        kubeconfig="",
        tmp_path=tmp_path,
        env={"GITHUB_ACTIONS": "true", "KUBECONFIG": ""},
    )
    assert out.code == 0, out.everything
    assert out.stdout.splitlines()[0] == f"::add-mask::{cluster.admin_token}"


def test_a_missing_kubeconfig_from_the_kubeconfig_variable_names_that_variable(tmp_path: Path) -> None:
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=str(tmp_path / "nope"), tmp_path=tmp_path
    )
    assert out.code == 2, out.everything
    assert f'KUBECONFIG: file "{tmp_path / "nope"}" does not exist; pass --kubeconfig' in out.stderr


def test_a_missing_kubeconfig_given_as_the_flag_is_not_answered_with_pass_the_flag(tmp_path: Path) -> None:
    gone = str(tmp_path / "gone.kc")
    out = run_verify("--deployment", "web", "--kubeconfig", gone, kubeconfig="", tmp_path=tmp_path)
    assert out.code == 2, out.everything
    (line,) = out.stderr.splitlines()
    assert f'file "{gone}" does not exist; check the path you passed' in line and "pass --kubeconfig" not in line


def test_kubeconfig_content_pasted_into_the_kubeconfig_variable_is_not_echoed(tmp_path: Path) -> None:
    pasted = base64.b64encode(
        b"apiVersion: v1\nusers: [{name: u, user: {token: tok-never-printed-78}}]\n" * 4
    )
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=pasted.decode(), tmp_path=tmp_path
    )
    assert out.code == 2, out.everything
    assert "KUBECONFIG: file (a value of" in out.stderr
    assert "give the content in VERIFY_KUBECONFIG_DATA" in out.stderr
    assert pasted.decode()[:40] not in out.everything


def test_a_password_in_the_server_url_is_not_shown_when_it_cannot_be_reached(tmp_path: Path) -> None:
    kc = tmp_path / "kc"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://admin:pw-never-printed-79@127.0.0.1:1'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"
    )
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", "--timeout", "2", kubeconfig=str(kc), tmp_path=tmp_path
    )
    assert out.code == 3, out.everything
    # why, in the operating system's words (it was the exception's type: "ConnectError")
    assert "cannot reach the API server at https://127.0.0.1:1: connection refused" in out.everything
    assert "pw-never-printed-79" not in out.everything


def test_a_container_action_names_a_runner_path_it_cannot_see(tmp_path: Path) -> None:
    """azure/k8s-set-context writes the kubeconfig under RUNNER_TEMP, which a container action
    does not mount: one line that says so and gives the two fixes, exit 2, nothing sent."""
    out = run_verify(
        "--deployment", "web", kubeconfig="/home/runner/work/_temp/kubeconfig_1733221234", tmp_path=tmp_path,
        env={"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/github/workspace"},
    )  # fmt: skip
    assert out.code == 2, out.everything
    assert (
        'KUBECONFIG: "/home/runner/work/_temp/kubeconfig_1733221234" is on the runner, outside what a '
        "container action can see" in out.stderr
    )
    assert "the `kubeconfig` input" in out.stderr



def test_a_container_action_reads_runner_paths_under_the_mounted_folders(cluster: Cluster, tmp_path: Path) -> None:
    """As in a container action: the workspace and _temp/_github_home are mounted at /github/...,
    the environment still names the runner's paths (aws eks update-kubeconfig --kubeconfig into
    the checkout; the report into the home folder): the run finds and writes them."""
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    folders = container_action.mounts(tmp_path)
    (folders["workspace"] / ".kube").mkdir()
    (folders["workspace"] / ".kube" / "config").write_text(cluster.kubeconfig())
    done = container_action.run(
        folders,
        {
            "KUBECONFIG": f"{container_action.RUNNER_WORKSPACE}/.kube/config",
            "VERIFY_DEPLOYMENT": "web",
            "VERIFY_EXPECT_ENV": "A",
            "VERIFY_REPORT_JSON": f"{container_action.RUNNER_HOME}/report.json",
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((folders["home"] / "report.json").read_text())
    assert report["result"] == "passed"
    assert container_action.left_nothing()


def test_a_container_action_run_leaves_reports_owned_by_the_workspaces_owner(
    cluster: Cluster, tmp_path: Path
) -> None:
    """GitHub runs a container action as root; on a self-hosted runner the workspace belongs to the
    runner's user (here 1001:121), and a root-owned report would break the next job's checkout.
    Every file and folder the run creates in the workspace gets the workspace's uid/gid."""
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    folders = container_action.mounts(tmp_path)
    (folders["workspace"] / "kubeconfig.yaml").write_text(cluster.kubeconfig())
    os.chown(folders["workspace"], 1001, 121)
    inside = "/github/workspace"
    done = container_action.run(
        folders,
        {
            "KUBECONFIG": f"{inside}/kubeconfig.yaml",
            "VERIFY_DEPLOYMENT": "web",
            "VERIFY_EXPECT_ENV": "A",
            "VERIFY_REPORT_JSON": f"{inside}/reports/verify/report.json",
            "VERIFY_JUNIT": f"{inside}/reports/junit.xml",
            "VERIFY_SUMMARY": f"{inside}/summary.md",
            "VERIFY_OUTPUT_DIR": f"{inside}/outputs",
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ws = folders["workspace"]
    written = {p.relative_to(ws).as_posix(): p.lstat() for p in ws.rglob("*") if p.name != "kubeconfig.yaml"}
    assert {"reports", "reports/verify", "reports/verify/report.json", "reports/junit.xml", "summary.md",
            "outputs", "outputs/result", "outputs/report.json"} <= set(written)  # fmt: skip
    assert {name: (st.st_uid, st.st_gid) for name, st in written.items()} == dict.fromkeys(written, (1001, 121))
    assert json.loads((ws / "reports/verify/report.json").read_text())["result"] == "passed"
    assert (ws / "kubeconfig.yaml").stat().st_uid == 0  # what the run did not write stays as it was
