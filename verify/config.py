"""The one configuration contract: VERIFY_* environment variables overridden by CLI flags.

Every setting has exactly one field name, one env var and one flag, so pipelines can configure
the step either way and errors can always say which knob to turn.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Literal, NoReturn

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.sources.utils import parse_env_vars

from verify.model import FileSource, FileSpec

ENV_PREFIX = "VERIFY_"
PROG = "rollout-verify"

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OBJECT_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SPEC_HINT = "use sha256:<hex>, configmap:<name>/<key> or secret:<name>/<key>"

# field name -> CLI flag; the env var is always VERIFY_<FIELD NAME UPPER>. Fields missing here
# are env-only (content that must not appear in a process list or shell history).
_FLAGS: dict[str, str] = {
    "namespace": "--namespace",
    "deployment": "--deployment",
    "containers": "--container",
    "expect_env": "--expect-env",
    "expect_file": "--expect-file",
    "restart": "--restart",
    "timeout": "--timeout",
    "exec_timeout": "--exec-timeout",
    "concurrency": "--concurrency",
    "kubeconfig": "--kubeconfig",
    "context": "--context",
    "report_json": "--report-json",
    "junit": "--junit",
    "summary": "--summary",
    "output_dir": "--output-dir",
    "from_spec": "--from-spec",
    "volume_grace": "--volume-grace",
}

# field name -> pipeline input (GitHub Action input, Argo parameter, GitLab component input)
# where it is not the field name in kebab-case.
_INPUTS: dict[str, str] = {
    "kubeconfig": "kubeconfig-path",
    "kubeconfig_data": "kubeconfig",
}


class ConfigError(Exception):
    """Invalid configuration, rendered as ONE line naming the flag, the env var and the fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        flag = _FLAGS.get(self.field)
        if flag is not None:
            return f"{flag}: {_one_line(self.message)} ({env_var(self.field)})"
        if self.field in Settings.model_fields:
            return f"{env_var(self.field)}: {_one_line(self.message)}"
        return _one_line(self.message)


def env_var(field: str) -> str:
    """The environment variable that configures `field`."""
    return ENV_PREFIX + field.upper()


def cli_flag(field: str) -> str | None:
    """The flag that configures `field`, or None for env-only settings."""
    return _FLAGS.get(field)


def pipeline_input(field: str) -> str:
    """The input name pipelines use for `field`: one name for the Action, Argo and GitLab."""
    return _INPUTS.get(field, field.replace("_", "-"))


def _one_line(text: str) -> str:
    """One printable line: whitespace runs collapsed, anything unprintable (an ESC would start a
    terminal escape sequence in a CI log, U+202E would reverse the text) shown escaped."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode() for c in " ".join(text.split())
    )


def _split_list(value: Any, *, newline_only: bool) -> list[Any]:
    """Split env strings (and each CLI item) on newlines, and on commas unless `newline_only`."""
    items = [value] if isinstance(value, str) else list(value or [])
    out: list[Any] = []
    for item in items:
        if not isinstance(item, str):
            out.append(item)
            continue
        parts = item.splitlines() if newline_only else re.split(r"[,\n\r]", item)
        out.extend(p.strip() for p in parts if p.strip())
    return out


MAX_DURATION = 24 * 3600.0  # a pipeline step that waits a day is a mistake, not a setting


def parse_duration(value: Any) -> float:
    """Seconds from `90`, `90s`, `10m`, `1h`, `1m30s` (or a number), so YAML can be readable."""
    seconds = _duration(value)
    if not math.isfinite(seconds) or seconds > MAX_DURATION:
        raise ValueError(
            f'"{value}" is not a usable duration; use at most {MAX_DURATION // 3600:g}h, e.g. 10m'
        )
    return seconds


def _duration(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration; use e.g. 90, 90s, 10m or 1m30s")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().lower()
    try:
        return float(text)
    except ValueError:
        pass
    pos, total = 0, 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if not text or pos != len(text):
        raise ValueError(f'"{value}" is not a duration; use e.g. 90, 90s, 10m or 1m30s')
    return total


def parse_file_spec(text: str) -> FileSpec:
    """Parse one `PATH=SPEC`; the last `=` splits because names and keys never contain one."""
    raw = text.strip()
    path, sep, spec = raw.rpartition("=")
    if not sep or not path:
        raise ValueError(f'"{raw}" is not PATH=SPEC; {_SPEC_HINT}')
    if not path.startswith("/"):
        raise ValueError(f'"{raw}" has a relative path "{path}"; use an absolute path')
    source, colon, rest = spec.partition(":")
    if source == "sha256":
        if not colon or not _HEX64.match(rest):
            raise ValueError(f'"{raw}" needs 64 hex digits after sha256:')
        return FileSpec(path=path, source="sha256", digest=rest.lower())
    if source in ("configmap", "secret"):
        name, slash, key = rest.partition("/")
        if not colon or not slash or not name or not key:
            raise ValueError(f'"{raw}" needs {source}:<name>/<key>')
        if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
            raise ValueError(f'"{raw}" has an invalid {source} name "{name}"')
        if len(key) > 253 or not _OBJECT_KEY.match(key):
            raise ValueError(f'"{raw}" has an invalid {source} key "{key}"')
        kind: FileSource = "configmap" if source == "configmap" else "secret"
        return FileSpec(path=path, source=kind, name=name, key=key)
    if not colon:
        raise ValueError(f'"{raw}" has no source; {_SPEC_HINT}')
    raise ValueError(f'"{raw}" has unknown source "{source}"; {_SPEC_HINT}')


class _MappingEnvSource(EnvSettingsSource):
    """An env source over an explicit mapping, so loading never depends on os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = dict(environ)
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(
            self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("verify_environ", default=None)


@contextmanager
def _using_environ(environ: Mapping[str, str]) -> Iterator[None]:
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


class Settings(BaseSettings):
    """Validated settings; construct through `load_settings` to control the environment."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="forbid")

    namespace: str | None = Field(
        default=None, description="Namespace of the Deployment (default: the kubeconfig's)."
    )
    deployment: str = Field(description="Name of the Deployment to verify.")
    containers: Annotated[list[str], NoDecode] = Field(
        default=[],
        description="Containers to inspect; the flag repeats, the env var is comma/newline "
        "separated (default: the pod template's containers; injected sidecars are skipped).",
    )
    expect_env: Annotated[list[str], NoDecode] = Field(
        default=[],
        description="Env var names every container must have; the flag repeats, the env var "
        "is comma/newline separated (values are never read).",
    )
    expect_file: Annotated[list[FileSpec], NoDecode] = Field(
        default=[],
        description="PATH=SPEC (the flag repeats, the env var is newline separated); SPEC is "
        "sha256:<hex>, configmap:<name>/<key> or secret:<name>/<key> (hash of the live object).",
    )
    restart: Literal["once", "never"] = Field(
        default="once", description="Restart the Deployment once on a mismatch, or never."
    )
    timeout: float = Field(
        default=600.0, description="Deadline for the whole run (waits, retries, execs), e.g. 600, 10m."
    )
    exec_timeout: float = Field(default=30.0, description="Timeout of one exec into a container.")
    concurrency: int = Field(default=32, description="Parallel execs (1..512).")
    kubeconfig: str | None = Field(
        default=None,
        description="Path of the kubeconfig file (default: the in-cluster service account when "
        "mounted, else $KUBECONFIG, else ~/.kube/config).",
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Init kwargs (CLI) beat env; env is the injected mapping when loading explicitly."""
        environ = _ENVIRON.get()
        if environ is None:
            return (init_settings, env_settings)
        return (init_settings, _MappingEnvSource(settings_cls, environ))

    @model_validator(mode="after")
    def _one_kubeconfig(self) -> Settings:
        if self.kubeconfig is not None and self.kubeconfig_data is not None:
            raise ValueError(
                f"--kubeconfig ({env_var('kubeconfig')}) and {env_var('kubeconfig_data')} are both set; "
                "set only one"
            )
        return self

    @field_validator("namespace", mode="after")
    @classmethod
    def _check_namespace(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > 63 or not _DNS1123_LABEL.match(value)):
            raise ValueError(f'"{value}" is not a valid namespace name (DNS-1123 label)')
        return value

    @field_validator("deployment", mode="after")
    @classmethod
    def _check_deployment(cls, value: str) -> str:
        if len(value) > 253 or not _DNS1123_SUBDOMAIN.match(value):
            raise ValueError(
                f'"{value}" is not a valid Deployment name; use lowercase letters, digits, '
                "'-' and '.' (DNS-1123 subdomain)"
            )
        return value

    @field_validator("containers", mode="before")
    @classmethod
    def _split_containers(cls, value: Any) -> list[Any]:
        items = _split_list(value, newline_only=False)
        for item in items:
            if not isinstance(item, str) or len(item) > 63 or not _DNS1123_LABEL.match(item):
                raise ValueError(f'"{item}" is not a valid container name (DNS-1123 label)')
        return list(dict.fromkeys(items))

    @field_validator("expect_env", mode="before")
    @classmethod
    def _split_env(cls, value: Any) -> list[Any]:
        items = _split_list(value, newline_only=False)
        for item in items:
            if not isinstance(item, str) or not _ENV_NAME.match(item):
                raise ValueError(
                    f'"{item}" is not an env var name; use letters, digits and _ '
                    "(not starting with a digit), names only, no values"
                )
        return list(dict.fromkeys(items))

    @field_validator("expect_file", mode="before")
    @classmethod
    def _parse_files(cls, value: Any) -> list[FileSpec]:
        specs: list[FileSpec] = []
        for item in _split_list(value, newline_only=True):
            if isinstance(item, FileSpec):
                specs.append(item)
            elif isinstance(item, str):
                specs.append(parse_file_spec(item))
            else:
                raise ValueError(f"{item!r} is not PATH=SPEC; {_SPEC_HINT}")
        seen: set[str] = set()
        for spec in specs:
            if spec.path in seen:
                raise ValueError(f'"{spec.path}" is listed more than once')
            seen.add(spec.path)
        return specs

    @field_validator("timeout", "exec_timeout", mode="before")
    @classmethod
    def _positive_duration(cls, value: Any) -> float:
        seconds = parse_duration(value)
        if seconds <= 0:
            raise ValueError(f'"{value}" must be longer than zero')
        return seconds

    @field_validator("concurrency", mode="before")
    @classmethod
    def _check_concurrency(cls, value: Any) -> int:
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ValueError(f'"{value}" is not a whole number; use 1..512') from None
        if not 1 <= number <= 512:
            raise ValueError(f'"{value}" is out of range; use 1..512')
        return number

    @field_validator("kubeconfig", "report_json", "junit", "summary", "output_dir", mode="after")
    @classmethod
    def _check_path(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        shown = value.encode("unicode_escape").decode("ascii")
        if not value.strip():
            raise ValueError("is empty; give a file path")
        if _CONTROL.search(value):
            raise ValueError(f'"{shown}" has a control character (a newline?); give one file path')
        if info.field_name == "output_dir":
            if os.path.exists(value) and not os.path.isdir(value):
                raise ValueError(f'"{shown}" exists and is not a directory')
        elif info.field_name != "kubeconfig" and os.path.isdir(value):
            raise ValueError(f'"{shown}" is a directory; give a file path')
        return value

    @field_validator("volume_grace", mode="before")
    @classmethod
    def _grace_duration(cls, value: Any) -> float:
        seconds = parse_duration(value)
        if seconds < 0:
            raise ValueError(f'"{value}" must not be negative')
        return seconds


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors become ConfigError instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError("argv", f"{self.prog}: {message}; see --help")


def _help(field: str) -> str:
    desc = Settings.model_fields[field].description or ""
    return f"{desc} (env {env_var(field)})".replace("%", "%%")


def build_parser() -> argparse.ArgumentParser:
    """The CLI; every flag defaults to 'unset' so env values show through unless overridden."""
    p = _Parser(
        prog=PROG,
        description="Wait for a Deployment rollout, then prove every new pod has the expected "
        "env keys and file contents. Every flag can also be set via its VERIFY_* env var.",
        epilog=f"Env only: {env_var('kubeconfig_data')}: "
        + (Settings.model_fields["kubeconfig_data"].description or "").replace("%", "%%"),
        argument_default=None,
    )
    p.add_argument("--namespace", "-n", metavar="NS", help=_help("namespace"))
    p.add_argument("--deployment", metavar="NAME", help=_help("deployment"))
    p.add_argument(
        "--container", dest="containers", action="append", metavar="NAME", help=_help("containers")
    )
    p.add_argument("--expect-env", action="append", metavar="KEY", help=_help("expect_env"))
    p.add_argument("--expect-file", action="append", metavar="PATH=SPEC", help=_help("expect_file"))
    p.add_argument("--restart", metavar="{once,never}", help=_help("restart"))
    p.add_argument("--timeout", metavar="DURATION", help=_help("timeout"))
    p.add_argument("--exec-timeout", metavar="DURATION", help=_help("exec_timeout"))
    p.add_argument("--concurrency", metavar="N", help=_help("concurrency"))
    p.add_argument("--kubeconfig", metavar="PATH", help=_help("kubeconfig"))
    p.add_argument("--context", metavar="NAME", help=_help("context"))
    p.add_argument("--report-json", metavar="PATH", help=_help("report_json"))
    p.add_argument("--junit", metavar="PATH", help=_help("junit"))
    p.add_argument("--summary", metavar="PATH", help=_help("summary"))
    p.add_argument("--output-dir", metavar="DIR", help=_help("output_dir"))
    p.add_argument("--from-spec", action=argparse.BooleanOptionalAction, help=_help("from_spec"))
    p.add_argument("--volume-grace", metavar="DURATION", help=_help("volume_grace"))
    return p


def _config_error(exc: ValidationError) -> ConfigError:
    """The first pydantic error as one actionable line (never the multi-line dump)."""
    err = exc.errors()[0]
    loc = err.get("loc", ())
    field = str(loc[0]) if loc else ""
    ctx = err.get("ctx") or {}
    if err["type"] == "missing":
        return ConfigError(field, "is required; pass the flag or set the env var")
    if isinstance(ctx.get("error"), ValueError):
        return ConfigError(field, str(ctx["error"]))
    value = err.get("input")
    shown = f'"{value}"' if isinstance(value, str) else repr(value)
    if err["type"] == "bool_parsing":
        return ConfigError(field, f"{shown} is not a boolean; use true or false")
    if err["type"] == "literal_error" and field == "restart":
        return ConfigError(field, f'{shown} is not a restart mode; use "once" or "never"')
    return ConfigError(field, f"{shown}: {err['msg']}")


def load_settings(*, argv: Sequence[str], environ: Mapping[str, str]) -> Settings:
    """Parse `argv` over the VERIFY_* values in `environ`; flags (even repeatable) replace env."""
    namespace = build_parser().parse_args(list(argv))
    overrides = {k: v for k, v in vars(namespace).items() if v is not None}
    try:
        with _using_environ(environ):
            settings = Settings(**overrides)
    except ValidationError as exc:
        raise _config_error(exc) from None
    if settings.from_spec is False and not (settings.expect_env or settings.expect_file):
        raise ConfigError(
            "from_spec",
            "is off and no --expect-env/--expect-file is given: nothing to verify; "
            "add an expectation or drop --no-from-spec",
        )
    return settings


def settings_fields() -> list[tuple[str, str, str, str]]:
    """(field name, env var, CLI flag or "", description) rows, for generating docs."""
    return [
        (name, env_var(name), _FLAGS.get(name, ""), info.description or "")
        for name, info in Settings.model_fields.items()
    ]
