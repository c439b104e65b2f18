"""`report merge`, pure: which cluster a report is, the fleet's exit code, what a failure says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from verify.cli import _merge_arguments
from verify.errors import ConfigError
from verify.report.merge import junit, markdown, merge, verdict_line


def report(result: str, code: int, *, context: str | None = None, **wl: Any) -> dict[str, Any]:
    """A report as --report-json writes it, of one workload; `wl` overrides the workload's fields."""
    workload = {
        "kind": "deployment", "namespace": "shop", "name": "web", "result": result, "exit_code": code,
        "restarted": False, "restarted_by_earlier_run": None, "would_restart": False, "error": None,
        "attempts": [],
    }  # fmt: skip
    workload.update(wl)
    return {
        "result": result, "exit_code": code, "restarted": False, "context": context, "message": "",
        "debug_containers": [], "workloads": [workload],
    }  # fmt: skip


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
    cancelled = {
        **report("error", 143),
        "message": "cancelled (SIGTERM)",
        "workloads": [],
    }
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


EMPTY = {**report("passed", 0), "workloads": []}


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ([], "(it is a list, not an object)"),
        ({"result": "passed", "exit_code": 0}, "(`restarted` is missing)"),
        ({**EMPTY, "result": "ok"}, '(`result` is "ok", not one of "passed", "failed", "error")'),
        ({**EMPTY, "exit_code": 7}, "(`exit_code` is 7, not one of 0, 1, 2, 3, 4, 5, 130, 143)"),
        ({**EMPTY, "exit_code": True}, "(`exit_code` is true, not one of 0, 1, 2, 3, 4, 5, 130, 143)"),
        ({**EMPTY, "workloads": [{"kind": "deployment"}]}, "(`workloads[0].namespace` is missing)"),
        ({**EMPTY, "extra": 1}, "(`extra` is not a field of a version 1 report)"),
        ({**EMPTY, "exit_code": 1}, '(`result` is "passed" but its exit_code 1 means failed)'),
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


def test_a_wrong_type_deep_inside_a_report_is_named_by_its_path() -> None:
    check = {"type": "env", "target": "K", "status": 5, "detail": ""}
    pod = {"name": "web-1", "node": "n", "status": "missing", "reason": None, "checks": [],
           "containers": [{"name": "app", "status": "missing", "reason": None, "checks": [check]}]}  # fmt: skip
    attempt = {"revision": "2", "problems": [], "diagnosis": [], "pods": [pod]}
    with pytest.raises(ConfigError) as e:
        merge(reports=[("eu.json", None, report("failed", 1, attempts=[attempt]))])
    assert "(`workloads[0].attempts[0].pods[0].containers[0].checks[0].status` is 5, not one of " in str(e.value)


def test_a_report_passed_at_the_top_with_a_workload_in_error_is_refused() -> None:
    doc = {**report("error", 4), "result": "passed", "exit_code": 0}
    with pytest.raises(ConfigError) as e:
        merge(reports=[("eu.json", None, doc)])
    assert str(e.value) == (
        'report merge: "eu.json" is not a rollout-verify report (`workloads[0].result` is "error" (exit 4) '
        "but the report's result is \"passed\" (exit 0): a run ends with the most fundamental of its "
        "workloads' codes); pass the files --report-json wrote"
    )
    cancelled = {**report("passed", 0), "result": "error", "exit_code": 143}  # a signal outranks all
    assert merge(reports=[("eu.json", None, cancelled)]).exit_code == 143


HEAD = b'{"result": "passed", "exit_code": 0, "restarted": false, "message": "", "debug_containers": [], '


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (HEAD + b'"workloads": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
         "(`workloads[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]…(+185 levels)` is nested more than 200 "
         "levels deep (line 1, column 310); a report nests at most 11)"),
        (b'{"a": ' * 200_000 + b"1" + b"}" * 200_000, "(`a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a…(+185 levels)` is nested"),
        (HEAD + b'"workloads": [{"kind": "deployment", "namespace": ["shop"]}]}',
         "(`workloads[0].namespace` is a list, not a string)"),
        (HEAD + b'"workloads": [], "duration_seconds": NaN}', "(it is not JSON: expected value at line 1"),
        (b"\xff\xfe{}", "(it is not JSON: "),
        (HEAD + b'"workloads": []', "(it is not JSON: EOF while parsing an object at line 1 column 111)"),
    ],
    ids=["200000-deep-list", "200000-deep-object", "wrong-type", "nan", "utf-16", "truncated"],
)  # fmt: skip
def test_a_hostile_report_exits_2_in_one_line_naming_the_file_and_the_field(
    data: bytes, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from verify.cli import run

    (tmp_path / "hostile.json").write_bytes(data)
    code = run(argv=["report", "merge", str(tmp_path / "hostile.json"), "--summary", str(tmp_path / "s.md")], environ={})
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith(f'rollout-verify: error: report merge: "{tmp_path}/hostile.json" is not a rollout-verify report (')
    assert says in err and err.count("\n") == 1, err
    assert not (tmp_path / "s.md").exists()


def test_a_report_larger_than_any_report_is_refused_unparsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from verify.cli import run
    from verify.report import schema

    monkeypatch.setattr(schema, "MAX_BYTES", 1 << 20)
    (tmp_path / "big.json").write_bytes(b" " * (1 << 20) + b"{}")
    assert run(argv=["report", "merge", str(tmp_path / "big.json")], environ={}) == 2
    assert "is not a rollout-verify report (it is larger than 1 MiB)" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_report_help_is_the_subcommands_not_the_runs(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    from verify.cli import run

    assert run(argv=["report", flag], environ={}) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: rollout-verify report merge [LABEL=]REPORT.json ...")
    assert "  merge  Merge the --report-json files" in out
    assert "--expect-env" not in out and "--deployment" not in out  # the run's flags are not report's
