"""The run's settings: one pydantic model read from `VERIFY_*` variables (of an explicit mapping,
never os.environ behind the caller's back) with flags as init values that win.

The variables are read as pydantic-settings' EnvSettingsSource reads them for this model (prefix
VERIFY_, names case-insensitive, empty values ignored, every list field `NoDecode`: its raw text
goes to the field's validator), and validated by the same model, defaults included; the test
suite judges `from_sources` against pydantic-settings itself (tests/unit/test_settings_sources.py).
Importing pydantic-settings cost a third of the run's start-up before its first request
(~80 ms of CPU: its sources import dotenv, asyncio and a CLI framework), for these few lines."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator, model_validator

from verify.config import values
from verify.config.naming import ENV_PREFIX, env_var
from verify.kube.names import valid_subdomain
from verify.model import FileSpec, HttpExpectation, WorkloadRef
from verify.redact import escaped, looks_like_content, short, shown_path

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


class Settings(BaseModel):
    """Validated settings; built by `from_sources` (through `load_settings`)."""

    # as BaseSettings: defaults are validated too, unknown names refused
    model_config = ConfigDict(extra="forbid", validate_default=True)

    namespace: str | None = Field(
        default=None, description="Namespace of the workloads (default: the kubeconfig's)."
    )
    deployment: str | None = Field(
        default=None, description="Name of a Deployment to verify (shorthand for --target deployment/NAME)."
    )
    targets: list[WorkloadRef] = Field(
        default=[],
        description="Workloads to verify as KIND/NAME, KIND deployment, statefulset or daemonset; "
        "the flag repeats, the env var is comma/newline separated.",
    )
    selector: str | None = Field(
        default=None,
        description="Label selector: also verify every Deployment, StatefulSet and DaemonSet "
        "with these labels, e.g. app.kubernetes.io/part-of=shop.",
    )
    config: str | None = Field(
        default=None,
        description="YAML file listing targets with their own containers/expect-env/expect-file/"
        "expect-http/from-spec/restart (see README).",
    )
    containers: list[str] = Field(default=[], description=_CONTAINERS_HELP)
    expect_env: list[str] = Field(default=[], description=_EXPECT_ENV_HELP)
    expect_file: list[FileSpec] = Field(default=[], description=_EXPECT_FILE_HELP)
    expect_http: list[HttpExpectation] = Field(default=[], description=_EXPECT_HTTP_HELP)
    restart: Literal["once", "never"] = Field(default="once", description=_RESTART_HELP)
    timeout: float = Field(
        default=600.0, description="Deadline for the whole run (waits, retries, execs), e.g. 600, 10m."
    )
    exec_timeout: float = Field(
        default=30.0, description="Timeout of one exec into a container (and of one HTTP check)."
    )
    concurrency: int = Field(default=32, description="Parallel execs and HTTP checks (1..512).")
    kubeconfig: str | None = Field(
        default=None,
        description="Path of the kubeconfig file (default, as kubectl: every file of $KUBECONFIG merged, "
        "else ~/.kube/config, else the mounted in-cluster service account).",
    )
    kubeconfig_data: SecretStr | None = Field(
        default=None,
        description="Kubeconfig content (YAML/JSON, or base64 of it), as CI secrets hold it; "
        "written to a 0600 temp file, never printed.",
    )
    context: str | None = Field(default=None, description="Kubeconfig context to use.")
    report_json: str | None = Field(default=None, description="Write a JSON report here.")
    junit: str | None = Field(default=None, description="Write a JUnit XML report here.")
    summary: str | None = Field(
        default=None,
        description="Write a Markdown summary here (on GitHub it also goes to the job summary).",
    )
    output_dir: str | None = Field(
        default=None,
        description="Write one file per output here (result, restarted, failed-pods, exit-code) "
        "plus report.json, junit.xml and summary.md, for Argo output parameters.",
    )
    from_spec: bool | None = Field(
        default=None, description="Derive expectations from the pod template (auto if unset)."
    )
    volume_grace: float = Field(
        default=90.0, description="How long to wait for mounted ConfigMap/Secret updates."
    )
    color: Literal["auto", "always", "never"] = Field(
        default="auto",
        description="Colour the verdict and the end table: auto (only on a terminal, and not when "
        "NO_COLOR is set), always or never.",
    )
    debug_image: str | None = Field(
        default=None,
        description="Image of an ephemeral debug container that inspects containers without a shell "
        "(distroless, scratch) through their process namespace, e.g. busybox:1.36 (off by default; "
        "needs `patch pods/ephemeralcontainers`; the container stays in the pod until it is replaced).",
    )
    dry_run: bool = Field(
        default=False,
        description="Judge as usual but never restart: say what would be restarted and why, send no "
        "write; the exit code is the one the run would have had without the restart.",
    )

    @classmethod
    def from_sources(cls, *, environ: Mapping[str, str], flags: Mapping[str, Any]) -> Settings:
        """`flags` (init values) over the `VERIFY_*` variables of `environ`."""
        return cls(**{**env_values(environ), **flags})

    @model_validator(mode="after")
    def _one_kubeconfig(self) -> Settings:
        if self.kubeconfig is not None and self.kubeconfig_data is not None:
            raise ValueError(
                f"--kubeconfig ({env_var('kubeconfig')}) and {env_var('kubeconfig_data')} are both set; "
                "set only one"
            )
        return self

    _check_namespace = field_validator("namespace", mode="after")(values.namespace)
    _split_containers = field_validator("containers", mode="before")(values.containers)
    _split_env = field_validator("expect_env", mode="before")(values.expect_env)
    _parse_files = field_validator("expect_file", mode="before")(values.expect_file)
    _parse_http = field_validator("expect_http", mode="before")(values.expect_http)
    _parse_targets = field_validator("targets", mode="before")(values.target_list)

    @field_validator("deployment", mode="after")
    @classmethod
    def _check_deployment(cls, value: str | None) -> str | None:
        if value is not None and not valid_subdomain(value):
            raise ValueError(
                f'"{short(str(value))}" is not a valid Deployment name; use lowercase letters, digits, '
                "'-' and '.' (DNS-1123 subdomain)"
            )
        return value

    @field_validator("debug_image", mode="after")
    @classmethod
    def _check_debug_image(cls, value: str | None) -> str | None:
        return None if value is None else values.image_reference(value)

    @field_validator("selector", mode="after")
    @classmethod
    def _check_selector(cls, value: str | None) -> str | None:
        return None if value is None else values.check_selector(value)

    @field_validator("timeout", "exec_timeout", mode="before")
    @classmethod
    def _positive_duration(cls, value: Any) -> float:
        seconds = values.parse_duration(value)
        if seconds <= 0:
            raise ValueError(f'"{short(str(value))}" must be longer than zero')
        return seconds

    @field_validator("concurrency", mode="before")
    @classmethod
    def _check_concurrency(cls, value: Any) -> int:
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ValueError(f'"{short(str(value))}" is not a whole number; use 1..512') from None
        if not 1 <= number <= 512:
            raise ValueError(f'"{short(str(value))}" is out of range; use 1..512')
        return number

    @field_validator("kubeconfig", "report_json", "junit", "summary", "output_dir", mode="after")
    @classmethod
    def _check_path(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        shown = shown_path(value)
        if not value.strip():
            raise ValueError("is empty; give a file path")
        if looks_like_content(value):
            fix = (
                "kubeconfig content goes in VERIFY_KUBECONFIG_DATA"
                if info.field_name == "kubeconfig"
                else "give one file path"
            )
            raise ValueError(f"{shown} is not a file path; {fix}")
        if info.field_name == "output_dir":
            if os.path.exists(value) and not os.path.isdir(value):
                raise ValueError(f"{shown} exists and is not a directory")
        elif info.field_name != "kubeconfig" and os.path.isdir(value):
            raise ValueError(f"{shown} is a directory; give a file path")
        if info.field_name != "kubeconfig":
            # found out now, not after the run, when the verdict would have nowhere to go
            why = _unwritable(value, directory=info.field_name == "output_dir")
            if why:
                raise ValueError(f"{shown} cannot be written ({why}); give a writable path")
        return value

    @field_validator("volume_grace", mode="before")
    @classmethod
    def _grace_duration(cls, value: Any) -> float:
        seconds = values.parse_duration(value)
        if seconds < 0:
            raise ValueError(f'"{short(str(value))}" must not be negative')
        return seconds


def env_values(environ: Mapping[str, str]) -> dict[str, str]:
    """Each setting's raw `VERIFY_*` value, as EnvSettingsSource finds it with
    case_sensitive=False and env_ignore_empty=True (pydantic_settings/sources/utils.py
    parse_env_vars: names lower-cased, the last of two spellings wins, "" is unset)."""
    lowered = {k.lower(): v for k, v in environ.items() if v != ""}
    found: dict[str, str] = {}
    for name in Settings.model_fields:
        value = lowered.get(f"{ENV_PREFIX}{name}".lower())
        if value is not None:
            found[name] = value
    return found


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
