"""Whoever can edit a Deployment writes the names rollout-verify prints. Hostile text (line
breaks, `::error`/`::add-mask::` workflow commands, ESC, U+202E) in a mountPath, a ConfigMap
item's path, a container name, an env key and label values reaches every output escaped: no
such text starts a line of stdout, stderr, $GITHUB_OUTPUT or the step summary, and no control
character or bidi override appears raw."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support.helpers import configmap, deployment, run_verify

FORGED = "\n::error title=INJECTED::forged\n::add-mask::rollout-verify\r##[error]old\x1b[31m\u202edesrever"
# an env name is printable ASCII without `=` on any apiserver (RelaxedEnvironmentVariableValidation);
# kubesim's exec could not even pass the others to a process
FORGED_ENV = "::add-mask::rollout-verify ::error::INJECTED ##[error]old"
RAW = ("\x1b", "\u202e", "\r")
# what rollout-verify itself may start a line of stdout with on GitHub
OWN_COMMANDS = re.compile(r"^::(error title=rollout-verify|group::|endgroup::$|add-mask::)")


@pytest.fixture
def knobs() -> Knobs:
    """Volumes never refreshed during the test: a changed ConfigMap leaves a file that differs."""
    return Knobs(sync_period=3600.0)


def _hostile_deployment() -> dict:
    d = deployment(
        "web",
        replicas=1,
        env=[{"name": FORGED_ENV, "valueFrom": {"configMapKeyRef": {"name": "hcm", "key": "value"}}}],
        volumes=[
            {"name": "conf", "configMap": {"name": "hcm", "items": [{"key": "file", "path": f"f{FORGED}"}]}}
        ],
        mounts=[{"name": "conf", "mountPath": f"/etc/m{FORGED}"}],
    )
    spec = d["spec"]["template"]["spec"]
    spec["containers"][0]["name"] = f"app{FORGED}"
    d["spec"]["template"]["metadata"]["labels"]["tier"] = f"t{FORGED}"
    d["metadata"].setdefault("labels", {})["owner"] = f"o{FORGED}"
    return d


def _lines_are_clean(name: str, text: str, *, own_commands: bool) -> None:
    for char in RAW:
        assert char not in text, f"{name} holds a raw {char!r}"
    for line in text.splitlines():
        start = line.lstrip()
        if start.startswith("::"):
            assert own_commands and OWN_COMMANDS.match(start), f"{name}: a forged command line: {line[:80]}"
            assert start != "::add-mask::rollout-verify", name
        assert not start.startswith(("##[", "forged", "old")), f"{name}: a forged line: {line[:80]}"


def test_hostile_names_in_every_field_never_start_a_line_of_any_output(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(configmap("hcm", {"value": "v1", "file": "f1"}))
    cluster.apply(_hostile_deployment())
    cluster.wait_rollout("web")
    cluster.apply(configmap("hcm", {"value": "v2", "file": "f2"}))  # env value and file now differ
    (tmp_path / "out").write_text("")
    (tmp_path / "summary").write_text("")
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
    }
    out = run_verify(
        "--deployment",
        "web",
        "--from-spec",
        "--volume-grace",
        "0",
        "--restart",
        "never",
        "--timeout",
        "30s",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
        env=env,
    )
    assert out.code == 1, out.everything
    outputs = (tmp_path / "out").read_text()
    summary = (tmp_path / "summary").read_text()
    _lines_are_clean("stdout", out.stdout, own_commands=True)
    _lines_are_clean("stderr", out.stderr, own_commands=True)
    _lines_are_clean("$GITHUB_OUTPUT", outputs, own_commands=False)
    _lines_are_clean("step summary", summary, own_commands=False)
    _lines_are_clean("--summary", out.summary, own_commands=False)
    # the hostile fields did reach the outputs, escaped: the env key, the file path, the container
    escaped = "::error title=INJECTED::forged ::add-mask::rollout-verify ##[error]old\\x1b[31m\\u202edesrever"
    for field in (f"/etc/m {escaped}/f {escaped}", f"container app {escaped}"):
        assert field in out.stderr, (field, out.stderr)
    assert f"app {escaped}" in summary
