"""The --report-json document's JSON Schema, versioned and shipped beside this module
(`report-v1.json`), and what `report merge` checks of every file before reading it: JSON that
parses without recursing, the schema, then verdicts that agree with each other. Pure.

The validator knows only the keywords the schema uses (type, enum, properties, required,
additionalProperties false, items, local $ref; the rest are annotations) and refuses a schema with
any other. Tests hold it to the `jsonschema` library's answers on mutated reports and validate
every report the suite writes with that library; it is not a runtime dependency for these few
lines (it would bring attrs, referencing and the compiled rpds-py into the image)."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from verify.exitcodes import ExitCode, most_fundamental
from verify.redact import short

VERSION = 1
FILE = f"report-v{VERSION}.json"
MAX_BYTES = 64 * 1024 * 1024  # a report of 5,000 pods is ~5 MB
NESTING = 200  # pydantic-core's JSON parser refuses deeper documents
VALIDATED = frozenset({"type", "enum", "properties", "required", "additionalProperties", "items", "$ref"})
ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})

_KINDS = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
_AT = re.compile(r"at line (\d+) column (\d+)")
# a JSON token that moves along a path: a string (a key when a colon follows), a bracket, a comma
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?|[\[\]{},]')
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STEPS = 16  # of a path shown: a report's deepest field is 11 steps in

Path = list[str | int]


class Invalid(ValueError):
    """Why a document is no report of this version, naming the field (`workloads[0].result`)."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"`{field(path)}` {problem}" if path else f"it {problem}")


def field(path: Path) -> str:
    """`workloads[0].attempts[1].status`; a path longer than any a report has (an absurdly
    nested document's) keeps its first steps."""
    shown = ""
    for step in path[:_STEPS]:
        if isinstance(step, int):
            shown += f"[{step}]"
        elif _NAME.fullmatch(step):
            shown += f".{step}" if shown else step
        else:
            shown += f"[{json.dumps(short(step, limit=40))}]"
    return shown + (f"…(+{len(path) - _STEPS} levels)" if len(path) > _STEPS else "")


@cache
def schema() -> dict[str, Any]:
    """The published schema, as shipped in the package."""
    text = resources.files(__package__).joinpath(FILE).read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def parse(data: bytes) -> Any:
    """JSON text as Python values. pydantic-core's parser (jiter) stops at NESTING levels where
    `json.loads` would recurse until RecursionError (or the C stack) ends the process; NaN and
    Infinity, which no JSON writer here produces, are refused. Invalid says where. Give it at
    most MAX_BYTES + 1 bytes of a file: more is refused unparsed."""
    from pydantic_core import from_json  # the merge's only

    if len(data) > MAX_BYTES:
        raise Invalid([], f"is larger than {MAX_BYTES >> 20} MiB")
    try:
        return from_json(data, allow_inf_nan=False)
    except ValueError as e:
        message = str(e)
        at = _AT.search(message)
        if "recursion limit" not in message or at is None:
            raise Invalid([], f"is not JSON: {message}") from None
        line, column = int(at[1]), int(at[2])
        path = _path_at(data, offset=_offset(data, line=line, column=column))
        raise Invalid(
            path,
            f"is nested more than {NESTING} levels deep (line {line}, column {column}); "
            f"a report nests at most {levels()}",
        ) from None


def _offset(data: bytes, *, line: int, column: int) -> int:
    """The byte offset of a 1-based line and (byte) column, as jiter counts them."""
    start = 0
    for _ in range(line - 1):
        start = data.find(b"\n", start) + 1
        if start == 0:
            return len(data)
    return start + column - 1


def _path_at(data: bytes, *, offset: int) -> Path:
    """The keys and indices that lead to `offset`: read token by token, up to there only."""
    path: Path = []
    for m in _TOKEN.finditer(data, 0, offset):
        token = m[0]
        if token in (b"[", b"{"):
            path.append(0 if token == b"[" else "")
        elif token in (b"]", b"}"):
            if path:
                path.pop()
        elif token == b",":
            if path and isinstance(path[-1], int):
                path[-1] += 1
        elif m[1] and path:  # a key
            try:
                path[-1] = str(json.loads(token[: m.start(1) - m.start()]))
            except ValueError:
                path[-1] = "?"
    return path


def levels(node: dict[str, Any] | None = None) -> int:
    """How deep the schema lets a report nest objects and lists."""
    node = _resolve(schema() if node is None else node)
    inner = [*node.get("properties", {}).values(), *([node["items"]] if "items" in node else [])]
    nests = node.get("type") in ("object", "array")
    return int(nests) + max((levels(n) for n in inner), default=0)


def check(doc: Any) -> None:
    """Invalid naming the first field that is not as the schema says, else the first verdict
    that contradicts another."""
    validate(doc)
    _consistent(doc)


def validate(doc: Any) -> None:
    """Invalid naming the first field that is not as the schema says."""
    _validate(schema(), doc, [])


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix):
        raise ValueError(f"the report schema's $ref {ref!r} is not a local #/$defs/ one")
    target: dict[str, Any] = schema()["$defs"][ref.removeprefix(prefix)]
    return target


def _is(kind: str, value: Any) -> bool:
    """JSON Schema's types: a bool is no number, and 1.0 is an integer."""
    if kind == "integer":
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    kinds: dict[str, type | tuple[type, ...]] = {
        "object": dict,
        "array": list,
        "string": str,
        "boolean": bool,
        "null": type(None),
    }
    return isinstance(value, kinds[kind])


def _same(a: Any, b: Any) -> bool:
    """JSON equality of `enum`'s scalars: 1.0 is 1, and true is not (a bool is no number)."""
    if _is("number", a) and _is("number", b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(short(value, limit=40))
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return _KINDS["object" if isinstance(value, dict) else "array"]


def _validate(node: dict[str, Any], value: Any, path: Path) -> None:
    """Depth-first in the document's order; the recursion follows the schema's nesting, not the
    document's: a value of the wrong type is refused before it is entered."""
    node = _resolve(node)
    kinds = node.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is(kind, value) for kind in kinds):
            raise Invalid(path, f"is {_shown(value)}, not {' or '.join(_KINDS[k] for k in kinds)}")
    if "enum" in node and not any(_same(value, allowed) for allowed in node["enum"]):
        raise Invalid(path, f"is {_shown(value)}, not one of {', '.join(map(json.dumps, node['enum']))}")
    if isinstance(value, dict):
        properties = node.get("properties", {})
        for key, item in value.items():
            if key in properties:
                _validate(properties[key], item, [*path, key])
            elif node.get("additionalProperties") is False:
                raise Invalid([*path, key], f"is not a field of a version {VERSION} report")
        for key in node.get("required", ()):
            if key not in value:
                raise Invalid([*path, key], "is missing")
    if isinstance(value, list) and "items" in node:
        for i, item in enumerate(value):
            _validate(node["items"], item, [*path, i])


def _outcome(code: int) -> str:
    return "passed" if code == 0 else "failed" if code == 1 else "error"


def _consistent(doc: dict[str, Any]) -> None:
    """Each result says what its exit code does, and the report's exit code is the most
    fundamental of its workloads' (a signal's, 130 or 143, outranks them all)."""
    levels: list[tuple[Path, dict[str, Any]]] = [([], doc)]
    levels += [(["workloads", i], w) for i, w in enumerate(doc["workloads"])]
    for path, level in levels:
        code, said = int(level["exit_code"]), level["result"]
        if said != _outcome(code):
            raise Invalid([*path, "result"], f'is "{said}" but its exit_code {code} means {_outcome(code)}')
    run = ExitCode(int(doc["exit_code"]))
    for i, w in enumerate(doc["workloads"]):
        own = ExitCode(int(w["exit_code"]))
        if most_fundamental([run, own]) is not run:
            raise Invalid(
                ["workloads", i, "result"],
                f'is "{w["result"]}" (exit {int(own)}) but the report\'s result is "{doc["result"]}" '
                f"(exit {int(run)}): a run ends with the most fundamental of its workloads' codes",
            )
