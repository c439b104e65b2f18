"""Every page a CI user reads, rendered for the recreated immutable ConfigMap (the first incident
the product was born from) and compared with a snapshot: stderr, the `::error` annotations, the
step summary, JUnit (GitLab's merge request widget shows a failed test's text), report.json, and
`report merge`'s summary and JUnit over that report. Each must carry the diagnosis and the remedy,
and none a Secret's value or a digest of Secret-backed content.

The verdict is built by the product's own pure steps (judge, assess, diagnose, decide), from the
observations three pods would report. After a deliberate change of wording, rewrite the snapshots
with `UPDATE_SNAPSHOTS=1` and read the diff."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pytest

from verify.diagnose.checks import diagnose
from verify.diagnose.remedy import Facts, assess
from verify.findings import (
    ContainerObservation,
    Expectations,
    ExpectedEnv,
    ExpectedFile,
    PodObservation,
    PodTarget,
    Source,
)
from verify.flow.decide import decide
from verify.flow.judge import judge_attempt
from verify.platforms import github
from verify.report import junit, markdown, merge, text
from verify.report.jsondoc import to_json
from verify.report.result import RunResult, WorkloadResult, combine

SNAPSHOTS = Path(__file__).parent / "snapshots" / "recreated_immutable_configmap"
SECRET_VALUE = "s3cr3t-snapshot-9c41"
SECRET_DIGEST = hashlib.sha256(b"run-key" + SECRET_VALUE.encode()).hexdigest()  # as the HMAC stands
NEW = hashlib.sha256(b"content8").hexdigest()
OLD = hashlib.sha256(b"content7").hexdigest()
TESTCM = Source(
    "configmap", "testcm", immutable=True, uid="89b7ce15-2f0e-4c4b-9a55-0c1d2e3f4a5b", created="2026-01-02T03:04:05Z"
)
WEB_ENV = Source("secret", "web-env", uid="5e1f")
SCRIPT = ExpectedFile("/cm/script.py", NEW, "configmap testcm/script.py", source=TESTCM, volume=True)
TOKEN = ExpectedEnv("API_TOKEN", SECRET_DIGEST, "secret web-env/API_TOKEN", secret=True, source=WEB_ENV)
EXPECTED = {
    "test": Expectations(
        env=("API_TOKEN",),
        files=(SCRIPT,),
        env_values=(TOKEN,),
        env_sources=(("API_TOKEN", WEB_ENV),),
        mounts=(("/cm", "configmap"),),
    )
}
PODS = (("cm-test-5kc8-8v9mb", "node-1"), ("cm-test-5kc8-dx7rw", "node-2"), ("cm-test-5kc8-l5dtt", "node-2"))


def _run() -> RunResult:
    observations = [
        PodObservation(
            PodTarget(name, node, ("test",)),
            (
                ContainerObservation(
                    "test",
                    env_present=frozenset({"API_TOKEN"}),
                    file_hashes={"/cm/script.py": OLD},
                    resolved_files={"/cm/script.py": "/cm/..2026_01_02/script.py"},
                    env_digests={"API_TOKEN": SECRET_DIGEST},
                ),
            ),
        )
        for name, node in PODS
    ]
    verdict = judge_attempt(selection_revision="2", observations=observations, expectations=EXPECTED, problems=())
    facts = Facts(
        workload="deployment cm-test",
        kind="deployment",
        provided_env={"test": frozenset({"API_TOKEN"})},
        live_files={"test": {SCRIPT.path: SCRIPT}},
    )
    verdict = assess(verdict=verdict, expectations=EXPECTED, facts=facts)
    lines = diagnose(workload="deployment cm-test", verdict=verdict, expectations=EXPECTED)
    verdict = dataclasses.replace(verdict, diagnosis=tuple(lines))
    decision = decide(verdict=verdict, restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    workload = WorkloadResult(
        "deployment", "default", "cm-test", (verdict,), False, result="failed", exit_code=1, message=decision.reason
    )
    return combine(workloads=(workload,))


def outputs() -> dict[str, str]:
    run = _run()
    (workload,) = run.workloads
    report = json.dumps(to_json(run=run), indent=2) + "\n"
    fleet = merge.merge(reports=[("eu/report.json", "eu", json.loads(report))])
    return {
        "stderr.txt": "".join(f"rollout-verify: {line}\n" for line in text.problem_lines(workload=workload)),
        "annotations.txt": "".join(f"{line}\n" for line in github.error_lines(run=run)),
        "verdict.txt": text.verdict_line(run=run) + "\n",
        "summary.md": markdown.render(run=run),
        "junit.xml": junit.render(run=run, seconds=1.5),
        "report.json": report,
        "merge-summary.md": merge.markdown(fleet=fleet),
        "merge-junit.xml": merge.junit(fleet=fleet),
    }


RENDERED = outputs()


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_each_output_matches_its_snapshot(name: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(RENDERED[name])
    assert RENDERED[name] == path.read_text()


@pytest.mark.parametrize("name", sorted(set(RENDERED) - {"verdict.txt"}))
def test_each_output_carries_the_diagnosis_and_the_remedy(name: str) -> None:
    shown = RENDERED[name]
    assert "configmap testcm is immutable and was recreated" in shown  # why
    assert "the kubelet" in shown and "cached copy" in shown
    assert "a restart will not help" in shown  # what it means for the run
    assert "publish new content under a new name" in shown  # what to do


def test_the_annotations_name_the_workload_and_say_problem_and_remedy_in_one_message() -> None:
    lines = RENDERED["annotations.txt"].splitlines()
    assert lines and all(line.startswith("::error title=rollout-verify%3A deployment default/cm-test::") for line in lines)
    first = lines[0].split("::", 2)[2]
    problem, _, remedy = first.partition(" — ")
    assert problem.startswith("3 pods (cm-test-5kc8-8v9mb, cm-test-5kc8-dx7rw, cm-test-5kc8-l5dtt) on node-1 (1), node-2 (2)")
    assert "file /cm/script.py differs from configmap testcm/script.py" in problem
    assert "publish new content under a new name" in remedy


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_no_snapshot_holds_a_secret_value_or_a_digest_of_one(name: str) -> None:
    shown = RENDERED[name] + (SNAPSHOTS / name).read_text()
    for secret in (SECRET_VALUE, SECRET_DIGEST, SECRET_DIGEST[:12]):
        assert secret not in shown
