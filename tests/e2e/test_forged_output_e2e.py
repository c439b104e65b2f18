"""Whoever can edit a Deployment writes the names rollout-verify prints. Hostile text (line
breaks, `::error`/`::add-mask::` workflow commands, the legacy `##[stop-commands]`/`##[add-mask]`/
`##[error]` mid-line, ESC, U+202E) in a mountPath, a ConfigMap item's path, a container name and
an env key reaches every output of one run escaped, and every output of `report merge` over its
report: stdout, stderr, $GITHUB_OUTPUT, the step summary, GitLab's sections, --report-json,
--junit, --summary and each --output-dir file (tests/support/forged.py says what none may hold).
Label values cannot carry it: the apiserver refuses them (ValidateLabels, kubesim's objectmeta.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.forged import FORGED, FORGED_ENV, assert_clean
from tests.support.helpers import REPO, configmap, deployment, run_verify


@pytest.fixture
def knobs() -> Knobs:
    """Volumes never refreshed during the test: a changed ConfigMap leaves a file that differs."""
    return Knobs(sync_period=3600.0)


def _hostile_deployment() -> dict:
    d = deployment(
        "web",
        replicas=1,
        # optional and absent when the pod starts: the key the ConfigMap gains later is missing
        env=[{"name": FORGED_ENV, "valueFrom": {"configMapKeyRef": {"name": "hcm", "key": "value", "optional": True}}}],
        volumes=[
            {"name": "conf", "configMap": {"name": "hcm", "items": [{"key": "file", "path": f"f{FORGED}"}]}}
        ],
        mounts=[{"name": "conf", "mountPath": f"/etc/m{FORGED}"}],
    )
    spec = d["spec"]["template"]["spec"]
    spec["containers"][0]["name"] = f"app{FORGED}"
    return d


def test_hostile_names_in_every_field_never_forge_a_command_in_any_output_of_a_run_or_its_merge(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(configmap("hcm", {"file": "f1"}))
    cluster.apply(_hostile_deployment())
    cluster.wait_rollout("web")
    cluster.apply(configmap("hcm", {"value": "v2", "file": "f2"}))  # the env key is missing, the file differs
    (tmp_path / "out").write_text("")
    (tmp_path / "summary").write_text("")
    env = {
        "GITHUB_ACTIONS": "true",
        "GITLAB_CI": "true",  # both platforms' markup in one run: GitHub's commands, GitLab's sections
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
    }
    report = tmp_path / "report.json"
    out = run_verify(
        "--deployment", "web", "--from-spec", "--volume-grace", "0", "--restart", "never",
        "--timeout", "30s", "--report-json", str(report),
        kubeconfig=kubeconfig, tmp_path=tmp_path, env=env,
    )  # fmt: skip
    assert out.code == 1, out.everything
    assert "section_start:" in out.stderr and "::group::" in out.stderr  # both platforms' markup
    outputs = (tmp_path / "out").read_text()
    summary = (tmp_path / "summary").read_text()
    assert_clean("stdout", out.stdout, own_commands=True)
    assert_clean("stderr", out.stderr, own_commands=True)
    assert_clean("$GITHUB_OUTPUT", outputs)
    assert_clean("step summary", summary)
    assert_clean("--summary", out.summary)
    assert_clean("--junit", out.junit)
    assert_clean("--report-json", report.read_text())
    assert set(out.files) == {"result", "restarted", "failed-pods", "exit-code", "report.json", "junit.xml", "summary.md"}
    for name, text in out.files.items():
        assert_clean(f"--output-dir {name}", text)
    # the hostile fields did reach the outputs, escaped: the env key, the file path, the container
    escaped = (
        "::error title=INJECTED::forged ::add-mask::rollout-verify \\x23#[error]old\\x1b[31m\\u202edesrever "
        "\\x23#[stop-commands]tok \\x23#[add-mask]rollout-verify \\x23\ufe0f#[error]vs"
    )
    for field in (f"/etc/m {escaped}/f {escaped}", f"container app {escaped}"):
        assert field in out.stderr, (field, out.stderr)
    assert f"app {escaped}" in summary
    assert "lacks env ::add-mask::rollout-verify ::error::INJECTED \\x23#[error]old \\x23#[stop-commands]tok \\x23#[add-mask]x" in out.stderr
    assert json.loads(report.read_text())["workloads"][0]["attempts"][0]["pods"][0]["containers"][0]["name"] == f"app{FORGED}"

    (tmp_path / "summary").write_text("")
    merged = subprocess.run(
        [sys.executable, "-m", "verify", "report", "merge", str(report), "--summary", str(tmp_path / "m.md"),
         "--junit", str(tmp_path / "m.xml")],
        capture_output=True, text=True, timeout=60, cwd=REPO,
        env={**{k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_"))}, **env},
    )  # fmt: skip
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert f"container app {escaped}" in merged.stderr
    assert_clean("merge stdout", merged.stdout, own_commands=True)
    assert_clean("merge stderr", merged.stderr, own_commands=True)
    for name in ("summary", "m.md", "m.xml"):
        assert_clean(f"merge {name}", (tmp_path / name).read_text())
