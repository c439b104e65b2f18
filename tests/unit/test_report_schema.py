"""The report's published JSON Schema (verify/report/schema/report-v1.json): what --report-json
writes validates with it, its enums are the product's own, and the small validator `report merge`
runs answers as the `jsonschema` library does on any document, valid or mutated."""

from __future__ import annotations

import copy
import json
from typing import Any, get_args, get_type_hints

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.exitcodes import ExitCode
from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.flow.probe.debugger import DebugContainer
from verify.model import Kind
from verify.report import schema
from verify.report.jsondoc import to_json
from verify.report.result import Outcome, RunInfo, RunResult, WorkloadResult

VALIDATOR = jsonschema.Draft202012Validator(schema.schema())


def full_report() -> dict[str, Any]:
    """A report with every field the writer can write: info, a debug container, two attempts,
    pod-level and container-level checks with their judgment, uninspectable pods and containers."""
    missing = CheckResult("env", "FEATURE_CREDENTIAL", CheckStatus.MISSING, "not set", restart_can_fix=True, why="env is read at start")
    http = CheckResult("http", "8080/healthz", CheckStatus.UNINSPECTABLE, "refused", restart_can_fix=False, why="the port is closed")  # fmt: skip
    first = AttemptVerdict(
        "7c9", (PodVerdict("web-1", "node-1", (ContainerVerdict("app", (missing,)),), checks=(http,)),),
        problems=("expected 2 pods of revision 7c9, found 1",), diagnosis=("secret web lacks the key",),
    )  # fmt: skip
    last = AttemptVerdict(
        "8d0",
        (
            PodVerdict("web-2", "", (), Uninspectable("no_shell", "the image has no shell (sh)", True)),
            PodVerdict("web-3", "node-2", (ContainerVerdict("app", (), Uninspectable("timeout", "exec timed out", False)),)),
            PodVerdict("web-4", "node-2", (ContainerVerdict("app", (CheckResult("file", "/etc/a", CheckStatus.OK),)),)),
        ),
    )  # fmt: skip
    workloads = (
        WorkloadResult("deployment", "shop", "web", (first, last), True, result="failed", exit_code=1, message="m"),
        WorkloadResult("statefulset", "shop", "db", (), False, error="forbidden", result="error", exit_code=3, prior_restart="2024-01-01T00:00:00Z"),
        WorkloadResult("daemonset", "shop", "agent", (), False, result="passed", exit_code=0, would_restart=True),
    )  # fmt: skip
    run = RunResult(
        "error", 3, True, workloads, "3 workloads", (DebugContainer("shop", "web-2", "app", "debugger-x", True),)
    )
    info = RunInfo("0.1.0", "2024-01-01T00:00:00.000Z", "2024-01-01T00:00:01.500Z", 1.5, "prod", "v1.30.0")
    return json.loads(json.dumps(to_json(run=run, info=info)))


def test_what_the_report_writer_writes_validates_with_the_published_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema.schema())
    doc = full_report()
    VALIDATOR.validate(doc)
    schema.check(doc)
    bare = json.loads(json.dumps(to_json(run=RunResult("error", 2, False, (), "--timeout: bad"))))
    VALIDATOR.validate(bare)  # a run refused before any call (no info, no workload)
    schema.check(bare)


def test_the_schema_lists_the_products_own_words_and_codes() -> None:
    defs = schema.schema()["$defs"]
    assert defs["exit_code"]["enum"] == [int(c) for c in ExitCode]
    assert defs["status"]["enum"] == [s.value for s in CheckStatus]
    assert defs["outcome"]["enum"] == list(get_args(Outcome))
    assert defs["workload"]["properties"]["kind"]["enum"] == list(get_args(Kind))
    assert defs["check"]["properties"]["type"]["enum"] == list(get_args(get_type_hints(CheckResult)["type"]))


def test_the_schema_uses_only_keywords_the_validator_knows() -> None:
    """A keyword the validator would ignore (pattern, anyOf, minimum...) would make `report merge`
    accept what the published schema refuses."""

    def keywords(node: Any, where: str) -> None:
        assert isinstance(node, dict), where
        unknown = set(node) - schema.VALIDATED - schema.ANNOTATIONS
        assert not unknown, f"{where}: {unknown}"
        assert node.get("additionalProperties", False) is False, where
        for name, sub in node.get("properties", {}).items():
            keywords(sub, f"{where}.{name}")
        for name, sub in node.get("$defs", {}).items():
            keywords(sub, f"{where}.$defs.{name}")
        if "items" in node:
            keywords(node["items"], f"{where}[]")

    keywords(schema.schema(), "schema")
    assert schema.levels() == 11  # workloads[].attempts[].pods[].containers[].checks[]


# values a validator could confuse: true and 1, 1.0 and 1, "1" and 1, null and "", [] and {}
CONFUSABLE = [None, True, False, 0, 1, 4, 143, 7, 1.0, 130.0, 2.5, "", "1", "ok", "passed", "error", "env", "deployment", [], {}]
JSON = st.recursive(
    st.sampled_from(CONFUSABLE) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["name", "x", "status"]), inner, max_size=2),
    max_leaves=3,
)  # fmt: skip


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*path, i))
    return found


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_validator_answers_as_the_jsonschema_library_on_mutated_reports(data: st.DataObject) -> None:
    doc = full_report()
    for _ in range(data.draw(st.integers(1, 2))):
        path = data.draw(st.sampled_from(_paths(doc)))
        how = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if not path:
            doc = data.draw(JSON) if how == "replace" else doc
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if how == "replace":
            parent[path[-1]] = data.draw(JSON)
        elif how == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["extra", "name", "status", "checks"]))] = data.draw(JSON)
        else:
            parent.append(copy.deepcopy(data.draw(JSON)))
    ours = True
    try:
        schema.validate(doc)
    except schema.Invalid:
        ours = False
    assert ours == VALIDATOR.is_valid(doc), (ours, next(iter(VALIDATOR.iter_errors(doc)), None))


def test_each_confusable_value_in_each_typed_field_is_judged_as_the_library_judges_it() -> None:
    """Every leaf of a full report replaced by each confusable value in turn: ~4,000 documents."""
    base = full_report()
    leaves = [p for p in _paths(base) if p and not isinstance(_at(base, p), dict | list)]
    for path in leaves:
        for value in CONFUSABLE:
            doc = full_report()
            _at(doc, path[:-1])[path[-1]] = value
            ours = True
            try:
                schema.validate(doc)
            except schema.Invalid:
                ours = False
            assert ours == VALIDATOR.is_valid(doc), (path, value)


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc
