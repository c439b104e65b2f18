"""The run's settings: one frozen record read from `VERIFY_*` variables (of an explicit mapping,
never os.environ behind the caller's back) with flags as init values that win.

The contract is pydantic-settings' for this model (prefix VERIFY_, names case-insensitive, empty
values ignored, list fields given their raw text, every value validated, defaults included, every
wrong field reported at once, then the cross-field check); the test suite holds `from_sources`
to a pydantic-settings twin built from `FIELDS`, values and error words alike
(tests/unit/test_settings_sources.py). It is checked here by plain functions: importing pydantic
and building this model was ~0.13 s of CPU, a third of a run's start-up before its first request."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from verify.config import values
from verify.config.naming import ENV_PREFIX, env_var
from verify.kube.names import valid_subdomain
from verify.model import FileSpec, HttpExpectation, WorkloadRef
from verify.redact import escaped, looks_like_content, one_line, short, shown_path

Check = Callable[[str, Any], Any]  # (field name, raw value) -> value; ValueError says what is wrong


class InvalidSettings(ValueError):
    """Every wrong setting at once: (field, one-line message) in the fields' order, then unknown
    names, then the cross-field check (only when every field was valid), as pydantic orders them."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems))
        self.problems = tuple(problems)


class Secret:
    """A value never shown: repr and str print stars (pydantic's SecretStr, which it replaces)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return "Secret('**********')"

    __str__ = __repr__


# -- checks: the raw value (a flag's or an env var's text, a list from repeated flags) in, the
# -- setting out; the wording of each error is the one pydantic's validators gave


def _text(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"{values.what(value)}: Input should be a valid string")


def _then(after: Callable[[str | None], Any]) -> Check:
    """A text setting, then `after` on its value (None included, as pydantic's after-validators)."""
    return lambda name, value: after(_text(name, value))


def _listed(parse: Callable[[Any, Any], list[Any]]) -> Check:
    return lambda name, value: parse(None, value)


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _bool(name: str, value: Any) -> bool | None:
    """pydantic's lax bool: bools, 0/1, and its words in any case (not stripped)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    shown = f'"{short(value)}"' if isinstance(value, str) else values.what(value)
    raise ValueError(f"{shown} is not a boolean; use true or false")


def _one_of(*words: str) -> Check:
    def check(name: str, value: Any) -> str:
        if isinstance(value, str) and value in words:
            return value
        shown = f'"{short(value)}"' if isinstance(value, str) else values.what(value)
        if name == "restart":
            raise ValueError(f'{shown} is not a restart mode; use "once" or "never"')
        quoted = [f"'{w}'" for w in words]
        raise ValueError(f"{shown} is not one of {', '.join(quoted[:-1])} or {quoted[-1]}")

    return check


def _deployment(value: str | None) -> str | None:
    if value is not None and not valid_subdomain(value):
        raise ValueError(
            f'"{short(str(value))}" is not a valid Deployment name; use lowercase letters, digits, '
            "'-' and '.' (DNS-1123 subdomain)"
        )
    return value


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


def _path(name: str, raw: Any) -> str | None:
    """A file path (a folder for output_dir) the run can write, checked now, not after the run,
    when the verdict would have nowhere to go; the kubeconfig only has to look like a path."""
    value = _text(name, raw)
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


def _secret(name: str, value: Any) -> Secret | None:
    if isinstance(value, Secret):
        return value
    text = _text(name, value)
    return None if text is None else Secret(text)


def _setting(description: str, check: Check, default: Any = None) -> Any:
    """A field with its help text and its check (a list default is copied per instance)."""
    meta = {"description": description, "check": check}
    if isinstance(default, list):
        return field(default_factory=list, metadata=meta)
    return field(default=default, metadata=meta)


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


@dataclass(frozen=True)
class Settings:
    """Validated settings; built by `from_sources` (through `load_settings`). Field order is
    the order of --help, the README's table and the errors."""

    namespace: str | None = _setting(
        "Namespace of the workloads (default: the kubeconfig's).", _then(lambda v: values.namespace(None, v))
    )
    deployment: str | None = _setting(
        "Name of a Deployment to verify (shorthand for --target deployment/NAME).", _then(_deployment)
    )
    targets: list[WorkloadRef] = _setting(
        "Workloads to verify as KIND/NAME, KIND deployment, statefulset or daemonset; "
        "the flag repeats, the env var is comma/newline separated.",
        _listed(values.target_list),
        [],
    )
    selector: str | None = _setting(
        "Label selector: also verify every Deployment, StatefulSet and DaemonSet "
        "with these labels, e.g. app.kubernetes.io/part-of=shop.",
        _then(lambda v: None if v is None else values.check_selector(v)),
    )
    config: str | None = _setting(
        "YAML file listing targets with their own containers/expect-env/expect-file/"
        "expect-http/from-spec/restart (see README).",
        _text,
    )
    containers: list[str] = _setting(_CONTAINERS_HELP, _listed(values.containers), [])
    expect_env: list[str] = _setting(_EXPECT_ENV_HELP, _listed(values.expect_env), [])
    expect_file: list[FileSpec] = _setting(_EXPECT_FILE_HELP, _listed(values.expect_file), [])
    expect_http: list[HttpExpectation] = _setting(_EXPECT_HTTP_HELP, _listed(values.expect_http), [])
    restart: Literal["once", "never"] = _setting(_RESTART_HELP, _one_of("once", "never"), "once")
    timeout: float = _setting(
        "Deadline for the whole run (waits, retries, execs), e.g. 600, 10m.", _duration(zero=False), 600.0
    )
    exec_timeout: float = _setting(
        "Timeout of one exec into a container (and of one HTTP check).", _duration(zero=False), 30.0
    )
    concurrency: int = _setting("Parallel execs and HTTP checks (1..512).", _concurrency, 32)
    kubeconfig: str | None = _setting(
        "Path of the kubeconfig file (default, as kubectl: every file of $KUBECONFIG merged, "
        "else ~/.kube/config, else the mounted in-cluster service account).",
        _path,
    )
    kubeconfig_data: Secret | None = _setting(
        "Kubeconfig content (YAML/JSON, or base64 of it), as CI secrets hold it; "
        "written to a 0600 temp file, never printed.",
        _secret,
    )
    context: str | None = _setting("Kubeconfig context to use.", _text)
    report_json: str | None = _setting("Write a JSON report here.", _path)
    junit: str | None = _setting("Write a JUnit XML report here.", _path)
    summary: str | None = _setting(
        "Write a Markdown summary here (on GitHub it also goes to the job summary).", _path
    )
    output_dir: str | None = _setting(
        "Write one file per output here (result, restarted, failed-pods, exit-code) "
        "plus report.json, junit.xml and summary.md, for Argo output parameters.",
        _path,
    )
    from_spec: bool | None = _setting("Derive expectations from the pod template (auto if unset).", _bool)
    volume_grace: float = _setting(
        "How long to wait for mounted ConfigMap/Secret updates.", _duration(zero=True), 90.0
    )
    min_ready: float = _setting(
        "How long each inspected container must have been running and ready, unrestarted, "
        "before it is inspected (the workload's minReadySeconds when that is longer); a container "
        "that restarts or turns unready before its inspection ends is a failure, never a pass.",
        _duration(zero=True),
        5.0,
    )
    fail_fast: bool = _setting(
        "Stop waiting (exit 4) as soon as a pod of the new revision cannot become ready without "
        "a change to the spec (a missing image or command, a crash loop, a pod no node can take; "
        "see README, Exit codes); --no-fail-fast waits for the rollout until --timeout.",
        _bool,
        True,
    )
    color: Literal["auto", "always", "never"] = _setting(
        "Colour the verdict and the end table: auto (only on a terminal, and not when "
        "NO_COLOR is set), always or never.",
        _one_of("auto", "always", "never"),
        "auto",
    )
    debug_image: str | None = _setting(
        "Image of an ephemeral debug container that inspects containers without a shell "
        "(distroless, scratch) through their process namespace, e.g. busybox:1.36 (off by default; "
        "needs `patch pods/ephemeralcontainers`; the container stays in the pod until it is replaced).",
        _then(lambda v: None if v is None else values.image_reference(v)),
    )
    dry_run: bool = _setting(
        "Judge as usual but never restart: say what would be restarted and why, send no "
        "write; the exit code is the one the run would have had without the restart.",
        _bool,
        False,
    )

    @classmethod
    def from_sources(cls, *, environ: Mapping[str, str], flags: Mapping[str, Any]) -> Settings:
        """`flags` (init values) over the `VERIFY_*` variables of `environ`, every value checked
        (defaults too); raises InvalidSettings naming every wrong one."""
        given = {**env_values(environ), **flags}
        checked: dict[str, Any] = {}
        problems: list[tuple[str, str]] = []
        for name, setting in FIELDS.items():
            raw = given.get(name, setting.default)
            try:
                checked[name] = setting.check(name, raw)
            except ValueError as e:
                problems.append((name, one_line(str(e))))
        problems += [(name, "is not a known setting") for name in given if name not in FIELDS]
        if not problems and checked["kubeconfig"] is not None and checked["kubeconfig_data"] is not None:
            problems.append(
                (
                    "",
                    f"--kubeconfig ({env_var('kubeconfig')}) and {env_var('kubeconfig_data')} are both set; "
                    "set only one",
                )
            )
        if problems:
            raise InvalidSettings(problems)
        return cls(**checked)


@dataclass(frozen=True)
class Setting:
    """One field of Settings as docs, --help and the checks see it."""

    name: str
    default: Any
    description: str
    check: Check


def _fields() -> dict[str, Setting]:
    from dataclasses import MISSING, fields

    out: dict[str, Setting] = {}
    for f in fields(Settings):
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        out[f.name] = Setting(
            name=f.name, default=default, description=f.metadata["description"], check=f.metadata["check"]
        )
    return out


FIELDS: Mapping[str, Setting] = _fields()


def env_values(environ: Mapping[str, str]) -> dict[str, str]:
    """Each setting's raw `VERIFY_*` value, as EnvSettingsSource finds it with
    case_sensitive=False and env_ignore_empty=True (pydantic_settings/sources/utils.py
    parse_env_vars: names lower-cased, the last of two spellings wins, "" is unset)."""
    lowered = {k.lower(): v for k, v in environ.items() if v != ""}
    found: dict[str, str] = {}
    for name in FIELDS:
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
