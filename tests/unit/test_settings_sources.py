"""Settings read and check `VERIFY_*` variables exactly as pydantic-settings does for the same
model (the judge here: a BaseSettings twin built from `FIELDS`, with pydantic's own types where
the settings rely on them and the settings' checks as its validators), without importing pydantic
at run time. Values and error words alike."""

from __future__ import annotations

import os
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import pytest
from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from verify.config.messages import error_messages
from verify.config.settings import FIELDS, InvalidSettings, Secret, Settings

_HINTS = get_type_hints(Settings)
_LISTS = {name for name, hint in _HINTS.items() if get_origin(hint) is list}
# checks pydantic ran before its own type check (raw text in) and after it (a str in)
_BEFORE = _LISTS | {"timeout", "exec_timeout", "volume_grace", "min_ready", "concurrency"}
_AFTER = {"namespace", "deployment", "selector", "debug_image", "kubeconfig", "report_json", "junit", "summary", "output_dir"}


def _check(cls: Any, value: Any, info: ValidationInfo) -> Any:
    name = info.field_name or ""
    return FIELDS[name].check(name, value)


def _twin() -> type[BaseSettings]:
    """`Settings` as the pydantic-settings model it was: list fields `NoDecode` (their raw text
    goes to the validators), env prefix VERIFY_, empty values ignored, defaults validated,
    unknown names refused, the two kubeconfig settings exclusive."""

    class Twin(BaseSettings):
        model_config = SettingsConfigDict(
            env_prefix="VERIFY_", env_ignore_empty=True, extra="forbid", validate_default=True
        )

        @model_validator(mode="after")
        def _one_kubeconfig(self) -> Any:
            if getattr(self, "kubeconfig", None) is not None and getattr(self, "kubeconfig_data", None) is not None:
                raise ValueError(
                    "--kubeconfig (VERIFY_KUBECONFIG) and VERIFY_KUBECONFIG_DATA are both set; set only one"
                )
            return self

    fields: dict[str, Any] = {}
    for name, setting in FIELDS.items():
        hint: Any = SecretStr | None if name == "kubeconfig_data" else _HINTS[name]
        if name in _LISTS:
            hint = Annotated[hint, NoDecode]
        default = Field(default_factory=list) if name in _LISTS else setting.default
        fields[name] = (hint, default)
    validators = {
        "before": field_validator(*sorted(_BEFORE), mode="before")(_check),
        "after": field_validator(*sorted(_AFTER), mode="after")(_check),
    }
    return create_model("TwinNoDecode", __base__=Twin, __validators__=validators, **fields)


TWIN = _twin()


def _theirs(environ: dict[str, str], flags: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    for var in list(os.environ):
        if var.lower().startswith("verify_"):
            monkeypatch.delenv(var)
    for var, value in environ.items():
        monkeypatch.setenv(var, value)
    return TWIN(**flags)


def _values(settings: Any) -> dict[str, Any]:
    out = {name: getattr(settings, name) for name in FIELDS}
    secret = out.pop("kubeconfig_data")
    return out | {"kubeconfig_data": None if secret is None else secret.get_secret_value()}


CASES = [
    ({}, {}),
    ({"VERIFY_NAMESPACE": "shop", "VERIFY_TIMEOUT": "10m", "VERIFY_CONCURRENCY": " 8 "}, {}),
    ({"VERIFY_EXPECT_ENV": "A,B\nC", "VERIFY_TARGETS": "deploy/web,sts/db"}, {"expect_env": ["X"]}),
    ({"verify_restart": "never", "Verify_Dry_Run": "true", "VERIFY_FROM_SPEC": "false"}, {}),
    ({"VERIFY_DRY_RUN": "YES", "VERIFY_FROM_SPEC": "0", "VERIFY_COLOR": "never"}, {}),
    ({"VERIFY_SELECTOR": "", "VERIFY_NAMESPACE": ""}, {"namespace": "flag-wins"}),
    ({"VERIFY_KUBECONFIG_DATA": "YXBpVmVyc2lvbjogdjE=", "VERIFY_VOLUME_GRACE": "0"}, {}),
    ({"VERIFY_EXPECT_HTTP": "8080/healthz=200", "VERIFY_CONTAINERS": "app\nsidecar"}, {}),
    ({"VERIFY_UNRELATED": "x", "OTHER": "y"}, {"deployment": "web", "dry_run": True}),
    ({"VERIFY_DEBUG_IMAGE": "busybox:1.36", "VERIFY_SELECTOR": "app in (web,api)"}, {"context": "kind-a"}),
]


@pytest.mark.parametrize(("environ", "flags"), CASES)
def test_settings_are_what_pydantic_settings_reads(
    environ: dict[str, str], flags: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = Settings.from_sources(environ=environ, flags=flags)
    theirs = _theirs(environ, flags, monkeypatch)
    assert _values(ours) == _values(theirs)
    assert any(v not in (None, [], False) for v in _values(ours).values())


@pytest.mark.parametrize(
    ("environ", "flags"),
    [
        ({"VERIFY_TIMEOUT": "-1"}, {}),
        ({"VERIFY_CONCURRENCY": "many"}, {}),
        ({"VERIFY_RESTART": "always"}, {}),
        ({"VERIFY_COLOR": "blue"}, {}),
        ({"VERIFY_DRY_RUN": "maybe", "VERIFY_FROM_SPEC": " true"}, {}),
        ({"VERIFY_EXPECT_ENV": "1BAD", "VERIFY_NAMESPACE": "Prod", "VERIFY_VOLUME_GRACE": "-5"}, {}),
        ({}, {"no_such_setting": "x", "timeout": "0"}),
        ({"VERIFY_KUBECONFIG_DATA": "apiVersion: v1"}, {"kubeconfig": "/tmp/kc"}),
        ({}, {"context": 5, "deployment": "Web_1"}),
    ],
)
def test_bad_values_fail_on_the_same_fields_with_the_same_words(
    environ: dict[str, str], flags: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InvalidSettings) as ours:
        Settings.from_sources(environ=environ, flags=flags)
    with pytest.raises(ValidationError) as theirs:
        _theirs(environ, flags, monkeypatch)
    said = [(str(loc[0]) if loc else "", message) for loc, message in error_messages(theirs.value)]
    assert list(ours.value.problems) == said


def test_list_fields_are_the_ones_given_raw_text() -> None:
    assert {"targets", "containers", "expect_env", "expect_file", "expect_http"} == _LISTS
    assert all(get_args(_HINTS[n]) for n in _LISTS)


def test_the_kubeconfig_content_is_never_shown_by_the_settings() -> None:
    s = Settings.from_sources(environ={"VERIFY_KUBECONFIG_DATA": "token: hunter2"}, flags={})
    assert isinstance(s.kubeconfig_data, Secret)
    assert s.kubeconfig_data.get_secret_value() == "token: hunter2"
    assert "hunter2" not in repr(s) and "hunter2" not in str(s)
