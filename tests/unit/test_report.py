"""Report rendering: verdict-like problem lines, the headline, and the exact JSON shape."""

from __future__ import annotations

import json
from dataclasses import replace

from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerObservation,
    ContainerVerdict,
    Expectations,
    ExpectedFile,
    PodObservation,
    PodTarget,
    PodVerdict,
    Uninspectable,
)
from verify.flow.judge import judge_attempt
from verify.report.jsondoc import to_json
from verify.report.result import RunResult, WorkloadResult
from verify.report.text import checked_line, problem_lines, verdict_line

GOOD = "1a2b3c4d5e6f" + "0" * 52
BAD = "9f8e7d6c5b4a" + "1" * 52


def ok_pod(name: str, node: str = "node-1") -> PodVerdict:
    return PodVerdict(name, node, (ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.OK),)),))


def workload(*attempts: AttemptVerdict, restarted: bool = False, name: str = "web") -> WorkloadResult:
    return WorkloadResult("deployment", "prod", name, attempts, restarted, None)


def run(result: str, *workloads: WorkloadResult, message: str = "") -> RunResult:
    code = {"passed": 0, "failed": 1, "error": 2}[result]
    restarted = any(w.restarted for w in workloads)
    return RunResult(result, code, restarted, workloads, message)  # type: ignore[arg-type]


def test_problem_lines_name_workload_pod_node_container_and_check() -> None:
    cm = ExpectedFile("/cm/script.py", GOOD, "configmap testcm/script.py")
    exp = Expectations(env=("FEATURE_CREDENTIAL",), files=(cm,), mounts=(("/cm", "configmap"),))
    observations = [
        PodObservation(
            PodTarget("web-7c9", "node-2", ("app",)),
            (ContainerObservation("app", frozenset(), {cm.path: GOOD}),),
        ),
        PodObservation(
            PodTarget("web-abc", "node-1", ("app",)),
            (
                ContainerObservation(
                    "app", frozenset({"FEATURE_CREDENTIAL"}), {cm.path: BAD}, {cm.path: "/cm/..data/script.py"}
                ),
            ),
        ),
        PodObservation(
            PodTarget("web-def", "node-3", ("app",)),
            (ContainerObservation("app", frozenset({"FEATURE_CREDENTIAL"}), {}),),
        ),
        PodObservation(
            PodTarget("web-1", "node-1", ("app",)),
            (ContainerObservation("app", error=Uninspectable("no_shell", "no shell", True)),),
        ),
        PodObservation(
            PodTarget("web-2", "", ("app",)),
            error=Uninspectable("pod_gone", "pod was deleted", False),
        ),
    ]
    verdict = judge_attempt(
        selection_revision="2",
        observations=observations,
        expectations=exp,
        problems=["deployment web: expected 6 pods of revision 2, found 5"],
    )
    assert problem_lines(workload=workload(verdict)) == [
        "deployment web: expected 6 pods of revision 2, found 5",
        "deployment web: pod web-7c9 (node-2) container app lacks env FEATURE_CREDENTIAL",
        "deployment web: pod web-abc (node-1) container app file /cm/script.py differs from "
        "configmap testcm/script.py (expected 1a2b3c4d5e6f, found 9f8e7d6c5b4a)",
        "deployment web: pod web-def (node-3) container app lacks file /cm/script.py "
        "(not found or unreadable)",
        "deployment web: pod web-1 (node-1) container app cannot be inspected: no shell",
        "deployment web: pod web-2 cannot be inspected: pod was deleted",
    ]


def test_problem_lines_only_describe_the_last_attempt() -> None:
    bad = AttemptVerdict(
        "2",
        (
            PodVerdict(
                "web-1",
                "node-1",
                (ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.MISSING),)),),
            ),
        ),
    )
    good = AttemptVerdict("3", (ok_pod("web-9"),))
    assert problem_lines(workload=workload(bad, good, restarted=True)) == []
    assert len(problem_lines(workload=workload(good, bad, restarted=True))) == 1


def test_problem_lines_prefix_bare_problems_and_include_workload_error() -> None:
    wl = WorkloadResult(
        "deployment", "prod", "web", (AttemptVerdict("2", (), ("no pods",)),), False, "timed out"
    )
    assert problem_lines(workload=wl) == [
        "deployment web: timed out",
        "deployment web: no pods",
    ]


def test_verdict_line_for_pass_after_restart() -> None:
    wl = workload(
        AttemptVerdict("2", (ok_pod("web-1"),), ("short",)),
        AttemptVerdict("3", (ok_pod("web-1"), ok_pod("web-2"))),
        restarted=True,
    )
    assert verdict_line(run=run("passed", wl)) == (
        "rollout-verify: PASSED deployment web: 2 pods verified after 1 restart"
    )


def test_verdict_line_for_pass_without_restart_uses_singular() -> None:
    wl = workload(AttemptVerdict("2", (ok_pod("web-1"),)))
    assert verdict_line(run=run("passed", wl)) == "rollout-verify: PASSED deployment web: 1 pod verified"


def test_verdict_line_for_failure_leads_with_what_failed() -> None:
    bad = PodVerdict("web-2", "n", (ContainerVerdict("app", (), Uninspectable("timeout", "t", False)),))
    wl = workload(AttemptVerdict("3", (ok_pod("web-1"), bad)), restarted=True)
    assert verdict_line(run=run("failed", wl)) == (
        "rollout-verify: FAILED deployment web: 1 of 2 pods failed after 1 restart: "
        "container app cannot be inspected: t"
    )


def test_verdict_line_says_failed_workloads_first_and_counts_other_problems_once() -> None:
    """`FAILED deployment shop: 3 pods verified; …` read as a pass: the failed workload leads, with
    what failed; the same problem on several nodes (judged once per node) is one problem."""
    shop = workload(AttemptVerdict("1", (ok_pod("shop-1"), ok_pod("shop-2"), ok_pod("shop-3"))), name="shop")
    stale = [
        PodVerdict(
            f"web-{n}",
            f"node-{n}",
            (
                ContainerVerdict(
                    "app",
                    (
                        CheckResult("env", "KEY", CheckStatus.MISSING, restart_can_fix=False, why=f"why {n}"),
                        CheckResult("file", "/f", CheckStatus.MISSING, restart_can_fix=False, why="no"),
                    ),
                ),
            ),
        )
        for n in (1, 2)
    ]
    web = replace(workload(AttemptVerdict("2", tuple(stale))), result="failed", exit_code=1)
    failed = run("failed", shop, web)
    assert verdict_line(run=failed) == (
        "rollout-verify: FAILED deployment web: 2 of 2 pods failed: container app lacks env KEY "
        "(and 1 more problem); deployment shop: 3 pods verified"
    )


def test_verdict_line_for_error_without_workloads_uses_message() -> None:
    assert verdict_line(run=run("error", message="cannot reach the API server")) == (
        "rollout-verify: ERROR cannot reach the API server"
    )


def test_to_json_has_exact_shape() -> None:
    err = Uninspectable("no_shell", "no shell", True)
    pods = (
        PodVerdict(
            "web-1",
            "node-1",
            (
                ContainerVerdict(
                    "app",
                    (
                        CheckResult("env", "A", CheckStatus.OK),
                        CheckResult("file", "/x", CheckStatus.MISMATCH, "content differs"),
                    ),
                ),
                ContainerVerdict("proxy", (), err),
            ),
        ),
        PodVerdict("web-2", "node-2", (), Uninspectable("pod_gone", "gone", False)),
    )
    wl = workload(AttemptVerdict("2", pods, ("short",)))
    assert to_json(run=run("failed", wl, message="1 failed")) == {
        "result": "failed",
        "exit_code": 1,
        "restarted": False,
        "message": "1 failed",
        "debug_containers": [],
        "workloads": [
            {
                "kind": "deployment",
                "namespace": "prod",
                "name": "web",
                "result": "passed",
                "exit_code": 0,
                "restarted": False,
                "restarted_by_earlier_run": None,
                "would_restart": False,
                "error": None,
                "attempts": [
                    {
                        "revision": "2",
                        "problems": ["short"],
                        "diagnosis": [],
                        "pods": [
                            {
                                "name": "web-1",
                                "node": "node-1",
                                "status": "uninspectable",
                                "reason": None,
                                "checks": [],
                                "containers": [
                                    {
                                        "name": "app",
                                        "status": "mismatch",
                                        "reason": None,
                                        "checks": [
                                            {
                                                "type": "env",
                                                "target": "A",
                                                "status": "ok",
                                                "detail": "",
                                            },
                                            {
                                                "type": "file",
                                                "target": "/x",
                                                "status": "mismatch",
                                                "detail": "content differs",
                                                # a failing check nobody judged: no restart for it
                                                "restart_can_fix": False,
                                                "why": "",
                                            },
                                        ],
                                    },
                                    {
                                        "name": "proxy",
                                        "status": "uninspectable",
                                        "reason": "no shell",
                                        "checks": [],
                                    },
                                ],
                            },
                            {
                                "name": "web-2",
                                "node": "node-2",
                                "status": "uninspectable",
                                "reason": "gone",
                                "checks": [],
                                "containers": [],
                            },
                        ],
                    }
                ],
            }
        ],
    }
    json.dumps(to_json(run=run("failed", wl)))  # serialisable as-is


def test_secret_digest_never_appears_in_any_output() -> None:
    secret_digest = "c0ffee" + "d" * 58
    actual_digest = "beef42" + "e" * 58
    secret = ExpectedFile("/run/token", secret_digest, "secret app/token", secret=True)
    attempts = tuple(
        judge_attempt(
            selection_revision=rev,
            observations=[
                PodObservation(
                    PodTarget("web-1", "node-1", ("app",)),
                    (ContainerObservation("app", file_hashes={secret.path: digest}),),
                )
            ],
            expectations=Expectations(files=(secret,)),
            problems=[],
        )
        for rev, digest in (("2", actual_digest), ("3", actual_digest))
    )
    wl = workload(*attempts, restarted=True)
    result = run("failed", wl, message="verification failed")
    outputs = [
        json.dumps(to_json(run=result)),
        verdict_line(run=result),
        *problem_lines(workload=wl),
    ]
    blob = "\n".join(outputs)
    assert "content differs from secret app/token" in blob
    for digest in (secret_digest, actual_digest):
        for n in (6, 12, 64):
            assert digest[:n] not in blob


def test_attempt_superseded_by_the_restart_is_not_reported_as_the_verdict() -> None:
    from verify.report.outputs import failed_pods

    bad = AttemptVerdict(
        "2",
        (
            PodVerdict(
                "web-1", "node-1", (ContainerVerdict("app", (CheckResult("env", "A", CheckStatus.MISSING),)),)
            ),
        ),
    )
    wl = WorkloadResult(
        "deployment", "default", "web", (bad,), restarted=True, error="forbidden: watch", superseded=True
    )
    result = RunResult(
        result="error", exit_code=3, restarted=True, workloads=(wl,), message="forbidden: watch"
    )
    assert problem_lines(workload=wl) == ["deployment web: forbidden: watch"]
    assert failed_pods(run=result) == []
    assert "failed verification" not in verdict_line(run=result)
    assert (
        to_json(run=result)["workloads"][0]["attempts"][0]["pods"][0]["status"] == "missing"
    )  # history kept


def test_internal_error_names_type_and_place_but_never_the_message() -> None:
    from verify.errors import internal_error

    try:
        raise ValueError("s3cr3t-in-message")
    except ValueError as e:
        line = internal_error(e)
    assert line.startswith("internal error ValueError at test_report.py:")
    assert "s3cr3t" not in line and "\n" not in line


def test_a_pass_says_what_it_checked_counting_each_key_once_per_container() -> None:
    pod = PodVerdict(
        "web-1",
        "node-1",
        (
            ContainerVerdict(
                "app",
                (
                    CheckResult("env", "A", CheckStatus.OK),
                    CheckResult("env", "B", CheckStatus.OK),
                    CheckResult("file", "/etc/app.conf", CheckStatus.OK),
                ),
            ),
            ContainerVerdict("sidecar", (CheckResult("env", "A", CheckStatus.OK),)),
        ),
        checks=(CheckResult("http", "GET :8080/health", CheckStatus.OK),),
    )
    line = checked_line(attempt=AttemptVerdict("1", (pod, ok_pod("web-2"))))
    assert line == "checked 2 pods: 3 env keys, 1 file, 1 HTTP check"
    assert checked_line(attempt=AttemptVerdict("1", (PodVerdict("web-3", "n", ()),))) == (
        "checked 1 pod: running and ready only"
    )


def test_the_end_table_has_one_row_per_workload_with_pods_checks_by_kind_restarts_and_result() -> None:
    from dataclasses import replace

    from verify.report.table import rows

    missing = CheckResult("env", "B", CheckStatus.MISSING)
    http = CheckResult("http", "8080/config", CheckStatus.OK)
    bad = PodVerdict("web-b", "node-2", (ContainerVerdict("app", (missing,)),), checks=(http,))
    web = workload(AttemptVerdict("1", (ok_pod("web-a"), bad)))
    passed = replace(workload(AttemptVerdict("2", (ok_pod("api-a"),)), restarted=True, name="api"))
    gone = WorkloadResult("statefulset", "data", "db", (), False, error="not found", result="error")
    table = rows(run=run("failed", replace(web, result="failed"), passed, gone))
    assert table == [
        ("WORKLOAD", "PODS", "CHECKS", "RESTARTS", "RESULT"),
        ("prod/deployment/web", "1/2", "env 1/2, http 1/1", "0", "failed"),
        ("prod/deployment/api", "1/1", "env 1/1", "1", "passed"),
        ("data/statefulset/db", "-", "-", "0", "error"),
    ]
    alone = rows(run=run("passed", replace(web, attempts=(AttemptVerdict("1", (PodVerdict("w", "n", ()),)),))))
    assert alone[1] == ("deployment/web", "1/1", "running and ready only", "0", "passed")
    dry = replace(web, would_restart=True)
    assert rows(run=run("failed", dry))[1][3] == "0 (dry run: 1)"
    # nothing checked because nothing could be inspected is not "running and ready only"
    refused = Uninspectable("forbidden", "exec forbidden", True)
    crashing = Uninspectable("unstable", "not stable: running after 2 restarts", True)
    blind = AttemptVerdict(
        "1",
        (
            PodVerdict("w-1", "n", (ContainerVerdict("app", (), refused), ContainerVerdict("proxy", (), refused))),
            PodVerdict("w-2", "n", (ContainerVerdict("app", (), crashing),)),
            PodVerdict("w-3", "n", (), Uninspectable("pod_gone", "deleted", True)),
        ),
    )
    cell = rows(run=run("failed", replace(web, attempts=(blind,), result="failed")))[1][2]
    assert cell == "1 pod not inspected, 2 containers not inspected, 1 container not stable"


def test_the_table_writer_escapes_and_aligns_every_cell(capsys: object) -> None:
    import pytest

    from verify.platforms.logs import stdout_table, stdout_verdict

    assert isinstance(capsys, pytest.CaptureFixture)
    stdout_table([("WORKLOAD", "RESULT"), ("deployment/w\x1b[2J\n::error::x", "failed"), ("d/a", "passed")])
    stdout_verdict("rollout-verify: FAILED deployment w", result="failed", paint=lambda t, s: f"<{s}>{t}</>")
    lines = capsys.readouterr().out.splitlines()
    shown = "deployment/w\\x1b[2J ::error::x"  # one line, ESC escaped
    assert lines == [
        "WORKLOAD".ljust(len(shown)) + "  RESULT",
        shown + "  failed",
        "d/a".ljust(len(shown)) + "  passed",
        "rollout-verify: <failed>FAILED</> deployment w",
    ]
