"""JUnit, Markdown and step outputs rendered from one RunResult: shape, escaping, no secrets."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.report import junit
from verify.report import markdown as summary
from verify.report import outputs as outcome
from verify.report.result import RunResult, WorkloadResult

SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parent.parent / "schemas" / "junit.xsd")


def container(name: str, *checks: tuple[str, str, CheckStatus, str]) -> ContainerVerdict:
    return ContainerVerdict(name, tuple(CheckResult(t, target, s, d) for t, target, s, d in checks))  # type: ignore[arg-type]


OK_ENV = ("env", "DB_URL", CheckStatus.OK, "")
MISSING_ENV = ("env", "FEATURE_CREDENTIAL", CheckStatus.MISSING, "")
DIFFERS = ("file", "/cm/script.py", CheckStatus.MISMATCH, "differs from configmap testcm/script.py")


def failed_run() -> RunResult:
    first = AttemptVerdict("1", (PodVerdict("web-a", "node-1", (container("app", MISSING_ENV),)),))
    last = AttemptVerdict(
        "2",
        (
            PodVerdict("web-b", "node-1", (container("app", OK_ENV), container("sidecar", OK_ENV))),
            PodVerdict("web-c", "node-2", (container("app", OK_ENV, DIFFERS), container("sidecar", OK_ENV))),
            PodVerdict("web-d", "node-3", (), Uninspectable("no_shell", "the image has no shell (sh)", True)),
            PodVerdict(
                "web-e",
                "node-3",
                (
                    ContainerVerdict(
                        "app", (), Uninspectable("timeout", "exec timed out | \x1b[0m <b>", False)
                    ),
                ),
            ),
        ),
        problems=("expected 5 pods of revision 2, found 4",),
    )
    wl = WorkloadResult("deployment", "prod", "web", (first, last), restarted=True)
    return RunResult("failed", 1, True, (wl,), "failed after 1 restart")


def passed_run() -> RunResult:
    last = AttemptVerdict("3", (PodVerdict("web-b", "node-1", (container("app", OK_ENV),)),))
    return RunResult("passed", 0, False, (WorkloadResult("deployment", "prod", "web", (last,), False),), "ok")


def error_run() -> RunResult:
    wl = WorkloadResult(
        "deployment",
        "prod",
        "web",
        (),
        False,
        error='deployments.apps "web" is forbidden: User "x" cannot get',
    )
    return RunResult("error", 3, False, (wl,), "forbidden")


@pytest.mark.parametrize("run", [failed_run(), passed_run(), error_run()], ids=["failed", "passed", "error"])
def test_junit_validates_against_the_gitlab_jenkins_schema(run: RunResult) -> None:
    SCHEMA.validate(junit.render(run=run, seconds=1.25))


def test_junit_has_one_testcase_per_pod_and_container_with_the_reason_as_failure() -> None:
    root = ET.fromstring(junit.render(run=failed_run(), seconds=2.0))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "deployment prod/web"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {
        "pods of the revision",
        "web-b/app",
        "web-b/sidecar",
        "web-c/app",
        "web-c/sidecar",
        "web-d",
        "web-e/app",
    }
    assert cases["web-b/app"].find("failure") is None
    mismatch = cases["web-c/app"].find("failure")
    assert mismatch is not None and mismatch.get("type") == "mismatch"
    assert mismatch.get("message") == "file /cm/script.py differs from configmap testcm/script.py"
    assert "pod web-c (node-2) container app" in (mismatch.text or "")
    shell = cases["web-d"].find("failure")
    assert shell is not None and "no shell" in (shell.get("message") or "")
    assert suite.get("tests") == "7" and suite.get("failures") == "4" and suite.get("errors") == "0"
    assert root.get("failures") == "4" and root.get("time") == "2.000"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {"restarted": "true", "attempts": "2", "revision": "2"}


def test_junit_workload_error_is_an_error_testcase() -> None:
    root = ET.fromstring(junit.render(run=error_run()))
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("name") == "workload"
    err = case.find("error")
    assert err is not None and "forbidden" in (err.get("message") or "")


def test_junit_shows_control_characters_and_bidi_overrides_escaped_as_every_output_does() -> None:
    hostile = "no shell\n::error::forged\u202eRLO\x1b[31m\x00"
    pod = PodVerdict("web-x\u202e", "node-1", (), Uninspectable("no_shell", hostile, True))
    wl = WorkloadResult("deployment", "prod", "web", (AttemptVerdict("1", (pod,)),), False)
    text = junit.render(run=RunResult("failed", 1, False, (wl,), ""))
    for raw in ("\x1b", "\u202e", "\x00"):
        assert raw not in text, repr(raw)
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    failure = ET.fromstring(text).find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "cannot be inspected: no shell ::error::forged\\u202eRLO\\x1b[31m\\x00"
    assert "pod web-x\\u202e (node-1)" in (failure.text or "")
    assert "\\x1b[0m" in junit.render(run=failed_run())  # ESC shown, as in stdout, not dropped


def test_a_pass_after_the_restart_says_in_the_summary_why_it_restarted() -> None:
    why = (
        "deployment prod/web: 1 pod on node-1 (1) started before secret web-secrets had FEATURE_CREDENTIAL "
        "(Helm/CSI sync ordering): env is read only when a container starts; a restart fixes it"
    )
    first = AttemptVerdict(
        "1", (PodVerdict("web-a", "node-1", (container("app", MISSING_ENV),)),), diagnosis=(why,)
    )
    last = AttemptVerdict("2", (PodVerdict("web-b", "node-1", (container("app", OK_ENV),)),))
    wl = WorkloadResult("deployment", "prod", "web", (first, last), restarted=True)
    md = summary.render(run=RunResult("passed", 0, True, (wl,), "1 pod verified after 1 restart"))
    assert (
        "- attempt 1 (revision 1): 1 of 1 pods failed\n"
        "  - 🩺 1 pod on node-1 (1) started before secret web-secrets had FEATURE_CREDENTIAL (Helm/CSI sync "
        "ordering): env is read only when a container starts; a restart fixes it\n"
        "- attempt 2 (revision 2): ok\n- restarted once\n"
    ) in md, md


def test_summary_table_lists_every_container_and_escapes_cells() -> None:
    md = summary.render(run=failed_run())
    assert md.startswith("### rollout-verify\n")
    assert "❌ FAILED deployment web" in md
    assert (
        "| web-c | node-2 | app | ❌ mismatch | file /cm/script.py differs from configmap testcm/script.py |"
        in md
    )
    assert "| web-b | node-1 | sidecar | ✅ ok |  |" in md
    assert "| web-d | node-3 |  | ❌ uninspectable | the image has no shell (sh) |" in md
    assert "exec timed out \\| \\x1b[0m &lt;b&gt;" in md  # a pipe cannot split the row, no raw HTML
    assert "- attempt 1 (revision 1): 1 of 1 pods failed" in md and "- restarted once" in md
    assert "- ❌ expected 5 pods of revision 2, found 4" in md


def test_summary_collapses_passing_rows_beyond_the_limit() -> None:
    pods = tuple(
        PodVerdict(f"web-{i}", "n", (container("app", OK_ENV),)) for i in range(summary.MAX_OK_ROWS + 1)
    )
    bad = PodVerdict("web-bad", "n", (container("app", MISSING_ENV),))
    wl = WorkloadResult("deployment", "prod", "web", (AttemptVerdict("1", (*pods, bad)),), False)
    md = summary.render(run=RunResult("failed", 1, False, (wl,), ""))
    assert "| web-bad |" in md and "| web-0 |" not in md
    assert f"…and {summary.MAX_OK_ROWS + 1} passing containers not listed." in md


def test_step_outputs_name_the_failed_pods_of_the_last_attempt_only() -> None:
    out = outcome.step_outputs(run=failed_run(), report_path="r.json")
    assert out == {
        "result": "failed",
        "restarted": "true",
        "failed-pods": "web-c,web-d,web-e",
        "report-path": "r.json",
        "exit-code": "1",
    }
    assert outcome.step_outputs(run=passed_run(), report_path="")["failed-pods"] == ""


@pytest.mark.parametrize(
    "doc",
    [
        '<testsuites><testsuite tests="1"><testcase name="a"/></testsuite></testsuites>',  # no suite name
        '<testsuite name="s"><testcase name="a"/></testsuite>',  # no tests count
        '<testsuite name="s" tests="1"><testcase/></testsuite>',  # no case name
        '<testsuite name="s" tests="x"><testcase name="a"/></testsuite>',  # count not a number
        '<testsuite name="s" tests="1"><testcase name="a"><failure/><skipped/></testcase></testsuite>',
    ],
)
def test_schema_rejects_what_gitlab_and_jenkins_cannot_read(doc: str) -> None:
    assert not SCHEMA.is_valid(doc)
