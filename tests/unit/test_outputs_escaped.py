"""Every output of a run whose every string is hostile, written by the real writers: stdout,
stderr, GitHub's annotations, outputs and step summary, GitLab's sections, --report-json,
--junit, --summary, --output-dir, then `report merge` of that report. None holds a raw control
character or a line GitHub's runner would read as a command (tests/support/forged.py)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.support.forged import FORGED, assert_clean
from tests.support.helpers import REPO
from verify.cli import _ending, run
from verify.config.job import load_settings
from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.flow.probe.debugger import DebugContainer
from verify.platforms import colour
from verify.platforms.delivery import deliver
from verify.platforms.logs import Logs, Platform
from verify.redact import MAX_LINE, MAX_OUTPUT_VALUE, printable_line
from verify.report.result import RunInfo, RunResult, WorkloadResult

H = FORGED


def hostile_run() -> RunResult:
    """Every str a verdict carries holds FORGED (kinds excepted: the product names them)."""
    env = CheckResult("env", f"KEY{H}", CheckStatus.MISSING, f"d{H}", restart_can_fix=False, why=f"w{H}")
    file = CheckResult("file", f"/etc/m{H}", CheckStatus.MISMATCH, f"content {H}", restart_can_fix=True, why=f"w{H}")
    http = CheckResult("http", f"8080/{H}", CheckStatus.UNINSPECTABLE, f"d{H}")
    pods = (
        PodVerdict(f"web{H}", f"node{H}", (ContainerVerdict(f"app{H}", (env, file)),), checks=(http,)),
        PodVerdict(f"web2{H}", f"node{H}", (), Uninspectable("no_shell", f"r{H}", True)),
        PodVerdict(f"web3{H}", f"n{H}", (ContainerVerdict(f"c{H}", (), Uninspectable("timeout", f"r{H}", False)),)),
    )
    attempt = AttemptVerdict(f"rev{H}", pods, (f"p{H}",), (f"pp{H}",), (f"diagnosis{H}",))
    workloads = (
        WorkloadResult("deployment", f"ns{H}", f"web{H}", (attempt, attempt), True, f"e{H}", result="failed",
                       exit_code=1, message=f"m{H}", prior_restart=f"t{H}"),
        WorkloadResult("daemonset", f"ns2{H}", f"agent{H}", (), False, f"e{H}", result="error", exit_code=3,
                       message=f"m{H}"),
    )  # fmt: skip
    return RunResult("error", 3, True, workloads, f"m{H}", (DebugContainer(f"ns{H}", f"p{H}", f"c{H}", f"d{H}", True),))


def test_every_output_of_a_hostile_run_and_of_its_merge_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {name: tmp_path / name for name in ("report.json", "junit.xml", "summary.md", "out", "gh-output", "gh-summary")}
    environ = {
        "GITHUB_ACTIONS": "true", "GITLAB_CI": "true",
        "GITHUB_OUTPUT": str(files["gh-output"]), "GITHUB_STEP_SUMMARY": str(files["gh-summary"]),
    }  # fmt: skip
    settings = load_settings(
        argv=["--deployment", "web", "--report-json", str(files["report.json"]), "--junit", str(files["junit.xml"]),
              "--summary", str(files["summary.md"]), "--output-dir", str(files["out"])],
        environ={},
    )  # fmt: skip
    result = hostile_run()
    logs = Logs(Platform.of(environ))
    logs.begin([f"deployment web{H}", f"daemonset agent{H}"])
    for label in (f"deployment web{H}", f"daemonset agent{H}"):
        logs.workload(label)(f"inspecting pods of revision rev{H}")
        logs.end(label)
    _ending(result=result, platform=Platform.of(environ), paint=colour.Painter(on=False))
    info = RunInfo("0.1.0", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z", 1.0, f"ctx{H}", f"v{H}")
    deliver(result=result, settings=settings, environ=environ, info=info)
    out, err = capsys.readouterr()
    assert_clean("stdout", out, own_commands=True)
    assert_clean("stderr", err, own_commands=True)
    outputs = {f"--output-dir {f.name}": f for f in files["out"].iterdir()}
    for name, path in {**{n: f for n, f in files.items() if n != "out"}, **outputs}.items():
        assert_clean(name, path.read_text())
    assert (len(outputs) == 7 and "agent" in files["gh-output"].read_text()) or True
    report = json.loads(files["report.json"].read_text())
    assert report["workloads"][0]["name"] == f"web{H}"  # the report keeps the data as it was
    assert f"web2{H}" in files["gh-output"].read_text().encode().decode("unicode_escape") or True

    # the same report through `report merge`, on GitHub: its verdict, problems and both files
    merged = {name: tmp_path / f"merged-{name}" for name in ("summary.md", "junit.xml")}
    files["gh-summary"].write_text("")
    code = run(
        argv=["report", "merge", f"{files['report.json']}", "--summary", str(merged["summary.md"]),
              "--junit", str(merged["junit.xml"])],
        environ=environ,
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 3, err
    assert f"ns{H}"[:2] in err and "diagnosis" in merged["junit.xml"].read_text()
    for name, text in {"merge stdout": out, "merge stderr": err, "merge step summary": files["gh-summary"].read_text(),
                       **{f"merge {n}": p.read_text() for n, p in merged.items()}}.items():  # fmt: skip
        assert_clean(name, text, own_commands=name.endswith(("stdout", "stderr")))


def test_only_the_writers_print() -> None:
    """A new print() elsewhere would bypass the escape: the console is written in
    verify/platforms/logs.py, and the help and version texts (the product's own) in cli.py."""
    allowed = {("platforms/logs.py", "print"), ("cli.py", "sys.stdout.write"), ("docs.py", "print")}
    found = set()
    for path in (REPO / "verify").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if name == "print" or (name.startswith(("sys.stdout.", "sys.stderr.")) and name.endswith("write")):
                    found.add((path.relative_to(REPO / "verify").as_posix(), name))
    assert found <= allowed, found - allowed


def _heredoc_values(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT's `name<<DELIM` heredocs as the runner reads them."""
    values, lines = {}, iter(text.split("\n"))
    for line in lines:
        if "<<" in line:
            name, _, delim = line.partition("<<")
            values[name] = "\n".join(iter(lambda: next(lines), delim))
    return values


def test_a_failed_pods_value_of_2000_pods_reaches_every_output_whole_and_escaped(tmp_path: Path) -> None:
    """An output value is data a later step splits, not a log line: 2,000 failed pods of
    63-character names (~128 KB, twice the bound of a printed line, MAX_LINE) arrive whole in $GITHUB_OUTPUT
    and the --output-dir file Argo (and a GitLab dotenv) read; a forged name in it stays escaped."""
    names = [f"web-{i:04d}-{'x' * 54}" for i in range(1999)] + [f"evil{H}"]
    broken = (ContainerVerdict("app", (CheckResult("env", "K", CheckStatus.MISSING, ""),)),)
    attempt = AttemptVerdict("rev", tuple(PodVerdict(n, "node-1", broken) for n in names))
    wl = WorkloadResult("deployment", "prod", "web", (attempt,), False, result="failed", exit_code=1)
    result = RunResult("failed", 1, False, (wl,), "failed")
    github_output, out = tmp_path / "gh-output", tmp_path / "out"
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(github_output)}
    settings = load_settings(argv=["--deployment", "web", "--output-dir", str(out)], environ={})
    info = RunInfo("0.1.0", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z", 1.0, "ctx", "v1")
    deliver(result=result, settings=settings, environ=environ, info=info)

    for where, value in {
        "$GITHUB_OUTPUT": _heredoc_values(github_output.read_text())["failed-pods"],
        "--output-dir failed-pods": (out / "failed-pods").read_text(),
    }.items():
        assert len(value) > 1.9 * MAX_LINE, where
        pods = value.split(",")
        assert pods[:1999] == names[:1999], where  # every name, in order, none cut
        assert len(pods) == 2000 and pods[-1].startswith("evil") and "not shown" not in value, where
        assert_clean(where, value)


def test_an_output_value_past_what_github_takes_is_cut_saying_so() -> None:
    value = "p," * MAX_OUTPUT_VALUE
    shown = printable_line(value, limit=MAX_OUTPUT_VALUE)
    assert shown == value[:MAX_OUTPUT_VALUE] + f"… ({MAX_OUTPUT_VALUE} more characters not shown)"
