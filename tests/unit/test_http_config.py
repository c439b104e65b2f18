"""--expect-http parsing, selectors, --config files and HTTP verdicts: pure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verify.config.file import load_targets
from verify.config.job import load_job
from verify.config.values import check_selector, parse_http_check
from verify.errors import ConfigError, ConfigFileError
from verify.findings import CheckStatus, HttpObservation, Uninspectable
from verify.flow.judge import judge_http as http_check
from verify.flow.judge import same_value
from verify.flow.probe.http_probe import field_value, proxy_path
from verify.model import HttpExpectation


@pytest.mark.parametrize(
    ("text", "port", "path", "status"),
    [
        ("8080/healthz", 8080, "/healthz", 200),
        ("8080/config=503", 8080, "/config", 503),
        ("80/", 80, "/", 200),
        ("9090/metrics?x=1", 9090, "/metrics?x=1", 200),
        ("9090/q?a=b=204", 9090, "/q?a=b", 204),
    ],
)
def test_http_checks_parse_port_path_and_status(text: str, port: int, path: str, status: int) -> None:
    check = parse_http_check(text)
    assert (check.port, check.path, check.status) == (port, path, status)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("healthz", "is not PORT/PATH"),
        ("0/x", "no valid port"),
        ("70000/x", "no valid port"),
        ("http/x", "no valid port"),
        ("8080/a b", "invalid path"),
        ("8080/x=999", "invalid status"),
        ("8080/../../secrets/web", '"." or ".." segment'),
        ("8080/a/%2E%2E/b", '"." or ".." segment'),
    ],
)
def test_bad_http_checks_are_one_line_config_errors(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--deployment", "web", "--expect-http", text], environ={})
    message = str(info.value)
    assert needle in message and message.startswith("--expect-http: ") and "\n" not in message
    assert message.endswith("(VERIFY_EXPECT_HTTP)")


@pytest.mark.parametrize(
    "selector",
    ["app=web", "app.kubernetes.io/part-of=shop,tier!=db", "tier in (web, api),!legacy", "env", "a==b"],
)
def test_valid_label_selectors_pass(selector: str) -> None:
    assert check_selector(selector) == selector


@pytest.mark.parametrize("selector", ["app=", "=web", "app=web,", "tier in web", "a b=c", "app=we b"])
def test_invalid_label_selectors_fail_with_the_flag(selector: str) -> None:
    if selector == "app=":  # an empty value is valid for the API server
        assert check_selector(selector) == selector
        return
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--selector", selector], environ={})
    assert str(info.value).startswith("--selector: ") and "not a valid label selector" in str(info.value)


def test_nothing_named_is_a_config_error_naming_every_way_to_name_workloads() -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=[], environ={})
    assert "--target KIND/NAME" in str(info.value) and "--selector" in str(info.value)


def test_targets_from_flags_env_and_deployment_shorthand_are_deduplicated() -> None:
    job = load_job(
        argv=["--deployment", "web", "--target", "deployment/web", "--target", "sts/db"],
        environ={"VERIFY_EXPECT_ENV": "A"},
    )
    assert [str(t.ref) for t in job.targets] == ["deployment/web", "statefulset/db"]
    job = load_job(argv=[], environ={"VERIFY_TARGETS": "ds/agent\nsts/db"})
    assert [str(t.ref) for t in job.targets] == ["daemonset/agent", "statefulset/db"]


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "verify.yaml"
    path.write_text(text)
    return str(path)


def test_config_targets_override_run_level_expectations_field_by_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "targets:\n"
        "  - target: deployment/web\n"
        "    expect-http:\n"
        "      - 8080/healthz\n"
        "      - {port: 8080, path: /config, json: {field: app.version, equals: 42}}\n"
        "  - target: sts/db\n"
        "    namespace: data\n"
        "    expect-env: [PGPASSWORD]\n"
        "    restart: never\n",
    )
    job = load_job(argv=["--config", path, "--expect-env", "RUN_LEVEL"], environ={})
    web, db = job.targets
    assert web.expect_env == ("RUN_LEVEL",) and web.restart == "once" and web.from_spec is False
    assert [c.label for c in web.expect_http] == ["8080/healthz", "8080/config"]
    assert web.expect_http[1].field == "app.version" and json.loads(web.expect_http[1].equals) == 42
    assert (db.ref.kind, db.namespace, db.expect_env, db.restart) == (
        "statefulset",
        "data",
        ("PGPASSWORD",),
        "never",
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[]", ':1: must be a mapping with a "targets" list'),
        ("targets: []\n", ':1: "targets" must be a non-empty list'),
        ("targets:\n  - deployment/web\n", ":2: targets[0]: must be a mapping"),
        ("target:\n  - x\n", ':1: unknown key "target"; the file holds only "targets"'),
        ("targets:\n  - expect-env: [A]\n", ":2: targets[0]: has no target"),
        (
            "targets:\n  - target: deployment/web\n    expect-http:\n      - {port: 8080, path: /c, json: {field: v}}\n",
            ':3: targets[0] (deployment/web): expect-http: "8080/c" names JSON field "v" but no expected value',
        ),
        (
            "targets:\n  - target: deployment/web\n    restart: always\n",
            ':3: targets[0] (deployment/web): restart: "always" is not a restart mode',
        ),
        (
            "targets:\n  - target: deployment/web\n    expect-env: 5\n",
            "expect-env: a number (content not shown) is not a text or a list",
        ),
        (
            "targets:\n  - target: deployment/web\n    containers: true\n",
            "containers: true/false (content not shown) is not a text",
        ),
        (
            "targets:\n  - target: deployment/web\n    expect-http: [{port: 1, path: /v, json: {field: d, equals: 2024-01-01}}]\n",
            "which is not a JSON value; quote it",
        ),
        (
            "targets:\n  - target: deployment/web\n    expect-env: " + "[" * 3000 + "]" * 3000 + "\n",
            "nested too deeply",
        ),
        (
            "targets:\n  - target: deployment/web\n    expect-http: [{port: 1, path: /v, json: {field: d, equals: .nan}}]\n",
            "which is not a JSON value; quote it",
        ),
        (
            "targets:\n  - target: deployment/web\n    expect-http: [{port: 1, path: /v, json: {field: d, equals: -.inf}}]\n",
            "which is not a JSON value; quote it",
        ),
        (
            "targets:\n  - target: deployment/web\n    namespace: Prod\n",
            ':3: targets[0] (deployment/web): namespace: "Prod" is not a valid namespace name',
        ),
    ],
)
def test_config_file_errors_name_the_line(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigFileError) as info:
        load_targets(path=path)
    assert str(info.value).startswith(path + ":") and needle in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_config_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--config", str(tmp_path / "nope.yaml")], environ={})
    assert "cannot read it" in str(info.value) and str(info.value).endswith("(VERIFY_CONFIG)")


def test_a_target_named_twice_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path, "targets:\n  - target: deployment/web\n")
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--config", path, "--deployment", "web"], environ={})
    assert "deployment/web is also named by --target/--deployment" in str(info.value)


CHECK = HttpExpectation(
    port=8080, path="/config", field="version", equals='"42"', origin="configmap web/version"
)


@pytest.mark.parametrize(
    ("observation", "status", "detail"),
    [
        (HttpObservation(CHECK, status=200, value='"42"'), CheckStatus.OK, ""),
        (HttpObservation(CHECK, status=200, value="42"), CheckStatus.OK, ""),
        (
            HttpObservation(CHECK, status=503, value='"42"'),
            CheckStatus.MISMATCH,
            "answered HTTP 503, expected 200",
        ),
        (HttpObservation(CHECK, status=200), CheckStatus.MISMATCH, "has no JSON field version in its answer"),
        (
            HttpObservation(CHECK, status=200, value='"41"'),
            CheckStatus.MISMATCH,
            'JSON field version is "41", expected "42" (configmap web/version)',
        ),
        (
            HttpObservation(CHECK, error=Uninspectable("unreachable", "port 8080 unreachable", False)),
            CheckStatus.UNINSPECTABLE,
            "port 8080 unreachable",
        ),
    ],
)
def test_http_verdicts(observation: HttpObservation, status: CheckStatus, detail: str) -> None:
    result = http_check(observation)
    assert (result.type, result.subject, result.status, result.detail) == (
        "http",
        "8080/config",
        status,
        detail,
    )


def test_json_values_compare_by_value_and_strings_match_scalars() -> None:
    assert same_value(expected="true", actual="true")
    assert same_value(expected='"true"', actual="true")
    assert not same_value(expected="1", actual="true")
    assert not same_value(expected='"x"', actual='["x"]')
    assert same_value(expected='{"a": 1}', actual='{"a": 1}')


def test_json_fields_are_found_by_dotted_path_and_list_index() -> None:
    body = b'{"app": {"versions": [{"id": 7}]}, "ok": true}'
    assert field_value(body, "app.versions.0.id") == "7"
    assert field_value(body, "ok") == "true"
    assert field_value(body, "app.missing") is None
    assert field_value(b"not json", "ok") is None


def test_proxy_path_keeps_the_query_and_escapes_the_path() -> None:
    check = HttpExpectation(port=8080, path="/a b/c?x=1&y=2")
    assert proxy_path(namespace="ns", pod="web-1", check=check) == (
        "/api/v1/namespaces/ns/pods/web-1:8080/proxy/a%20b/c?x=1&y=2"
    )


@pytest.mark.parametrize(
    ("var", "meant"), [("VERIFY_EXPECT_ENVS", "VERIFY_EXPECT_ENV"), ("VERIFY_TARGET", "VERIFY_TARGETS")]
)
def test_a_misspelled_setting_variable_is_an_error_not_silence(var: str, meant: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_job(argv=["--deployment", "web"], environ={var: "x"})
    assert str(info.value) == f"{var} is not a setting; did you mean {meant}?"


def test_other_tools_verify_variables_are_left_alone() -> None:
    job = load_job(argv=["--deployment", "web"], environ={"VERIFY_SSL": "false", "VERIFY_TOKEN_URL": "x"})
    assert [str(t.ref) for t in job.targets] == ["deployment/web"]
