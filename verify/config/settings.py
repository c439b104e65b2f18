"""The run's settings: one pydantic-settings model read from `VERIFY_*` variables (of an explicit
mapping, never os.environ behind the caller's back) with flags as init values that win.

pydantic-settings does the reading (prefix VERIFY_, names case-insensitive, empty values ignored,
list fields given their raw text) and pydantic the checking (every value, defaults included, every
wrong field reported at once, then the cross-field check); the checks below only add what our
values mean. tests/unit/test_settings_sources.py holds the model to a twin built from `FIELDS`
over the process environment, values and error words alike."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.sources.utils import parse_env_vars

from verify.config import values
from verify.config.messages import error_messages
from verify.config.naming import ENV_PREFIX, env_var
from verify.kube.names import valid_subdomain
from verify.model import FileSpec, HttpExpectation, WorkloadRef
from verify.redact import escaped, looks_like_content, short, shown_path

Check = Callable[[str, Any], Any]  # (field name, value) -> value; ValueError says what is wrong
Secret = SecretStr  # the kubeconfig content: repr and str print stars


class InvalidSettings(ValueError):
    """Every wrong setting at once: (field, one-line message) in the fields' order, then unknown
    names, then the cross-field check (only when every field was valid), as pydantic orders them."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems))
        self.problems = tuple(problems)


# -- checks: what pydantic's types do not know about our values. The "before" ones get the raw
# -- value (a flag's or an env var's text, a list from repeated flags), the "after" ones the text
# -- pydantic checked (or None).


def _listed(parse: Callable[[Any, Any], list[Any]]) -> Check:
    return lambda name, value: parse(None, value)


def _optional(check: Callable[[str], Any]) -> Check:
    return lambda name, value: None if value is None else check(value)


def _named(kind: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not valid_subdomain(value):
            raise ValueError(
                f'"{short(str(value))}" is not a valid {kind} name; use lowercase letters, digits, '
                "'-' and '.' (DNS-1123 subdomain)"
            )
        return value

    return check


def _duration(*, zero: bool) -> Check:
    def check(name: str, value: Any) -> float:
        seconds = values.parse_duration(value)
        if seconds < 0 or (seconds == 0 and not zero):
            rule = "must not be negative" if zero else "must be longer than zero"
            raise ValueError(f'"{short(str(value))}" {rule}')
        return seconds

    return check


def _concurrency(name: str, value: Any) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f'"{short(str(value))}" is not a whole number; use 1..512') from None
    if not 1 <= number <= 512:
        raise ValueError(f'"{short(str(value))}" is out of range; use 1..512')
    return number


def _path(name: str, value: str | None) -> str | None:
    """A file path (a folder for output_dir) the run can write, checked now, not after the run,
    when the verdict would have nowhere to go; the kubeconfig only has to look like a path."""
    if value is None:
        return value
    shown = shown_path(value)
    if not value.strip():
        raise ValueError("is empty; give a file path")
    if looks_like_content(value):
        fix = "give one file path"
        if name == "kubeconfig":
            fix = "kubeconfig content goes in VERIFY_KUBECONFIG_DATA"
        raise ValueError(f"{shown} is not a file path; {fix}")
    if name == "output_dir":
        if os.path.exists(value) and not os.path.isdir(value):
            raise ValueError(f"{shown} exists and is not a directory")
    elif name != "kubeconfig" and os.path.isdir(value):
        raise ValueError(f"{shown} is a directory; give a file path")
    if name != "kubeconfig":
        why = _unwritable(value, directory=name == "output_dir")
        if why:
            raise ValueError(f"{shown} cannot be written ({why}); give a writable path")
    return value


# raw text in: lists split and parsed, durations and numbers read as we spell them
_BEFORE: dict[str, Check] = {
    "targets": _listed(values.target_list),
    "containers": _listed(values.containers),
    "expect_env": _listed(values.expect_env),
    "expect_file": _listed(values.expect_file),
    "expect_http": _listed(values.expect_http),
    "timeout": _duration(zero=False),
    "exec_timeout": _duration(zero=False),
    "concurrency": _concurrency,
    "volume_grace": _duration(zero=True),
    "min_ready": _duration(zero=True),
}
# a str (or None) in, after pydantic's own check of the type
_AFTER: dict[str, Check] = {
    "namespace": _optional(lambda v: values.namespace(None, v)),
    "deployment": _optional(_named("Deployment")),
    "rollout": _optional(_named("Rollout")),
    "selector": _optional(values.check_selector),
    "kubeconfig": _path,
    "report_json": _path,
    "junit": _path,
    "summary": _path,
    "output_dir": _path,
    "debug_image": _optional(values.image_reference),
}

_RESTART_HELP = "Restart the workload once when a restart can fix every failing check, or never."
_CONTAINERS_HELP = (
    "Containers to inspect; the flag repeats, the env var is comma/newline separated "
    "(default: the pod template's containers and native sidecars; injected sidecars are skipped)."
)
_EXPECT_ENV_HELP = (
    "Env var names every container must have; the flag repeats, the env var is comma/newline "
    "separated (values are never read)."
)
_EXPECT_FILE_HELP = (
    "PATH=SPEC (the flag repeats, the env var is newline separated); SPEC is sha256:<hex>, "
    "configmap:<name>/<key> or secret:<name>/<key> (hash of the live object)."
)
_EXPECT_HTTP_HELP = (
    "PORT/PATH[=STATUS] each pod must answer through the API server's pod proxy (default status "
    "200); the flag repeats, the env var is newline separated (or comma separated before each "
    "PORT/, so a query may hold commas). JSON field checks: --config."
)


class _EnvironSource(EnvSettingsSource):
    """pydantic-settings' env source over the mapping the run was given instead of os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], *, environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(
            self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("verify_environ", default=None)


@contextmanager
def _reading(environ: Mapping[str, str]) -> Iterator[None]:
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


class Settings(BaseSettings):
    """Validated settings; built by `from_sources` (through `load_settings`). Field order is
    the order of --help, the docs' tables and the errors."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="forbid", validate_default=True, frozen=True
    )

    namespace: str | None = Field(None, description="Namespace of the workloads (default: the kubeconfig's).")
    deployment: str | None = Field(
        None, description="Name of a Deployment to verify (shorthand for --target deployment/NAME)."
    )
    rollout: str | None = Field(
        None, description="Name of an Argo Rollout to verify (shorthand for --target rollout/NAME)."
    )
    revision: Literal["latest", "stable"] = Field(
        "latest",
        description="Which pods of a Rollout to verify: latest (the current revision's: a paused canary's "
        "or a blue-green preview's) or stable.",
    )
    targets: Annotated[list[WorkloadRef], NoDecode] = Field(
        default_factory=list,
        description="Workloads to verify as KIND/NAME, KIND deployment, statefulset, daemonset or rollout; "
        "the flag repeats, the env var is comma/newline separated.",
    )
    selector: str | None = Field(
        None,
        description="Label selector: also verify every Deployment, StatefulSet, DaemonSet and Rollout "
        "with these labels, e.g. app.kubernetes.io/part-of=shop.",
    )
    config: str | None = Field(
        None,
        description="YAML file listing targets with their own containers/expect-env/expect-file/"
        "expect-http/from-spec/restart (the docs' Expectations page).",
    )
    containers: Annotated[list[str], NoDecode] = Field(default_factory=list, description=_CONTAINERS_HELP)
    expect_env: Annotated[list[str], NoDecode] = Field(default_factory=list, description=_EXPECT_ENV_HELP)
    expect_file: Annotated[list[FileSpec], NoDecode] = Field(
        default_factory=list, description=_EXPECT_FILE_HELP
    )
    expect_http: Annotated[list[HttpExpectation], NoDecode] = Field(
        default_factory=list, description=_EXPECT_HTTP_HELP
    )
    restart: Literal["once", "never"] = Field("once", description=_RESTART_HELP)
    timeout: float = Field(
        600.0, description="Deadline for the whole run (waits, retries, execs), e.g. 600, 10m."
    )
    exec_timeout: float = Field(
        30.0, description="Timeout of one exec into a container (and of one HTTP check)."
    )
    concurrency: int = Field(32, description="Parallel execs and HTTP checks (1..512).")
    kubeconfig: str | None = Field(
        None,
        description="Path of the kubeconfig file (default, as kubectl: every file of $KUBECONFIG merged, "
        "else ~/.kube/config, else the mounted in-cluster service account).",
    )
    kubeconfig_data: SecretStr | None = Field(
        None,
        description="Kubeconfig content (YAML/JSON, or base64 of it), as CI secrets hold it; "
        "written to a 0600 temp file, never printed.",
    )
    context: str | None = Field(None, description="Kubeconfig context to use.")
    report_json: str | None = Field(None, description="Write a JSON report here.")
    junit: str | None = Field(None, description="Write a JUnit XML report here.")
    summary: str | None = Field(
        None, description="Write a Markdown summary here (on GitHub it also goes to the job summary)."
    )
    output_dir: str | None = Field(
        None,
        description="Write one file per output here (result, restarted, failed-pods, exit-code) "
        "plus report.json, junit.xml and summary.md, for Argo output parameters.",
    )
    from_spec: bool | None = Field(
        None, description="Derive expectations from the pod template (auto if unset)."
    )
    volume_grace: float = Field(90.0, description="How long to wait for mounted ConfigMap/Secret updates.")
    min_ready: float = Field(
        5.0,
        description="How long each inspected container must have been running and ready, unrestarted, "
        "before it is inspected (the workload's minReadySeconds when that is longer); a container "
        "that restarts or turns unready before its inspection ends is a failure, never a pass.",
    )
    fail_fast: bool = Field(
        True,
        description="Stop waiting (exit 4) as soon as a pod of the new revision cannot become ready without "
        "a change to the spec (a missing image or command, a crash loop, a pod no node can take; "
        "see the docs' Troubleshooting); --no-fail-fast waits for the rollout until --timeout.",
    )
    color: Literal["auto", "always", "never"] = Field(
        "auto",
        description="Colour the verdict and the end table: auto (only on a terminal, and not when "
        "NO_COLOR is set), always or never.",
    )
    debug_image: str | None = Field(
        None,
        description="Image of an ephemeral debug container that inspects containers without a shell "
        "(distroless, scratch) through their process namespace, e.g. busybox:1.36 (off by default; "
        "needs `patch pods/ephemeralcontainers`; the container stays in the pod until it is replaced).",
    )
    dry_run: bool = Field(
        False,
        description="Judge as usual but never restart: say what would be restarted and why, send no "
        "write; the exit code is the one the run would have had without the restart.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags (init values) over VERIFY_* variables; no .env file, no secrets directory."""
        environ = _ENVIRON.get()
        return (
            init_settings,
            env_settings if environ is None else _EnvironSource(settings_cls, environ=environ),
        )

    @field_validator(*_BEFORE, mode="before")
    @classmethod
    def _parse(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        return _BEFORE[name](name, value)

    @field_validator(*_AFTER, mode="after")
    @classmethod
    def _check(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        return _AFTER[name](name, value)

    @model_validator(mode="after")
    def _one_kubeconfig(self) -> Settings:
        if self.kubeconfig is not None and self.kubeconfig_data is not None:
            raise ValueError(
                f"--kubeconfig ({env_var('kubeconfig')}) and {env_var('kubeconfig_data')} are both set; "
                "set only one"
            )
        return self

    @classmethod
    def from_sources(cls, *, environ: Mapping[str, str], flags: Mapping[str, Any]) -> Settings:
        """`flags` (init values) over the `VERIFY_*` variables of `environ`, every value checked
        (defaults too); raises InvalidSettings naming every wrong one."""
        try:
            with _reading(environ):
                return cls(**flags)
        except ValidationError as exc:
            raise InvalidSettings(
                [(str(loc[0]) if loc else "", message) for loc, message in error_messages(exc)]
            ) from None


@dataclass(frozen=True)
class Setting:
    """One field of Settings as docs, --help and the twin test see it (`check`: ours on top of
    pydantic's type, None where the type says it all)."""

    name: str
    default: Any
    description: str
    check: Check | None


FIELDS: Mapping[str, Setting] = {
    name: Setting(
        name=name,
        default=info.get_default(call_default_factory=True),
        description=info.description or "",
        check=_BEFORE.get(name) or _AFTER.get(name),
    )
    for name, info in Settings.model_fields.items()
}


def _unwritable(path: str, *, directory: bool) -> str:
    """Why `path` (a file, or with `directory` a directory, created if missing) cannot be
    written; empty when it can."""
    target = os.path.abspath(path)
    if os.path.exists(target):
        if not os.access(target, os.W_OK | (os.X_OK if directory else 0)):
            return f"{escaped(target)} is not writable"
        if directory:
            return ""
    parent = os.path.dirname(target)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{escaped(parent)} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{escaped(parent)} is not writable"
    return ""
