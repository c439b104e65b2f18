"""`report merge`, pure: which cluster a report is, the fleet's exit code, what a failure says."""

from __future__ import annotations

from typing import Any

import pytest

from verify.cli import _merge_arguments
from verify.errors import ConfigError
from verify.report.merge import junit, markdown, merge, verdict_line


def report(result: str, code: int, *, context: str | None = None, **wl: Any) -> dict[str, Any]:
    workload = {"kind": "deployment", "namespace": "shop", "name": "web", "result": result, "exit_code": code}
    workload.update(wl)
    return {"result": result, "exit_code": code, "context": context, "message": "", "workloads": [workload]}


def test_the_fleet_exits_with_its_most_fundamental_code() -> None:
    fleet = merge(
        reports=[
            ("a", "eu", report("failed", 1)),
            ("b", "us", report("error", 4)),
            ("c", "ap", report("passed", 0)),
        ]
    )
    assert (fleet.exit_code, fleet.result) == (4, "error")
    assert merge(reports=[("a", "eu", report("failed", 1)), ("c", "ap", report("passed", 0))]).exit_code == 1
    assert merge(reports=[("c", "ap", report("passed", 0))]).result == "passed"


def test_a_report_is_named_by_its_label_else_its_context_else_its_path() -> None:
    fleet = merge(
        reports=[("x/r.json", "eu", report("passed", 0, context="ctx")), ("y/r.json", None, report("passed", 0, context="prod-us")),
                 ("z/r.json", None, report("passed", 0))]
    )  # fmt: skip
    assert [m.cluster for m in fleet.members] == ["eu", "prod-us", "z/r.json"]


def test_a_failed_check_reads_as_the_run_said_it() -> None:
    attempt = {
        "revision": "2", "problems": [], "diagnosis": ["secret web-env lacks FEATURE_CREDENTIAL"],
        "pods": [{"name": "web-1", "node": "node-2", "status": "missing", "reason": None, "checks": [],
                  "containers": [{"name": "app", "status": "missing", "reason": None, "checks": [
                      {"type": "env", "target": "FEATURE_CREDENTIAL", "status": "missing", "detail": "not set"}]}]}],
    }  # fmt: skip
    fleet = merge(reports=[("a", "eu", report("failed", 1, attempts=[attempt]))])
    (member,) = fleet.members
    assert member.problems == ("pod web-1 (node-2) container app lacks env FEATURE_CREDENTIAL",)
    assert "secret web-env lacks FEATURE_CREDENTIAL" in junit(fleet=fleet)
    assert (
        "| eu | shop | deployment/web | ❌ failed | no | pod web-1 (node-2) container app lacks env"
        in markdown(fleet=fleet)
    )


def test_a_report_that_verified_no_workload_counts_with_its_message() -> None:
    cancelled = {"result": "error", "exit_code": 143, "message": "cancelled (SIGTERM)", "workloads": []}
    fleet = merge(reports=[("a", "eu", report("passed", 0)), ("b", "us", cancelled)])
    assert fleet.exit_code == 143
    assert [(m.cluster, m.where, m.problems) for m in fleet.members][1] == (
        "us",
        "run",
        ("cancelled (SIGTERM)",),
    )
    assert (
        verdict_line(fleet=fleet)
        == "rollout-verify: ERROR 1 of 2 not verified (2 clusters, 2 reports), exit 143"
    )


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ([], "it is not a JSON object"),
        ({"result": "passed", "exit_code": 0}, "`workloads` is missing"),
        ({"result": "ok", "exit_code": 0, "workloads": []}, "`result` 'ok' is not passed, failed or error"),
        ({"result": "passed", "exit_code": 7, "workloads": []}, "`exit_code` 7 is not one of"),
        ({"result": "passed", "exit_code": True, "workloads": []}, "`exit_code` is missing or not a int"),
        (
            {"result": "passed", "exit_code": 0, "workloads": [{"kind": "deployment"}]},
            "`workloads[0]`: `namespace`",
        ),
    ],
)
def test_a_document_that_is_no_report_is_refused_naming_the_file(doc: Any, says: str) -> None:
    with pytest.raises(ConfigError) as e:
        merge(reports=[("reports/eu.json", None, doc)])
    assert str(e.value).startswith('report merge: "reports/eu.json" is not a rollout-verify report (')
    assert says in str(e.value)


def test_arguments_labels_paths_and_outputs() -> None:
    reports, outputs = _merge_arguments(
        ["eu=a.json", "out/b.json", "x/y=z.json", "--junit", "j.xml", "--summary=s.md"]
    )
    assert reports == [("a.json", "eu"), ("out/b.json", None), ("x/y=z.json", None)]
    assert outputs == {"--junit": "j.xml", "--summary": "s.md"}
    for bad, says in ((["a.json", "--junit"], "--junit needs a PATH"), ([], "name the reports"),
                      (["a.json", "--color"], "--color is not one of its flags")):  # fmt: skip
        with pytest.raises(ConfigError, match=says):
            _merge_arguments(bad)


def test_help_shows_the_usage_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    from verify.cli import run

    assert run(argv=["report", "merge", "--help"], environ={}) == 0
    assert capsys.readouterr().out.startswith("usage: rollout-verify report merge [LABEL=]REPORT.json ...")
