"""Settings read `VERIFY_*` variables exactly as pydantic-settings reads them for the same model
(the judge here: a BaseSettings twin of `Settings` with the options the model had), without
importing pydantic-settings at run time."""

from __future__ import annotations

import os
from typing import Annotated, Any, get_args, get_origin

import pytest
from pydantic import ValidationError, create_model
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from verify.config.settings import Settings

_LISTS = {name for name, info in Settings.model_fields.items() if get_origin(info.annotation) is list}


def _twin() -> type[BaseSettings]:
    """`Settings` as a pydantic-settings model: the same fields and validators, list fields
    `NoDecode` (their raw text goes to the validators), env prefix VERIFY_, empty values ignored."""

    class Twin(Settings, BaseSettings):  # type: ignore[misc]
        model_config = SettingsConfigDict(env_prefix="VERIFY_", env_ignore_empty=True, extra="forbid")

    fields: dict[str, Any] = {}
    for name in _LISTS:
        info = Settings.model_fields[name]
        fields[name] = (Annotated[info.annotation, NoDecode], info)
    return create_model("TwinNoDecode", __base__=Twin, **fields)


TWIN = _twin()


def _theirs(environ: dict[str, str], flags: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    for var in list(os.environ):
        if var.lower().startswith("verify_"):
            monkeypatch.delenv(var)
    for var, value in environ.items():
        monkeypatch.setenv(var, value)
    return TWIN(**flags)


def _values(settings: Any) -> dict[str, Any]:
    out = {name: getattr(settings, name) for name in Settings.model_fields}
    secret = out.pop("kubeconfig_data")
    return out | {"kubeconfig_data": None if secret is None else secret.get_secret_value()}


CASES = [
    ({}, {}),
    ({"VERIFY_NAMESPACE": "shop", "VERIFY_TIMEOUT": "10m", "VERIFY_CONCURRENCY": " 8 "}, {}),
    ({"VERIFY_EXPECT_ENV": "A,B\nC", "VERIFY_TARGETS": "deploy/web,sts/db"}, {"expect_env": ["X"]}),
    ({"verify_restart": "never", "Verify_Dry_Run": "true", "VERIFY_FROM_SPEC": "false"}, {}),
    ({"VERIFY_SELECTOR": "", "VERIFY_NAMESPACE": ""}, {"namespace": "flag-wins"}),
    ({"VERIFY_KUBECONFIG_DATA": "YXBpVmVyc2lvbjogdjE=", "VERIFY_VOLUME_GRACE": "0"}, {}),
    ({"VERIFY_EXPECT_HTTP": "8080/healthz=200", "VERIFY_CONTAINERS": "app\nsidecar"}, {}),
    ({"VERIFY_UNRELATED": "x", "OTHER": "y"}, {"deployment": "web"}),
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
        ({"VERIFY_EXPECT_ENV": "1BAD"}, {}),
        ({}, {"no_such_setting": "x"}),
    ],
)
def test_bad_values_fail_on_the_same_field_with_the_same_words(
    environ: dict[str, str], flags: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValidationError) as ours:
        Settings.from_sources(environ=environ, flags=flags)
    with pytest.raises(ValidationError) as theirs:
        _theirs(environ, flags, monkeypatch)
    strip = [(e["loc"], e["msg"]) for e in ours.value.errors()]
    assert strip == [(e["loc"], e["msg"]) for e in theirs.value.errors()]


def test_list_fields_are_the_ones_given_raw_text() -> None:
    assert {"targets", "containers", "expect_env", "expect_file", "expect_http"} == _LISTS
    assert all(get_args(Settings.model_fields[n].annotation) for n in _LISTS)
