"""The one configuration contract: VERIFY_* environment variables overridden by CLI flags.

Every setting has exactly one field name, one env var and one flag, so pipelines can configure
the step either way and errors can always say which knob to turn.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NoReturn
from urllib.parse import unquote

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.sources.utils import parse_env_vars

from verify.model import FileSource, FileSpec, HttpExpectation
from verify.redact import escaped as _escaped
from verify.redact import looks_like_content, shown_path
from verify.redact import one_line as _one_line
from verify.targets import WorkloadRef, parse_target, valid_name

ENV_PREFIX = "VERIFY_"
PROG = "rollout-verify"

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_OBJECT_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}\Z")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SPEC_HINT = "use sha256:<hex>, configmap:<name>/<key> or secret:<name>/<key>"
_HTTP_HINT = "use PORT/PATH[=STATUS], e.g. 8080/healthz or 8080/config=200"
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?\Z")
_JSON_FIELD = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\Z")

# field name -> CLI flag; the env var is always VERIFY_<FIELD NAME UPPER>. Fields missing here
# are env-only (content that must not appear in a process list or shell history).
_FLAGS: dict[str, str] = {
    "namespace": "--namespace",
    "deployment": "--deployment",
    "targets": "--target",
    "selector": "--selector",
    "config": "--config",
    "containers": "--container",
    "expect_env": "--expect-env",
    "expect_file": "--expect-file",
    "expect_http": "--expect-http",
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


def _what(item: Any) -> str:
    """How an error names a non-text entry: its kind only (`{name: K, value: V}` may hold a secret)."""
    kinds = {dict: "a mapping", list: "a list", bool: "true/false", int: "a number", float: "a number"}
    kind = next((k for t, k in kinds.items() if isinstance(item, t)), "a non-text entry")
    return f"{kind} (content not shown)"


def _split_list(value: Any, *, newline_only: bool) -> list[Any]:
    """Split env strings (and each CLI item) on newlines, and on commas unless `newline_only`."""
    if value is None:
        items: list[Any] = []
    elif isinstance(value, str):
        items = [value]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise ValueError(f"{_what(value)} is not a text or a list of texts")
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


def parse_http_check(text: str) -> HttpExpectation:
    """Parse one `PORT/PATH[=STATUS]`; a trailing `=NNN` is the status, the rest is the path."""
    raw = text.strip()
    port_text, slash, rest = raw.partition("/")
    if not slash:
        raise ValueError(f'"{raw}" is not PORT/PATH; {_HTTP_HINT}')
    status = 200
    path, eq, code = rest.rpartition("=")
    if eq and code.isdigit() and len(code) == 3:
        status = int(code)
    else:
        path = rest
    return http_check(port=port_text, path="/" + path, status=status, shown=raw)


def http_check(
    *,
    port: Any,
    path: Any,
    status: Any = 200,
    field: Any = "",
    equals: Any = None,
    equals_configmap: Any = "",
    shown: str = "",
) -> HttpExpectation:
    """One HTTP check, validated; `equals` is any JSON value (kept as canonical JSON text)."""
    shown = shown or f"{port}{path}"
    try:
        number = int(str(port).strip()) if not isinstance(port, bool) else 0
    except ValueError:
        number = 0
    if not 1 <= number <= 65535:
        raise ValueError(f'"{shown}" has no valid port "{port}"; {_HTTP_HINT}')
    if not isinstance(path, str) or not path.startswith("/") or any(c.isspace() or ord(c) < 32 for c in path):
        raise ValueError(f'"{shown}" has an invalid path "{path}"; use an absolute path without spaces')
    segments = unquote(path.partition("?")[0]).replace("\\", "/").split("/")
    if any(seg in (".", "..") for seg in segments):
        # the URL would be normalised out of the pod proxy and onto another API path
        raise ValueError(
            f'"{shown}" has a "." or ".." segment in its path; name the path as the app serves it'
        )
    try:
        code = int(status) if not isinstance(status, bool) else 0
    except (TypeError, ValueError):
        code = 0
    if not 100 <= code <= 599:
        raise ValueError(f'"{shown}" has an invalid status "{status}"; use an HTTP status such as 200')
    field = "" if field is None else str(field)
    if field and not _JSON_FIELD.match(field):
        raise ValueError(
            f'"{shown}" has an invalid JSON field "{field}"; use a dotted path such as config.version'
        )
    equals_text = ""
    cm = "" if equals_configmap is None else str(equals_configmap)
    if (equals is not None or cm) and not field:
        raise ValueError(f'"{shown}" compares a value but names no JSON field; add field')
    if equals is not None and cm:
        raise ValueError(f'"{shown}" has both equals and equals-configmap; keep one')
    if field and equals is None and not cm:
        raise ValueError(f'"{shown}" names JSON field "{field}" but no expected value; add equals')
    if equals is not None:
        try:
            # allow_nan=False: NaN equals nothing (every pod a mismatch, a restart for nothing)
            equals_text = json.dumps(equals, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(
                f'"{shown}" compares with {equals!r}, which is not a JSON value; quote it'
            ) from None
    if cm:
        name, slash, key = cm.partition("/")
        if not slash or not valid_name(name) or not key or not _OBJECT_KEY.match(key):
            raise ValueError(f'"{shown}" has an invalid equals-configmap "{cm}"; use NAME/KEY')
    return HttpExpectation(
        port=number, path=path, status=code, field=field, equals=equals_text, equals_configmap=cm
    )


def _selector_terms(text: str) -> list[str]:
    """Split a label selector on the commas outside `in (...)` sets."""
    terms, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur.strip())
            cur = ""
        else:
            cur += ch
    terms.append(cur.strip())
    return terms


def _label_key(key: str) -> bool:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not valid_name(prefix)):
        return False
    return bool(_LABEL_NAME.match(name))


def check_selector(text: str) -> str:
    """Validate a label selector as the API server parses it (`a=b,c!=d,e in (f,g),!h`)."""
    raw = text.strip()
    if not raw:
        raise ValueError("is empty; use e.g. app=web or tier in (web,api)")
    set_term = re.compile(r"^(\S+)\s+(in|notin)\s+\(([^()]*)\)\Z")
    for term in _selector_terms(raw):
        m = set_term.match(term)
        if m:
            values = [v.strip() for v in m.group(3).split(",")]
            ok = _label_key(m.group(1)) and all(_LABEL_VALUE.match(v) for v in values)
        else:
            key, op, value = (
                term.partition("!=")
                if "!=" in term
                else term.partition("==")
                if "==" in term
                else term.partition("=")
            )
            key = key.strip()
            if op:
                ok = _label_key(key) and bool(_LABEL_VALUE.match(value.strip()))
            else:
                ok = _label_key(key.removeprefix("!"))
        if not term or not ok:
            raise ValueError(
                f'"{raw}" is not a valid label selector (at "{term}"); '
                "use e.g. app=web,tier!=db or tier in (web,api)"
            )
    return raw


# -- validators shared by the run's Settings and each target of a --config file ---------------


def _containers(cls: Any, value: Any) -> list[Any]:
    items = _split_list(value, newline_only=False)
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{_what(item)} is not a container name; list names only")
        if len(item) > 63 or not _DNS1123_LABEL.match(item):
            raise ValueError(f'"{item}" is not a valid container name (DNS-1123 label)')
    return list(dict.fromkeys(items))


def _expect_env(cls: Any, value: Any) -> list[Any]:
    items = _split_list(value, newline_only=False)
    for item in items:
        if not isinstance(item, str):
            # `{name: K, value: V}` (a pod spec's env entry) is the likely mistake: never shown
            raise ValueError(f"{_what(item)} is not an env var name; list names only, no values")
        if not _ENV_NAME.match(item):
            # KEY=VALUE is the likely mistake: the value may be a secret, so it is never shown
            name, eq, _ = item.partition("=")
            shown = f'"{name}=…" (its value not shown)' if eq else f'"{name}"'
            raise ValueError(
                f"{shown} is not an env var name; use letters, digits and _ "
                "(not starting with a digit), names only, no values"
            )
    return list(dict.fromkeys(items))


def _expect_file(cls: Any, value: Any) -> list[FileSpec]:
    specs: list[FileSpec] = []
    for item in _split_list(value, newline_only=True):
        if isinstance(item, FileSpec):
            specs.append(item)
        elif isinstance(item, str):
            specs.append(parse_file_spec(item))
        else:
            raise ValueError(f"{_what(item)} is not PATH=SPEC; {_SPEC_HINT}")
    seen: set[str] = set()
    for spec in specs:
        if spec.path in seen:
            raise ValueError(f'"{spec.path}" is listed more than once')
        seen.add(spec.path)
    return specs


_HTTP_KEYS = {"port", "path", "status", "json"}
_JSON_KEYS = {"field", "equals", "equals-configmap"}


def _http_from_mapping(item: Mapping[str, Any]) -> HttpExpectation:
    unknown = sorted(set(item) - _HTTP_KEYS)
    if unknown:
        raise ValueError(f'unknown key "{unknown[0]}" in an HTTP check; use {", ".join(sorted(_HTTP_KEYS))}')
    js = item.get("json") or {}
    if not isinstance(js, Mapping):
        raise ValueError("json must be a mapping with field and equals (or equals-configmap)")
    unknown = sorted(set(js) - _JSON_KEYS)
    if unknown:
        raise ValueError(f'unknown key "{unknown[0]}" under json; use {", ".join(sorted(_JSON_KEYS))}')
    if "port" not in item or "path" not in item:
        raise ValueError("an HTTP check needs port and path, e.g. {port: 8080, path: /config}")
    return http_check(
        port=item["port"],
        path=item["path"],
        status=item.get("status", 200),
        field=js.get("field", ""),
        equals=js.get("equals"),
        equals_configmap=js.get("equals-configmap", ""),
    )


# entries are split on newlines, and on a comma only where the next entry's PORT/ starts (or
# another comma, or the end): a path's own query may hold commas (8080/items?ids=1,2)
_HTTP_SEPARATOR = re.compile(r"[\n\r]+|,(?=\s*(?:\d+/|,|$))")


def _expect_http(cls: Any, value: Any) -> list[HttpExpectation]:
    items = value if isinstance(value, list) else _split_list(value, newline_only=True)
    checks: list[HttpExpectation] = []
    for item in items:
        if isinstance(item, HttpExpectation):
            checks.append(item)
        elif isinstance(item, str):
            parts = (p.strip() for p in _HTTP_SEPARATOR.split(item))
            checks.extend(parse_http_check(part) for part in parts if part)
        elif isinstance(item, Mapping):
            checks.append(_http_from_mapping(item))
        else:
            raise ValueError(f"{_what(item)} is not an HTTP check; {_HTTP_HINT}")
    return list(dict.fromkeys(checks))


def _target_list(cls: Any, value: Any) -> list[WorkloadRef]:
    refs: list[WorkloadRef] = []
    for item in _split_list(value, newline_only=False):
        refs.append(item if isinstance(item, WorkloadRef) else parse_target(str(item)))
    return list(dict.fromkeys(refs))


def _namespace(cls: Any, value: str | None) -> str | None:
    if value is not None and (len(value) > 63 or not _DNS1123_LABEL.match(value)):
        raise ValueError(f'"{value}" is not a valid namespace name (DNS-1123 label)')
    return value


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


_RESTART_HELP = "Restart the workload once on a mismatch, or never."
_CONTAINERS_HELP = (
    "Containers to inspect; the flag repeats, the env var is comma/newline separated "
    "(default: the pod template's containers; injected sidecars are skipped)."
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


class Settings(BaseSettings):
    """Validated settings; construct through `load_settings` to control the environment."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="forbid")

    namespace: str | None = Field(
        default=None, description="Namespace of the workloads (default: the kubeconfig's)."
    )
    deployment: str | None = Field(
        default=None, description="Name of a Deployment to verify (shorthand for --target deployment/NAME)."
    )
    targets: Annotated[list[WorkloadRef], NoDecode] = Field(
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
    containers: Annotated[list[str], NoDecode] = Field(default=[], description=_CONTAINERS_HELP)
    expect_env: Annotated[list[str], NoDecode] = Field(default=[], description=_EXPECT_ENV_HELP)
    expect_file: Annotated[list[FileSpec], NoDecode] = Field(default=[], description=_EXPECT_FILE_HELP)
    expect_http: Annotated[list[HttpExpectation], NoDecode] = Field(default=[], description=_EXPECT_HTTP_HELP)
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

    _check_namespace = field_validator("namespace", mode="after")(_namespace)
    _split_containers = field_validator("containers", mode="before")(_containers)
    _split_env = field_validator("expect_env", mode="before")(_expect_env)
    _parse_files = field_validator("expect_file", mode="before")(_expect_file)
    _parse_http = field_validator("expect_http", mode="before")(_expect_http)
    _parse_targets = field_validator("targets", mode="before")(_target_list)

    @field_validator("deployment", mode="after")
    @classmethod
    def _check_deployment(cls, value: str | None) -> str | None:
        if value is not None and not valid_name(value):
            raise ValueError(
                f'"{value}" is not a valid Deployment name; use lowercase letters, digits, '
                "'-' and '.' (DNS-1123 subdomain)"
            )
        return value

    @field_validator("selector", mode="after")
    @classmethod
    def _check_selector(cls, value: str | None) -> str | None:
        return None if value is None else check_selector(value)

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
        seconds = parse_duration(value)
        if seconds < 0:
            raise ValueError(f'"{value}" must not be negative')
        return seconds


def _unwritable(path: str, *, directory: bool) -> str:
    """Why `path` (a file, or with `directory` a directory, created if missing) cannot be
    written; empty when it can."""
    target = os.path.abspath(path)
    if os.path.exists(target):
        if not os.access(target, os.W_OK | (os.X_OK if directory else 0)):
            return f"{_escaped(target)} is not writable"
        if directory:
            return ""
    parent = os.path.dirname(target)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{_escaped(parent)} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{_escaped(parent)} is not writable"
    return ""


class TargetSpec(BaseModel):
    """One target of a --config file: the same validators as the run's settings. A field left
    unset (None) takes the run's value (flag, env var or default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: WorkloadRef
    namespace: str | None = None
    containers: list[str] | None = None
    expect_env: list[str] | None = None
    expect_file: list[FileSpec] | None = None
    expect_http: list[HttpExpectation] | None = None
    from_spec: bool | None = None
    restart: Literal["once", "never"] | None = None

    _check_namespace = field_validator("namespace", mode="after")(_namespace)
    _split_containers = field_validator("containers", mode="before")(_containers)
    _split_env = field_validator("expect_env", mode="before")(_expect_env)
    _parse_files = field_validator("expect_file", mode="before")(_expect_file)
    _parse_http = field_validator("expect_http", mode="before")(_expect_http)

    @field_validator("target", mode="before")
    @classmethod
    def _parse_target(cls, value: Any) -> WorkloadRef:
        if isinstance(value, WorkloadRef):
            return value
        if not isinstance(value, str):
            raise ValueError(f"{_what(value)} is not KIND/NAME, e.g. deployment/web")
        return parse_target(value)


@dataclass(frozen=True)
class TargetPlan:
    """What one workload is checked for, every run-level default already applied."""

    ref: WorkloadRef
    namespace: str | None
    containers: tuple[str, ...]
    expect_env: tuple[str, ...]
    expect_file: tuple[FileSpec, ...]
    expect_http: tuple[HttpExpectation, ...]
    from_spec: bool
    restart: Literal["once", "never"]


def plan_target(*, settings: Settings, ref: WorkloadRef, spec: TargetSpec | None = None) -> TargetPlan:
    """A target's own fields win; the rest comes from the run. --from-spec is on by default
    when the target has no explicit env/file expectation."""

    def pick(name: str) -> Any:
        own = getattr(spec, name) if spec is not None else None
        return own if own is not None else getattr(settings, name)

    env, files = tuple(pick("expect_env")), tuple(pick("expect_file"))
    from_spec = pick("from_spec")
    return TargetPlan(
        ref=ref,
        namespace=(spec.namespace if spec is not None else None) or ref.namespace,
        containers=tuple(pick("containers")),
        expect_env=env,
        expect_file=files,
        expect_http=tuple(pick("expect_http")),
        from_spec=bool(from_spec) if from_spec is not None else not (env or files),
        restart=pick("restart"),
    )


@dataclass(frozen=True)
class Job:
    """Everything the config stage decides: the settings and the named targets (a --selector
    adds more at run time, with the run-level expectations)."""

    settings: Settings
    targets: tuple[TargetPlan, ...]


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors become ConfigError instead of exiting."""

    def error(self, message: str) -> NoReturn:
        head = "unrecognized arguments: "
        if message.startswith(head):
            # stray arguments may be values (a token, `--kubeconfig-data <base64>`): name only
            # the options, never what follows them
            words = message[len(head) :].split()
            flags = [w.partition("=")[0] for w in words if w.startswith("-")]
            hidden = len(words) - len(flags) + sum("=" in w for w in words if w.startswith("-"))
            message = head + (" ".join(flags) or "values")
            if hidden:
                message += f" ({hidden} value{'s' if hidden != 1 else ''} not shown)"
        else:
            # `ambiguous option: --expect=KEY=VALUE could match ...`, `ignored explicit argument
            # 'VALUE'`: argparse repeats what was typed, which may be a value; keep the options
            ambiguous = re.match(r"ambiguous option: (.*) could match (.*)$", message, re.S)
            if ambiguous:
                typed, eq, _ = ambiguous.group(1).partition("=")
                message = f"ambiguous option: {typed}{'=…' if eq else ''} could match {ambiguous.group(2)}"
            message = re.sub(r"explicit argument .*$", "explicit argument '…'", message, flags=re.S)
            message = re.sub(r"(--?[A-Za-z0-9][-\w]*)=\S*", r"\1=…", message)
            message = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)
        raise ConfigError("argv", f"{self.prog}: {message}; see --help")


def _help(field: str) -> str:
    desc = Settings.model_fields[field].description or ""
    return f"{desc} (env {env_var(field)})".replace("%", "%%")


def build_parser() -> argparse.ArgumentParser:
    """The CLI; every flag defaults to 'unset' so env values show through unless overridden."""
    p = _Parser(
        prog=PROG,
        description="Wait for the rollout of Deployments, StatefulSets and DaemonSets, then prove "
        "every pod of the new revision has the expected env keys, file contents and HTTP answers. "
        "Every flag can also be set via its VERIFY_* env var.",
        epilog=f"Env only: {env_var('kubeconfig_data')}: "
        + (Settings.model_fields["kubeconfig_data"].description or "").replace("%", "%%")
        + " Exit codes: 0 every pod verified; 1 verification failed (mismatch, missing or "
        "uninspectable after the one restart); 2 bad configuration (nothing sent to the cluster); "
        "3 a workload or source cannot be read, watched or patched; 4 the rollout did not complete "
        "(progress deadline or --timeout); 5 internal error.",
        argument_default=None,
    )
    p.add_argument("--namespace", "-n", metavar="NS", help=_help("namespace"))
    # appended only to tell a repeat (which would silently drop the first name) from one use
    p.add_argument("--deployment", action="append", metavar="NAME", help=_help("deployment"))
    p.add_argument("--target", dest="targets", action="append", metavar="KIND/NAME", help=_help("targets"))
    p.add_argument("--selector", "-l", metavar="LABELS", help=_help("selector"))
    p.add_argument("--config", metavar="FILE", help=_help("config"))
    p.add_argument(
        "--container", dest="containers", action="append", metavar="NAME", help=_help("containers")
    )
    p.add_argument("--expect-env", action="append", metavar="KEY", help=_help("expect_env"))
    p.add_argument("--expect-file", action="append", metavar="PATH=SPEC", help=_help("expect_file"))
    p.add_argument("--expect-http", action="append", metavar="PORT/PATH[=STATUS]", help=_help("expect_http"))
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


def error_message(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    """(location, one-line message) of the first pydantic error, for any model here."""
    err = exc.errors()[0]
    loc = tuple(err.get("loc", ()))
    field = str(loc[0]) if loc else ""
    ctx = err.get("ctx") or {}
    if err["type"] == "missing":
        return loc, "is required"
    if isinstance(ctx.get("error"), ValueError):
        return loc, _one_line(str(ctx["error"]))
    value = err.get("input")
    shown = f'"{value}"' if isinstance(value, str) else repr(value)
    if err["type"] == "bool_parsing":
        return loc, f"{shown} is not a boolean; use true or false"
    if err["type"] == "literal_error" and field == "restart":
        return loc, f'{shown} is not a restart mode; use "once" or "never"'
    if err["type"] == "extra_forbidden":
        return loc, "is not a known setting"
    return loc, _one_line(f"{shown}: {err['msg']}")


def load_job(*, argv: Sequence[str], environ: Mapping[str, str]) -> Job:
    """Settings (flags over VERIFY_* env) plus the targets they and --config name; every
    input problem is a ConfigError raised here, before anything talks to the cluster."""
    settings = load_settings(argv=argv, environ=environ)
    refs: list[WorkloadRef] = list(settings.targets)
    if settings.deployment is not None:
        refs.insert(0, WorkloadRef(kind="deployment", name=settings.deployment))
    plans = [plan_target(settings=settings, ref=ref) for ref in dict.fromkeys(refs)]
    if settings.config is not None:
        from verify.configfile import ConfigFileError, load_targets

        try:
            specs = load_targets(path=settings.config)
        except ConfigFileError as e:
            raise ConfigError("config", str(e)) from None

        def key(p: TargetPlan) -> tuple[str, str, str | None]:
            return (p.ref.kind, p.ref.name, p.namespace or settings.namespace)

        named = {key(p) for p in plans}
        for spec in specs:
            plan = plan_target(settings=settings, ref=spec.target, spec=spec)
            if key(plan) in named:
                raise ConfigError(
                    "config",
                    f"{settings.config}: {plan.ref} is also named by --target/--deployment; name it once",
                )
            named.add(key(plan))
            plans.append(plan)
    if not plans and settings.selector is None:
        raise ConfigError(
            "targets",
            "nothing to verify; pass --target KIND/NAME (or --deployment NAME), --selector LABELS "
            "or --config FILE",
        )
    for plan in plans:
        if not plan.from_spec and not (plan.expect_env or plan.expect_file or plan.expect_http):
            raise ConfigError(
                "from_spec",
                f"is off and {plan.ref} has no --expect-env/--expect-file/--expect-http: nothing to "
                "verify; add an expectation or drop --no-from-spec",
            )
    if (
        settings.selector is not None
        and settings.from_spec is False
        and not (settings.expect_env or settings.expect_file or settings.expect_http)
    ):
        raise ConfigError(
            "from_spec",
            "is off and no --expect-env/--expect-file/--expect-http is given for the --selector "
            "workloads: nothing to verify; add an expectation or drop --no-from-spec",
        )
    return Job(settings=settings, targets=tuple(plans))


def _check_misspelled(environ: Mapping[str, str]) -> None:
    """A VERIFY_* variable that is almost a setting's is a typo that would silently do nothing
    (VERIFY_EXPECT_ENVS); one far from every setting may belong to another tool (VERIFY_SSL)."""
    import difflib

    known = [env_var(name) for name in Settings.model_fields]
    for var in sorted(environ):
        if not var.startswith(ENV_PREFIX) or var in known or not environ[var].strip():
            continue
        close = difflib.get_close_matches(var, known, n=1, cutoff=0.85)
        if close:
            raise ConfigError("", f"{var} is not a setting; did you mean {close[0]}?")


def load_settings(*, argv: Sequence[str], environ: Mapping[str, str]) -> Settings:
    """Parse `argv` over the VERIFY_* values in `environ`; flags (even repeatable) replace env."""
    namespace = build_parser().parse_args(list(argv))
    _check_misspelled(environ)
    deployments = list(dict.fromkeys(namespace.deployment or []))
    if len(deployments) > 1:
        raise ConfigError(
            "deployment",
            f"names one Deployment but was given {len(deployments)}; to verify several, "
            "repeat --target deployment/NAME",
        )
    namespace.deployment = deployments[0] if deployments else None
    overrides = {k: v for k, v in vars(namespace).items() if v is not None}
    try:
        with _using_environ(environ):
            return Settings(**overrides)
    except ValidationError as exc:
        loc, message = error_message(exc)
        field = str(loc[0]) if loc else ""
        if message == "is required":
            message = "is required; pass the flag or set the env var"
        raise ConfigError(field, message) from None


def settings_fields() -> list[tuple[str, str, str, str]]:
    """(field name, env var, CLI flag or "", description) rows, for generating docs."""
    return [
        (name, env_var(name), _FLAGS.get(name, ""), info.description or "")
        for name, info in Settings.model_fields.items()
    ]
