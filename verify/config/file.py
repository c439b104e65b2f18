"""`--config verify.yaml`: targets with their own expectations, validated by the settings'
own validators, with errors that name the file, the line and the field.

    targets:
      - target: deployment/web
        expect-env: [FEATURE_CREDENTIAL]
        expect-http:
          - 8080/healthz
          - {port: 8080, path: /config, json: {field: config_version, equals-configmap: web/version}}
      - target: daemonset/agent
        from-spec: true
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from verify.config import values
from verify.config.messages import error_messages
from verify.config.naming import FLAG_CUTOFF, did_you_mean
from verify.config.yamlsafe import YamlRefused, compose_and_load
from verify.errors import ConfigFileError
from verify.model import FileSpec, HttpExpectation, WorkloadRef
from verify.redact import short

# file keys are the pipeline inputs' kebab-case names
_KEYS = {
    "target": "target",
    "namespace": "namespace",
    "containers": "containers",
    "expect-env": "expect_env",
    "expect-file": "expect_file",
    "expect-http": "expect_http",
    "from-spec": "from_spec",
    "restart": "restart",
    "revision": "revision",
}
_MAX_BYTES = 1024 * 1024
MAX_PROBLEMS = 20  # a file's mistakes reported at once, one line each


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
    revision: Literal["latest", "stable"] | None = None

    _check_namespace = field_validator("namespace", mode="after")(values.namespace)
    _split_containers = field_validator("containers", mode="before")(values.containers)
    _split_env = field_validator("expect_env", mode="before")(values.expect_env)
    _parse_files = field_validator("expect_file", mode="before")(values.expect_file)
    _parse_http = field_validator("expect_http", mode="before")(values.expect_http)

    @field_validator("target", mode="before")
    @classmethod
    def _parse_target(cls, value: Any) -> WorkloadRef:
        if isinstance(value, WorkloadRef):
            return value
        if not isinstance(value, str):
            raise ValueError(f"{values.what(value)} is not KIND/NAME, e.g. deployment/web")
        return values.parse_target(value)


Path = tuple[Any, ...]


def _lines(node: yaml.Node, path: Path, out: dict[Path, int], seen: set[int]) -> None:
    """Record the line of every key and list item, so errors can point into the file. An
    aliased node is walked once (anchors repeated by aliases cannot blow this up)."""
    out.setdefault(path, node.start_mark.line + 1)
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            sub = (*path, str(key.value))
            out[sub] = key.start_mark.line + 1
            _lines(value, sub, out, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*path, i), out, seen)


def _line_of(lines: dict[Path, int], path: Path) -> int:
    while path and path not in lines:
        path = path[:-1]
    return lines.get(path, 1)


def load_targets(*, path: str) -> list[TargetSpec]:
    """Read and validate the file; raise ConfigFileError naming file, line and field."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
    except OSError as e:
        raise ConfigFileError(
            f"{path}: cannot read it ({e.strerror or type(e).__name__}); check the path"
        ) from None
    if len(raw) > _MAX_BYTES:
        raise ConfigFileError(f"{path}: is larger than 1 MiB; is it the right file?")
    try:
        text = raw.decode("utf-8")
        node, data = compose_and_load(text)
    except YamlRefused as e:
        raise ConfigFileError(f"{path}:{e.line}: {e}") from None
    except UnicodeDecodeError:
        raise ConfigFileError(f"{path}: is not UTF-8 text") from None
    except RecursionError:
        raise ConfigFileError(f"{path}: is nested too deeply; is it the right file?") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        problem = getattr(e, "problem", None) or "invalid YAML"
        raise ConfigFileError(f"{where}: {problem}; fix the YAML syntax") from None
    lines: dict[Path, int] = {}
    if node is not None:
        _lines(node, (), lines, set())

    def fail(at: Path, message: str) -> ConfigFileError:
        return ConfigFileError(f"{path}:{_line_of(lines, at)}: {message}")

    if not isinstance(data, dict):
        raise fail((), 'must be a mapping with a "targets" list, e.g. targets: [{target: deployment/web}]')
    unknown = sorted(str(k) for k in data if k != "targets")
    if unknown:
        raise fail((unknown[0],), f'unknown key "{short(unknown[0])}"; the file holds only "targets"')
    targets = data.get("targets")
    if not isinstance(targets, list) or not targets:
        raise fail(("targets",), '"targets" must be a non-empty list of {target: KIND/NAME, ...}')
    specs: list[TargetSpec] = []
    problems: list[ConfigFileError] = []
    first: dict[tuple[str, str, str | None], int] = {}
    stopped = False
    for i, item in enumerate(targets):
        if len(problems) >= MAX_PROBLEMS:
            stopped = True
            break
        spec = _target(i, item, fail=fail, problems=problems)
        if spec is None:
            continue
        same = (spec.target.kind, spec.target.name, spec.namespace)
        if same in first:
            j = first[same]
            problems.append(
                fail(
                    ("targets", i),
                    f"targets[{i}] ({short(str(item.get('target')))}): names the same workload as "
                    f"targets[{j}] (line {_line_of(lines, ('targets', j))}); name it once",
                )
            )
            continue
        first[same] = i
        specs.append(spec)
    if problems:
        shown = [str(p) for p in problems[:MAX_PROBLEMS]]
        if stopped or len(problems) > MAX_PROBLEMS:
            shown[-1] += f" (the first {len(shown)} problems; fix them and run again)"
        raise ConfigFileError(shown[0], lines=tuple(shown) if len(shown) > 1 else ())
    return specs


def _target(
    i: int, item: Any, *, fail: Callable[[Path, str], ConfigFileError], problems: list[ConfigFileError]
) -> TargetSpec | None:
    """targets[i] validated, or None with every problem it has appended to `problems`."""
    at: Path = ("targets", i)
    label = f"targets[{i}]"
    if not isinstance(item, dict):
        problems.append(fail(at, f"{label}: must be a mapping such as {{target: deployment/web}}"))
        return None
    if isinstance(item.get("target"), str):
        label += f" ({short(item['target'])})"
    fields: dict[str, Any] = {}
    found = len(problems)
    for key, value in item.items():
        name = _KEYS.get(str(key))
        if name is None:
            meant = did_you_mean(str(key).replace("_", "-"), sorted(_KEYS), cutoff=FLAG_CUTOFF)
            fix = f"did you mean {meant}?" if meant else f"use {', '.join(sorted(_KEYS))}"
            problems.append(fail((*at, str(key)), f'{label}: unknown key "{short(str(key))}"; {fix}'))
            continue
        fields[name] = value
    if "target" not in fields:
        problems.append(fail(at, f"{label}: has no target; add target: KIND/NAME, e.g. deployment/web"))
        return None
    try:
        spec = TargetSpec(**fields)
    except RecursionError:
        problems.append(fail(at, f"{label}: is nested too deeply"))
        return None
    except ValidationError as exc:
        for loc, message in error_messages(exc):
            field = str(loc[0]) if loc else ""
            key = next((k for k, v in _KEYS.items() if v == field), field)
            problems.append(fail((*at, key, *loc[1:]), f"{label}: {key}: {message}"))
        return None
    return None if len(problems) > found else spec
