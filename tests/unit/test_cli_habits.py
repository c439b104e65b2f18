"""The command line's habits: --version, defaults in --help, no abbreviations, "did you mean" for a
mistyped flag, kubectl-style positional targets, every config-file mistake at once; each bad input
one line on stderr and exit 2 before anything is sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from verify import __version__
from verify.cli import run
from verify.config.job import load_job
from verify.errors import ConfigError
from verify.model import WorkloadRef
from verify.report.jsondoc import to_json
from verify.report.result import RunInfo, RunResult

# no kubeconfig anywhere: a run that got past its arguments would fail to load one, not exit 2 here
NOWHERE = {"KUBECONFIG": "/nonexistent/kubeconfig", "HOME": "/nonexistent"}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run(argv=argv, environ=NOWHERE)
    out, err = capsys.readouterr()
    return code, out, err


def test_version_prints_the_package_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["--version"], capsys)
    assert (code, out, err) == (0, f"rollout-verify {__version__}\n", "")


def test_help_shows_each_default_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--help"], capsys)
    text = " ".join(out.split())
    assert code == 0
    for shown in (
        "VERIFY_TIMEOUT; default 10m",
        "VERIFY_EXEC_TIMEOUT; default 30s",
        "default 32",
        "default once",
    ):
        assert shown in text


def test_a_cut_short_flag_is_an_error_naming_the_flag_meant(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["--dep", "web"], capsys)
    assert code == 2 and out == ""
    assert (
        err
        == "rollout-verify: error: --dep is not a flag; did you mean --deployment?\n"
    )


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("--namspace", "--namespace"), ("--expect-envs", "--expect-env"), ("--timout", "--timeout")],
)
def test_a_mistyped_flag_gets_a_did_you_mean(typed: str, meant: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=["web", typed, "x"], environ={})
    assert info.value.lines[0].startswith(f"{typed} is not a flag; did you mean {meant}?")


def test_a_prefix_of_several_flags_names_them_all() -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=["web", "--expect", "A"], environ={})
    assert "did you mean --expect-env, --expect-file or --expect-http?" in str(info.value)


def test_several_unknown_flags_are_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["web", "--dep", "--colour", "--verbose"], capsys)
    assert code == 2
    assert err.splitlines() == [
        "rollout-verify: error: --dep is not a flag; did you mean --deployment?",
        "rollout-verify: error: --colour is not a flag; did you mean --color?",
        "rollout-verify: error: --verbose is not a flag; see --help",
    ]


def test_positional_targets_take_kubectl_spellings_and_a_bare_name_is_a_deployment() -> None:
    job = load_job(argv=["deploy/web", "--timeout", "5m", "statefulset/db", "checkout"], environ={})
    assert [p.ref for p in job.targets] == [
        WorkloadRef("deployment", "web"),
        WorkloadRef("statefulset", "db"),
        WorkloadRef("deployment", "checkout"),
    ]
    assert job.settings.timeout == 300


def test_a_word_that_is_no_name_is_refused_without_being_shown(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["web", "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0"], capsys)
    assert code == 2 and "eyJ" not in err
    assert err == (
        "rollout-verify: error: argument 2 is not KIND/NAME or a Deployment name (not shown); "
        "give e.g. deploy/web, statefulset/db or web\n"
    )


def test_a_positional_of_an_unknown_kind_names_the_kinds() -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=["pod/web"], environ={})
    assert str(info.value).startswith('argument 1: "pod" is not a workload kind')


def test_every_config_file_mistake_is_reported_at_once_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "verify.yaml"
    path.write_text(
        "targets:\n"
        "  - target: deployment/web\n"
        "    expect-env: ['1BAD']\n"
        "    restart: sometimes\n"
        "  - target: pod/x\n"
        "  - target: statefulset/db\n"
        "    colour: red\n"
    )
    code, out, err = _run(["--config", str(path)], capsys)
    lines = err.splitlines()
    assert code == 2 and out == ""
    assert [line.split(": ", 3)[3].split(" ")[0] for line in lines] == [
        f"{path}:3:",
        f"{path}:4:",
        f"{path}:5:",
        f"{path}:7:",
    ]
    assert all(line.startswith("rollout-verify: error: --config: ") for line in lines)
    assert "restart:" in lines[1] and '"pod" is not a workload kind' in lines[2] and '"colour"' in lines[3]


def test_config_file_mistakes_stop_at_20_and_say_so(tmp_path: Path) -> None:
    path = tmp_path / "verify.yaml"
    path.write_text("targets:\n" + "".join(f"  - target: pod/x{i}\n" for i in range(30)))
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--config", str(path)], environ={})
    assert len(info.value.lines) == 20
    assert info.value.lines[-1].endswith("(the first 20 problems; fix them and run again) (VERIFY_CONFIG)")


def test_the_report_says_what_ran_when_and_against_what() -> None:
    info = RunInfo(
        version=__version__,
        started="2025-01-01T00:00:00.000Z",
        ended="2025-01-01T00:00:02.500Z",
        duration=2.5,
        context="kind-ci",
        server_version="v1.31.0",
    )
    doc = to_json(run=RunResult("passed", 0, False, (), "ok"), info=info)
    assert {
        k: doc[k]
        for k in ("version", "started_at", "ended_at", "duration_seconds", "context", "server_version")
    } == {
        "version": __version__,
        "started_at": "2025-01-01T00:00:00.000Z",
        "ended_at": "2025-01-01T00:00:02.500Z",
        "duration_seconds": 2.5,
        "context": "kind-ci",
        "server_version": "v1.31.0",
    }
