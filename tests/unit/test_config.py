"""Settings contract: VERIFY_* env, CLI overrides, and one-line errors that name the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from verify.config.flags import build_parser
from verify.config.job import load_job, load_settings, settings_fields
from verify.config.values import parse_duration
from verify.errors import ConfigError
from verify.model import FileSpec

HEX = "ab" * 32
BASE = {"VERIFY_DEPLOYMENT": "web"}


def test_defaults_apply_when_only_deployment_is_set() -> None:
    s = load_settings(argv=[], environ=BASE)
    assert (s.deployment, s.namespace, s.restart) == ("web", None, "once")
    assert (s.timeout, s.exec_timeout, s.concurrency, s.volume_grace) == (600, 30, 32, 90)
    assert s.containers == [] and s.expect_env == [] and s.expect_file == []
    assert s.from_spec is None and s.report_json is None


def test_settings_do_not_read_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFY_DEPLOYMENT", "from-os")
    monkeypatch.setenv("VERIFY_NAMESPACE", "os-ns")
    s = load_settings(argv=[], environ=BASE)
    assert (s.deployment, s.namespace) == ("web", None)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("A,B", ["A", "B"]),
        ("A\nB\n", ["A", "B"]),
        (" A , B ,\n C ", ["A", "B", "C"]),
        ("A,A", ["A"]),
        ("", []),
    ],
)
def test_expect_env_splits_on_commas_and_newlines(raw: str, expected: list[str]) -> None:
    s = load_settings(argv=[], environ={**BASE, "VERIFY_EXPECT_ENV": raw})
    assert s.expect_env == expected


def test_containers_env_is_split_not_json_decoded() -> None:
    s = load_settings(argv=[], environ={**BASE, "VERIFY_CONTAINERS": "app,sidecar"})
    assert s.containers == ["app", "sidecar"]


def test_expect_file_env_is_newline_separated_and_parsed() -> None:
    raw = f"/etc/a=sha256:{HEX.upper()}\n/cm/script.py=configmap:testcm/script.py\n"
    raw += "/run/token=secret:app/token"
    s = load_settings(argv=[], environ={**BASE, "VERIFY_EXPECT_FILE": raw})
    assert s.expect_file == [
        FileSpec(path="/etc/a", source="sha256", digest=HEX),
        FileSpec(path="/cm/script.py", source="configmap", name="testcm", key="script.py"),
        FileSpec(path="/run/token", source="secret", name="app", key="token"),
    ]


def test_path_containing_equals_splits_on_last_equals() -> None:
    s = load_settings(argv=["--expect-file", f"/a=b/c=sha256:{HEX}"], environ=BASE)
    assert s.expect_file[0].path == "/a=b/c"


def test_cli_flags_override_env_values() -> None:
    env = {**BASE, "VERIFY_NAMESPACE": "env-ns", "VERIFY_TIMEOUT": "5m", "VERIFY_RESTART": "once"}
    s = load_settings(
        argv=["-n", "cli-ns", "--timeout", "90", "--restart", "never", "--deployment", "api"],
        environ=env,
    )
    assert (s.namespace, s.timeout, s.restart, s.deployment) == ("cli-ns", 90, "never", "api")


def test_repeatable_flags_replace_the_env_list() -> None:
    env = {**BASE, "VERIFY_EXPECT_ENV": "A,B", "VERIFY_CONTAINERS": "app"}
    s = load_settings(argv=["--expect-env", "C", "--expect-env", "D", "--container", "side"], environ=env)
    assert s.expect_env == ["C", "D"]
    assert s.containers == ["side"]


@pytest.mark.parametrize(
    ("argv", "env", "fail_fast", "min_ready"),
    [
        ([], {}, True, 5.0),
        # the pipelines pass an empty input as "" (unset) and their words as text
        ([], {"VERIFY_FAIL_FAST": "", "VERIFY_MIN_READY": ""}, True, 5.0),
        ([], {"VERIFY_FAIL_FAST": "false", "VERIFY_MIN_READY": "30s"}, False, 30.0),
        (["--no-fail-fast", "--min-ready", "0"], {}, False, 0.0),
        (["--fail-fast", "--min-ready", "1m"], {"VERIFY_FAIL_FAST": "false", "VERIFY_MIN_READY": "5"}, True, 60.0),
    ],
)
def test_fail_fast_is_on_and_the_settle_window_5s_unless_said_otherwise(
    argv: list[str], env: dict[str, str], fail_fast: bool, min_ready: float
) -> None:
    s = load_settings(argv=argv, environ={**BASE, **env})
    assert (s.fail_fast, s.min_ready) == (fail_fast, min_ready)


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        ([], {}, None),
        (["--from-spec"], {}, True),
        (["--no-from-spec"], {"VERIFY_FROM_SPEC": "true"}, False),
        ([], {"VERIFY_FROM_SPEC": "false"}, False),
    ],
)
def test_from_spec_is_tri_state(argv: list[str], env: dict[str, str], expected: bool) -> None:
    with_expectation = {**BASE, "VERIFY_EXPECT_ENV": "A", **env}
    assert load_settings(argv=argv, environ=with_expectation).from_spec is expected


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90),
        ("90s", 90),
        ("10m", 600),
        ("1h", 3600),
        ("1m30s", 90),
        ("1.5", 1.5),
        ("500ms", 0.5),
    ],
)
def test_durations_accept_units(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)
    s = load_settings(argv=["--exec-timeout", text], environ=BASE)
    assert s.exec_timeout == pytest.approx(seconds)


def test_empty_env_values_count_as_unset() -> None:
    s = load_settings(argv=[], environ={**BASE, "VERIFY_NAMESPACE": "", "VERIFY_TIMEOUT": ""})
    assert s.namespace is None and s.timeout == 600


@pytest.mark.parametrize(
    ("argv", "env", "field", "needle"),
    [
        ([], {}, "targets", "--target: nothing to verify; name a workload (web, deploy/web, sts/db"),
        (["--deployment", "Web_1"], {}, "deployment", '"Web_1" is not a valid Deployment name'),
        (["--expect-env", "1BAD"], BASE, "expect_env", '--expect-env: "1BAD" is not an env var'),
        ([], {**BASE, "VERIFY_EXPECT_ENV": "A=1"}, "expect_env", "VERIFY_EXPECT_ENV"),
        (["--expect-file", "rel=sha256:" + HEX], BASE, "expect_file", "absolute path"),
        (["--expect-file", "/a=sha256:abc"], BASE, "expect_file", "64 hex digits"),
        (["--expect-file", "/a=configmap:cm"], BASE, "expect_file", "configmap:<name>/<key>"),
        (["--expect-file", "/a"], BASE, "expect_file", "is not PATH=SPEC"),
        (["--expect-file", "/a=" + HEX], BASE, "expect_file", "has no source"),
        (
            ["--expect-file", f"/a=sha256:{HEX}", "--expect-file", f"/a=sha256:{HEX}"],
            BASE,
            "expect_file",
            "more than once",
        ),
        (["--restart", "always"], BASE, "restart", 'use "once" or "never"'),
        (["--timeout", "5y"], BASE, "timeout", '--timeout: "5y" is not a duration'),
        (["--timeout", "0"], BASE, "timeout", "longer than zero"),
        (["--concurrency", "0"], BASE, "concurrency", "1..512"),
        (["--concurrency", "513"], BASE, "concurrency", "1..512"),
        (["--concurrency", "many"], BASE, "concurrency", "whole number"),
        ([], {**BASE, "VERIFY_FROM_SPEC": "maybe"}, "from_spec", "use true or false"),
        (["-n", "Prod"], BASE, "namespace", "namespace name"),
        (["--container", "App"], BASE, "containers", "container name"),
    ],
)
def test_invalid_input_raises_one_line_config_error(
    argv: list[str], env: dict[str, str], field: str, needle: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=argv, environ=env)
    text = str(info.value)
    assert info.value.field == field
    assert needle in text
    assert "\n" not in text
    assert text.endswith(")") and "VERIFY_" in text


def test_unknown_source_error_reads_exactly_as_documented() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--expect-file", "/cm/x=foo:bar"], environ=BASE)
    assert str(info.value) == (
        '--expect-file: "/cm/x=foo:bar" has unknown source "foo"; use sha256:<hex>, '
        "configmap:<name>/<key> or secret:<name>/<key> (VERIFY_EXPECT_FILE)"
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--bogus"], "--bogus is not a flag; see --help"),
        (["--timeout"], "--timeout"),
        (["Not_A_Name"], "argument 1 is not KIND/NAME or a Deployment name"),
    ],
)
def test_argparse_errors_become_one_line_config_errors_without_a_doubled_prefix(
    argv: list[str], said: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=argv, environ=BASE)
    assert "\n" not in str(info.value)
    assert said in str(info.value)
    assert "rollout-verify" not in str(info.value)  # the cli prefixes it once


def test_help_mentions_every_env_var() -> None:
    text = build_parser().format_help()
    for _field, env, flag, _desc in settings_fields():
        assert env in text
        assert flag in text


def test_settings_fields_cover_every_setting_with_description() -> None:
    rows = settings_fields()
    names = [r[0] for r in rows]
    assert "deployment" in names and "volume_grace" in names and len(names) == len(set(names))
    assert rows[names.index("containers")][:3] == ("containers", "VERIFY_CONTAINERS", "--container")
    assert all(r[3] for r in rows)


def test_no_from_spec_without_expectations_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        load_job(argv=["--deployment", "web", "--no-from-spec"], environ={})
    assert "nothing to verify" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["inf", "nan", "1e400", "-inf", "25h"])
def test_non_finite_or_huge_durations_are_config_errors(text: str) -> None:
    from verify.config.job import load_settings
    from verify.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        load_settings(argv=["--deployment", "web", "--expect-env", "A", "--exec-timeout", text], environ={})
    assert "--exec-timeout" in str(err.value) and "\n" not in str(err.value)


def test_a_key_and_value_given_to_expect_env_is_refused_without_showing_the_value() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--expect-env", "A,DB_PASSWORD=hunter2"], environ=BASE)
    text = str(info.value)
    assert "hunter2" not in text
    assert '"DB_PASSWORD=…" (its value not shown) is not an env var name' in text
    assert "--expect-env" in text and "\n" not in text


def test_stray_arguments_are_named_without_the_values_around_them() -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--deployment", "web", "--kubeconfig-data", "c2VjcmV0", "--tok=abc", "x"], environ={})
    text = str(info.value)
    assert "c2VjcmV0" not in text and "abc" not in text and " x" not in text
    assert info.value.lines == (
        "--kubeconfig-data is not a flag; did you mean --kubeconfig?",
        "--tok is not a flag; see --help (2 values after them not shown)",
    )


@pytest.mark.parametrize(
    ("flag", "env_var"),
    [
        ("--report-json", "VERIFY_REPORT_JSON"),
        ("--junit", "VERIFY_JUNIT"),
        ("--summary", "VERIFY_SUMMARY"),
        ("--output-dir", "VERIFY_OUTPUT_DIR"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_refused_before_the_run(
    flag: str, env_var: str, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ConfigError) as info:
        load_settings(argv=[flag, str(blocker / "sub" / "out")], environ=BASE)
    text = str(info.value)
    assert text.startswith(f"{flag}: ") and text.endswith(f"({env_var})")
    assert f"cannot be written ({blocker} is not a directory); give a writable path" in text


def test_output_paths_in_directories_yet_to_be_made_are_fine(tmp_path: Path) -> None:
    s = load_settings(
        argv=[
            "--report-json",
            str(tmp_path / "new" / "deeper" / "r.json"),
            "--output-dir",
            str(tmp_path / "o"),
        ],
        environ=BASE,
    )
    assert s.report_json is not None and s.output_dir is not None


def test_a_second_deployment_flag_is_refused_rather_than_dropping_the_first() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--deployment", "web", "--deployment", "api"], environ={})
    text = str(info.value)
    assert text.startswith("--deployment: names one Deployment but was given 2")
    assert "--target deployment/NAME" in text and "(VERIFY_DEPLOYMENT)" in text


def test_the_same_deployment_named_twice_is_one_target() -> None:
    job = load_job(argv=["--deployment", "web", "--deployment", "web", "--expect-env", "A"], environ={})
    assert [str(p.ref) for p in job.targets] == ["deployment/web"]


def test_help_lists_the_exit_codes_as_the_readme_does() -> None:
    text = " ".join(build_parser().format_help().split())
    for code in ("0 every pod verified", "1 verification failed", "2 bad configuration", "5 internal error"):
        assert code in text
    assert "3 a workload or source cannot be read" in text and "4 the rollout did not complete" in text


def test_every_wrong_setting_is_said_at_once_one_line_each_naming_its_own_flag_and_variable() -> None:
    env = {"VERIFY_TIMEOUT": "abc", "VERIFY_CONCURRENCY": "0", "VERIFY_COLOR": "blue"}
    with pytest.raises(ConfigError) as e:
        load_settings(argv=["--deployment", "web"], environ=env)
    lines = e.value.lines
    assert len(lines) == 3, lines
    assert lines[0].startswith("--timeout:") and lines[0].endswith("(VERIFY_TIMEOUT)")
    assert lines[1].startswith("--concurrency:") and lines[1].endswith("(VERIFY_CONCURRENCY)")
    assert lines[2] == "--color: \"blue\" is not one of 'auto', 'always' or 'never' (VERIFY_COLOR)"


def test_a_negative_duration_with_a_unit_is_refused_by_its_own_check_not_taken_for_a_flag() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--timeout", "-1m", "--volume-grace", "-30s"], environ=BASE)
    assert info.value.lines == (
        '--timeout: "-1m" must be longer than zero (VERIFY_TIMEOUT)',
        '--volume-grace: "-30s" must not be negative (VERIFY_VOLUME_GRACE)',
    )
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--timeout=--5m"], environ=BASE)
    assert 'is not a duration' in str(info.value)


def test_a_switch_given_a_value_says_how_to_pass_it() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--dry-run=yes"], environ=BASE)
    assert str(info.value) == "--dry-run takes no value; pass --dry-run or --no-dry-run, see --help"


def test_a_misspelt_variable_is_said_with_every_other_wrong_setting() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=[], environ={**BASE, "VERIFY_EXPECT_ENVS": "A", "VERIFY_TIMEOUT": "10x"})
    assert info.value.lines == (
        "VERIFY_EXPECT_ENVS is not a setting; did you mean VERIFY_EXPECT_ENV?",
        '--timeout: "10x" is not a duration; use e.g. 90, 90s, 10m or 1m30s (VERIFY_TIMEOUT)',
    )


def test_an_http_check_from_a_config_file_is_shown_as_written_not_joined(tmp_path: Path) -> None:
    from verify.config.file import load_targets
    from verify.errors import ConfigFileError

    path = tmp_path / "verify.yaml"
    path.write_text("targets:\n  - target: deployment/web\n    expect-http:\n      - {port: 8080, path: config}\n")
    with pytest.raises(ConfigFileError) as info:
        load_targets(path=str(path))
    assert '"port 8080, path config" has an invalid path "config"' in str(info.value)


def test_a_config_files_problems_are_said_with_the_other_wrong_settings(tmp_path: Path) -> None:
    config = tmp_path / "verify.yaml"
    config.write_text("targets:\n  - target: deployment/web\n    restart: sometimes\n")
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--config", str(config), "--timeout", "10x"], environ={})
    assert info.value.lines == (
        '--timeout: "10x" is not a duration; use e.g. 90, 90s, 10m or 1m30s (VERIFY_TIMEOUT)',
        f'--config: {config}:3: targets[0] (deployment/web): restart: "sometimes" is not a restart mode; '
        'use "once" or "never" (VERIFY_CONFIG)',
    )
