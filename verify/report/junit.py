"""The run as JUnit XML (the Jenkins/GitLab dialect): one testcase per pod x container.

CI systems already know how to show failed tests; a failed pod becomes a failed test whose
message is the reason, so GitLab's MR widget and Jenkins show it without reading logs.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from verify.findings import CheckStatus, ContainerVerdict
from verify.redact import printable_line
from verify.report.advice import advice, check_phrase, error_phrase, remedy_of, said
from verify.report.result import RunResult, WorkloadResult


def _clean(text: str) -> str:
    """An attribute through the one escaping function: a CI page showing the report must not get
    an ESC or U+202E either (and so no character XML 1.0 cannot carry: every one is unprintable)."""
    return printable_line(text)


def _lines(text: str) -> str:
    """A failure's text: each of its lines (one per problem) escaped as `_clean` escapes."""
    return "\n".join(printable_line(line) for line in text.split("\n"))


class _Suite:
    def __init__(self, name: str) -> None:
        self.element = ET.Element("testsuite", {"name": _clean(name)})
        self.tests = self.failures = self.errors = 0

    def case(
        self, *, classname: str, name: str, failure: tuple[str, str, str] | None = None, error: bool = False
    ) -> None:
        """`failure` is (type, message, text); `error` marks it as an error, not a failure."""
        case = ET.SubElement(self.element, "testcase", {"classname": _clean(classname), "name": _clean(name)})
        self.tests += 1
        if failure is not None:
            kind, message, text = failure
            tag = "error" if error else "failure"
            node = ET.SubElement(case, tag, {"type": _clean(kind), "message": _clean(message)})
            node.text = _lines(text)
            if error:
                self.errors += 1
            else:
                self.failures += 1

    def close(self, *, seconds: float) -> ET.Element:
        self.element.set("tests", str(self.tests))
        self.element.set("failures", str(self.failures))
        self.element.set("errors", str(self.errors))
        self.element.set("skipped", "0")
        self.element.set("time", f"{seconds:.3f}")
        return self.element


def _container_lines(container: ContainerVerdict) -> list[str]:
    """Each problem of one container, with its remedy."""
    if container.error is not None:
        return [error_phrase(container.error)]
    return [
        said(phrase, remedy_of(check, phrase))
        for check in container.checks
        if check.status is not CheckStatus.OK and (phrase := check_phrase(check))
    ]


def _workload_suite(workload: WorkloadResult, seconds: float) -> ET.Element:
    label = f"{workload.kind} {workload.namespace}/{workload.name}"
    classname = f"{workload.kind}.{workload.namespace}.{workload.name}"
    suite = _Suite(label)
    props = ET.SubElement(suite.element, "properties")
    ET.SubElement(props, "property", {"name": "restarted", "value": str(workload.restarted).lower()})
    ET.SubElement(props, "property", {"name": "attempts", "value": str(len(workload.attempts))})
    if workload.attempts:
        revision = _clean(workload.attempts[-1].revision)
        ET.SubElement(props, "property", {"name": "revision", "value": revision})
    if workload.error:
        suite.case(
            classname=classname,
            name="workload",
            failure=("error", workload.error, workload.error),
            error=True,
        )
    last = workload.verdict_attempt
    if last is not None:
        # the diagnosis goes with every failure: GitLab's merge request widget shows a failed
        # test's text alone
        notes = [f"diagnosis: {note}" for note in advice(workload=workload)]
        problems = [*last.permanent_problems, *last.problems]

        def case(name: str, *, failed: str = "", message: str = "", lines: list[str] | None = None) -> None:
            failure = (failed, message, "\n".join([*(lines or [message]), *notes])) if failed else None
            suite.case(classname=classname, name=name, failure=failure)

        if problems:
            case("pods of the revision", failed="workload", message=problems[0], lines=problems)
        for pod in last.pods:
            where = f"pod {pod.name} ({pod.node})" if pod.node else f"pod {pod.name}"
            if pod.error is not None:
                reason = error_phrase(pod.error)
                failed = CheckStatus.UNINSPECTABLE.value
                case(pod.name, failed=failed, message=reason, lines=[f"{where} {reason}"])
                continue
            for check in pod.checks:
                name = f"{pod.name}/http {check.subject}"
                if check.status is CheckStatus.OK:
                    case(name)
                    continue
                phrase = check_phrase(check)
                line = said(phrase, remedy_of(check, phrase))
                case(name, failed=check.status.value, message=line, lines=[f"{where} {line}"])
            for container in pod.containers:
                name = f"{pod.name}/{container.name}"
                if container.status is CheckStatus.OK:
                    case(name)
                    continue
                found = _container_lines(container)
                lines = [f"{where} container {container.name} {line}" for line in found]
                case(name, failed=container.status.value, message="; ".join(found), lines=lines)
    elif not workload.error:
        suite.case(
            classname=classname,
            name="workload",
            failure=("error", "not verified", "not verified"),
            error=True,
        )
    return suite.close(seconds=seconds)


def render(*, run: RunResult, seconds: float = 0.0) -> str:
    """The JUnit XML document for `run`; `seconds` is the run's wall time."""
    root = ET.Element("testsuites", {"name": "rollout-verify"})
    for wl in run.workloads:
        root.append(_workload_suite(wl, seconds))
    if not run.workloads:
        suite = _Suite("rollout-verify")
        failure = None if run.result == "passed" else ("error", run.message, run.message)
        suite.case(classname="rollout-verify", name="run", failure=failure, error=True)
        root.append(suite.close(seconds=seconds))
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite_el in root:
        for key in totals:
            totals[key] += int(suite_el.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


Suite = _Suite  # `report merge` builds a fleet's suites the same way (verify/report/merge.py)
