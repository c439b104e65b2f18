"""`rollout-verify report merge`: the JSON reports of a fleet's jobs (one per cluster/namespace,
fanned out by a CI matrix) read as one verdict, one Markdown summary and one JUnit file with a
suite per cluster and namespace. Pure: the documents come in parsed, the texts go out.

Each report is named by its cluster: the label given as LABEL=PATH, else the report's kubeconfig
`context`, else the file's path. The verdict's exit code is the most fundamental among the
reports' (the same order as one run's workloads), so a fleet fails as its worst member does."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verify.errors import ConfigError
from verify.exitcodes import ExitCode, most_fundamental
from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    PodVerdict,
    Uninspectable,
)
from verify.redact import shown_path
from verify.report import schema
from verify.report.advice import advice, findings
from verify.report.junit import Suite
from verify.report.markdown import cell, workload_section
from verify.report.result import Outcome, WorkloadResult

HELP = (
    "Merge the --report-json files of a fan-out (one job per cluster/namespace) into one verdict. "
    "LABEL= names a report's cluster (default: its kubeconfig context, else its path). --summary "
    "writes one Markdown summary (a row per workload, then what failed in each and what to do), "
    "--junit one JUnit file with a suite per cluster and namespace. "
    "Exit code: the most fundamental among the reports' (2 when a file is no report)."
)


def help_text(*, usage: str, of_report: bool) -> str:
    """`report merge --help`, or with `of_report` `report --help`: the subcommands of `report`."""
    if not of_report:
        return f"usage: {usage}\n{HELP}\n"
    import textwrap

    merge_help = textwrap.fill(HELP, width=96, initial_indent="  merge  ", subsequent_indent=" " * 9)
    return (
        f"usage: {usage}\n\nthe subcommands of rollout-verify report:\n{merge_help}\n\n"
        "`rollout-verify report merge --help` says the same of merge alone.\n"
    )


_HEAD = {"passed": "✅ PASSED", "failed": "❌ FAILED", "error": "⚠️ ERROR"}
_CHECK_TYPES: dict[str, Literal["env", "file", "http"]] = {"env": "env", "file": "file", "http": "http"}
_RESULT = {"passed": "✅ passed", "failed": "❌ failed", "error": "⚠️ error"}


@dataclass(frozen=True)
class Member:
    """One workload of one report (or a report that verified none: kind `run`)."""

    cluster: str
    namespace: str
    kind: str
    name: str
    result: Outcome
    exit_code: int
    restarted: bool
    problems: tuple[str, ...]  # each with its remedy (report.advice)
    diagnosis: tuple[str, ...]  # the diagnosis lines that say more
    workload: WorkloadResult | None = None  # as the report holds it (None: a report of no workload)

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}" if self.name else self.kind

    @property
    def where(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.name else self.kind


@dataclass(frozen=True)
class Fleet:
    reports: int
    members: tuple[Member, ...]
    exit_code: int
    result: Outcome


def _check(doc: Mapping[str, Any]) -> CheckResult:
    """A check of the report as the run judged it, its remedy included."""
    fixes = doc.get("restart_can_fix")
    return CheckResult(
        type=_CHECK_TYPES[doc["type"]],
        subject=doc["target"],
        status=CheckStatus(doc["status"]),
        detail=doc["detail"],
        restart_can_fix=fixes if isinstance(fixes, bool) else None,
        why=doc.get("why") or "",
    )


def _error(doc: Mapping[str, Any]) -> Uninspectable | None:
    return Uninspectable("exec_failed", doc["reason"], permanent=False) if doc["reason"] else None


def _container(doc: Mapping[str, Any]) -> ContainerVerdict:
    return ContainerVerdict(doc["name"], tuple(map(_check, doc["checks"])), _error(doc))


def _attempt(doc: Mapping[str, Any]) -> AttemptVerdict:
    """One attempt of the report, rebuilt for the renderers a run's own reports use."""
    pods = tuple(
        PodVerdict(
            pod["name"],
            pod["node"],
            tuple(map(_container, pod["containers"])),
            _error(pod),
            tuple(map(_check, pod["checks"])),
        )
        for pod in doc["pods"]
    )
    return AttemptVerdict(doc["revision"], pods, tuple(doc["problems"]), (), tuple(doc["diagnosis"]))


def _workload(doc: Mapping[str, Any]) -> WorkloadResult:
    return WorkloadResult(
        kind=doc["kind"],
        namespace=doc["namespace"],
        name=doc["name"],
        attempts=tuple(map(_attempt, doc["attempts"])),
        restarted=doc["restarted"],
        error=doc["error"] or None,
        result=doc["result"],
        exit_code=int(doc["exit_code"]),
    )


def _members(*, cluster: str, doc: Mapping[str, Any]) -> list[Member]:
    """The report's workloads (it passed `schema.check`)."""
    result, code = doc["result"], int(doc["exit_code"])
    if not doc["workloads"]:  # bad input, a cancel: the report's message is all there is
        message = doc["message"] or result
        return [
            Member(cluster, "", "run", "", result, code, False, (message,) if result != "passed" else (), ())
        ]
    out = []
    for w in doc["workloads"]:
        workload = _workload(w)
        found = findings(workload=workload) if w["result"] != "passed" else []
        problems = tuple(f.line for f in found)
        diagnosis = tuple(advice(workload=workload, shown=found)) if found else ()
        out.append(
            Member(
                cluster,
                w["namespace"],
                w["kind"],
                w["name"],
                w["result"],
                int(w["exit_code"]),
                w["restarted"],
                problems,
                diagnosis,
                workload,
            )
        )
    return out


def merge(*, reports: Sequence[tuple[str, str | None, Any]]) -> Fleet:
    """`reports` as (source path, label or None, parsed JSON). ConfigError names the first file
    that is no rollout-verify report and the field that makes it none (exit 2: nothing is merged
    from a wrong file)."""
    members: list[Member] = []
    codes: list[int] = []
    for source, label, doc in reports:
        try:
            schema.check(doc)
        except schema.Invalid as e:
            raise refused(source=source, why=e) from None
        members += _members(cluster=label or doc.get("context") or source, doc=doc)
        codes.append(int(doc["exit_code"]))
    code = most_fundamental(codes)
    result: Outcome = "passed" if code is ExitCode.OK else "failed" if code is ExitCode.FAILED else "error"
    return Fleet(reports=len(reports), members=tuple(members), exit_code=int(code), result=result)


def refused(*, source: str, why: schema.Invalid) -> ConfigError:
    """The one line for a file that is no report: the file, then the field and what is wrong."""
    return ConfigError(
        f"report merge: {shown_path(source)} is not a rollout-verify report ({why}); "
        "pass the files --report-json wrote",
        field="report",
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def verdict_line(*, fleet: Fleet) -> str:
    clusters = len({m.cluster for m in fleet.members})
    workloads = [m for m in fleet.members if m.kind != "run"]
    bad = [m for m in fleet.members if m.result != "passed"]
    where = f"({_count(clusters, 'cluster')}, {_count(fleet.reports, 'report')})"
    if not bad:
        return f"rollout-verify: PASSED {_count(len(workloads), 'workload')} verified {where}"
    head = f"rollout-verify: {fleet.result.upper()} {len(bad)} of {len(fleet.members)}"
    return f"{head} not verified {where}, exit {fleet.exit_code}"


def markdown(*, fleet: Fleet) -> str:
    """One summary: the verdict, then a row per workload, failures first."""
    head = verdict_line(fleet=fleet).removeprefix("rollout-verify: ")
    head = _HEAD[fleet.result] + head[len(fleet.result) :]
    lines = ["### rollout-verify: fleet", "", cell(head), ""]
    lines += ["| cluster | namespace | workload | result | restarted | detail |", "|---|---|---|---|---|---|"]
    order = sorted(fleet.members, key=lambda m: (m.result == "passed", m.cluster, m.namespace, m.label))
    for m in order:
        detail = "; ".join(m.problems[:3]) + (
            f" (+{len(m.problems) - 3} more)" if len(m.problems) > 3 else ""
        )
        cells = (m.cluster, m.namespace, m.label, _RESULT[m.result], "yes" if m.restarted else "no", detail)
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    lines.append("")
    for m in order:
        # each failed workload as its own run's summary shows it: what failed, what to do, its pods
        if m.result != "passed" and m.workload is not None:
            heading = f"{cell(m.cluster)}: {cell(m.kind)} `{cell(m.namespace)}/{cell(m.name)}`"
            lines += workload_section(m.workload, heading=heading)
    return "\n".join(lines).rstrip("\n") + "\n"


def junit(*, fleet: Fleet) -> str:
    """One JUnit document: a suite per cluster and namespace, a testcase per workload."""
    root = ET.Element("testsuites", {"name": "rollout-verify fleet"})
    groups: dict[tuple[str, str], list[Member]] = {}
    for m in fleet.members:
        groups.setdefault((m.cluster, m.namespace), []).append(m)
    for (cluster, namespace), members in sorted(groups.items()):
        suite = Suite(f"{cluster} {namespace}" if namespace else cluster)
        for m in members:
            failure = None
            if m.result != "passed":
                text = "\n".join([*m.problems, *(f"diagnosis: {d}" for d in m.diagnosis)]) or m.result
                failure = (m.result, m.problems[0] if m.problems else m.result, text)
            classname = f"{cluster}.{namespace}" if namespace else cluster
            suite.case(classname=classname, name=m.label, failure=failure, error=m.result == "error")
        root.append(suite.close(seconds=0.0))
    for key in ("tests", "failures", "errors"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in root)))
    root.set("time", "0.000")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
