"""Parsers and validators of setting values, shared by the run's settings and each target of a
--config file: durations, `PATH=SPEC`, `PORT/PATH[=STATUS]`, label selectors, names.

Each raises ValueError with the fix in its text and never quotes what may be a value (a secret
pasted where a name belongs)."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from verify.kube.kinds import kind_of
from verify.kube.names import LABEL_NAME, LABEL_VALUE, OBJECT_KEY, SHELL_NAME, valid_label, valid_subdomain
from verify.model import FileSource, FileSpec, HttpExpectation, Kind, WorkloadRef
from verify.redact import short

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}\Z")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SPEC_HINT = "use sha256:<hex>, configmap:<name>/<key> or secret:<name>/<key>"
_HTTP_HINT = "use PORT/PATH[=STATUS], e.g. 8080/healthz or 8080/config=200"
_JSON_FIELD = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\Z")
_TARGET_HINT = "use KIND/NAME, KIND deployment, statefulset, daemonset or rollout (deploy, sts, ds, ro)"


def what(item: Any) -> str:
    """How an error names a non-text entry: its kind only (`{name: K, value: V}` may hold a secret)."""
    kinds = {dict: "a mapping", list: "a list", bool: "true/false", int: "a number", float: "a number"}
    kind = next((k for t, k in kinds.items() if isinstance(item, t)), "a non-text entry")
    return f"{kind} (content not shown)"


def split_list(value: Any, *, newline_only: bool) -> list[Any]:
    """Split env strings (and each CLI item) on newlines, and on commas unless `newline_only`."""
    if value is None:
        items: list[Any] = []
    elif isinstance(value, str):
        items = [value]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise ValueError(f"{what(value)} is not a text or a list of texts")
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
            f'"{short(str(value))}" is not a usable duration; use at most {MAX_DURATION // 3600:g}h, e.g. 10m'
        )
    return seconds


def _duration(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("true/false is not a duration; use e.g. 90, 90s, 10m or 1m30s")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().lower()
    if re.match(r"-[0-9.]", text) and not re.fullmatch(r"-[0-9.]+", text):
        return -_duration(text[1:])  # -1m: negative, which the setting's check refuses
    with contextlib.suppress(ValueError):
        return float(text)
    pos, total = 0, 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if not text or pos != len(text):
        raise ValueError(f'"{short(str(value))}" is not a duration; use e.g. 90, 90s, 10m or 1m30s')
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
        if not valid_subdomain(name):
            raise ValueError(f'"{raw}" has an invalid {source} name "{name}"')
        if len(key) > 253 or not OBJECT_KEY.match(key):
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
    return build_http_check(port=port_text, path="/" + path, status=status, shown=raw)


def build_http_check(
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
    joined = str(port).isdigit() and str(path).startswith("/")  # else each as written
    shown = shown or short(f"{port}{path}" if joined else f"port {port}, path {path}")
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
                f'"{shown}" compares with {what(equals)}, which is not a JSON value; quote it'
            ) from None
    if cm:
        name, slash, key = cm.partition("/")
        if not slash or not valid_subdomain(name) or not key or not OBJECT_KEY.match(key):
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
    if slash and (not prefix or len(prefix) > 253 or not valid_subdomain(prefix)):
        return False
    return bool(LABEL_NAME.match(name))


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
            ok = _label_key(m.group(1)) and all(LABEL_VALUE.match(v) for v in values)
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
                ok = _label_key(key) and bool(LABEL_VALUE.match(value.strip()))
            else:
                ok = _label_key(key.removeprefix("!"))
        if not term or not ok:
            raise ValueError(
                f'"{raw}" is not a valid label selector (at "{term}"); '
                "use e.g. app=web,tier!=db or tier in (web,api)"
            )
    return raw


# -- validators shared by the run's Settings and each target of a --config file ---------------


def containers(cls: Any, value: Any) -> list[Any]:
    items = split_list(value, newline_only=False)
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{what(item)} is not a container name; list names only")
        if not valid_label(item):
            raise ValueError(f'"{item}" is not a valid container name (DNS-1123 label)')
    return list(dict.fromkeys(items))


def expect_env(cls: Any, value: Any) -> list[Any]:
    items = split_list(value, newline_only=False)
    for item in items:
        if not isinstance(item, str):
            # `{name: K, value: V}` (a pod spec's env entry) is the likely mistake: never shown
            raise ValueError(f"{what(item)} is not an env var name; list names only, no values")
        if not SHELL_NAME.match(item):
            # KEY=VALUE is the likely mistake: the value may be a secret, so it is never shown
            name, eq, _ = item.partition("=")
            shown = f'"{name}=…" (its value not shown)' if eq else f'"{name}"'
            raise ValueError(
                f"{shown} is not an env var name; use letters, digits and _ "
                "(not starting with a digit), names only, no values"
            )
    return list(dict.fromkeys(items))


def expect_file(cls: Any, value: Any) -> list[FileSpec]:
    specs: list[FileSpec] = []
    for item in split_list(value, newline_only=True):
        if isinstance(item, FileSpec):
            specs.append(item)
        elif isinstance(item, str):
            specs.append(parse_file_spec(item))
        else:
            raise ValueError(f"{what(item)} is not PATH=SPEC; {_SPEC_HINT}")
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
    return build_http_check(
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


def expect_http(cls: Any, value: Any) -> list[HttpExpectation]:
    items = value if isinstance(value, list) else split_list(value, newline_only=True)
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
            raise ValueError(f"{what(item)} is not an HTTP check; {_HTTP_HINT}")
    return list(dict.fromkeys(checks))


def target_list(cls: Any, value: Any) -> list[WorkloadRef]:
    refs: list[WorkloadRef] = []
    for item in split_list(value, newline_only=False):
        refs.append(item if isinstance(item, WorkloadRef) else parse_target(str(item)))
    return list(dict.fromkeys(refs))


def namespace(cls: Any, value: str | None) -> str | None:
    if value is not None and (not valid_label(value)):
        raise ValueError(f'"{short(str(value))}" is not a valid namespace name (DNS-1123 label)')
    return value


def parse_kind(text: str) -> Kind:
    kind = kind_of(text)
    if kind is None:
        raise ValueError(f'"{text}" is not a workload kind; {_TARGET_HINT}')
    return kind


def parse_target(text: str) -> WorkloadRef:
    """`deployment/web`, `sts/db`, `daemonset.apps/agent` (kubectl's spellings)."""
    raw = text.strip()
    kind_text, slash, name = raw.partition("/")
    if not slash or not kind_text or not name:
        raise ValueError(f'"{raw}" is not KIND/NAME; {_TARGET_HINT}')
    kind = parse_kind(kind_text)
    if not valid_subdomain(name):
        raise ValueError(
            f'"{raw}" has an invalid {kind} name "{name}"; use lowercase letters, digits, '
            "'-' and '.' (DNS-1123 subdomain)"
        )
    return WorkloadRef(kind=kind, name=name)


# an image reference, [registry[:port]/]path[:tag][@sha256:digest]: distribution's grammar, loosely
_IMAGE = re.compile(
    r"(?:[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]+)?/)?[a-z0-9]+(?:[._-]+[a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
    r"(?:@sha256:[0-9a-f]{64})?\Z"
)


def image_reference(text: str) -> str:
    """A --debug-image value: one image reference, e.g. busybox:1.36 or
    gcr.io/distroless/static:debug-nonroot (pin a tag or digest)."""
    raw = text.strip()
    if not raw or len(raw) > 512 or not _IMAGE.match(raw):
        raise ValueError(
            f'"{short(text)}" is not an image reference; use e.g. busybox:1.36 or '
            "gcr.io/distroless/static:debug-nonroot"
        )
    return raw
