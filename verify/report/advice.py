"""What failed and what to do, per workload: the one account that every page a CI user reads is
rendered from (the `::error` annotations, the step summary, JUnit, `report merge`'s summary and
JUnit, the verdict line), so the diagnosis and the remedy reach each of them, not only stderr.

A finding is one problem, said once for every pod it shows in (grouped by what failed and by the
judgment of why), with its remedy: the judgment's own words (diagnose.remedy), whatever kind of
failure it judged. The diagnosis lines (diagnose.checks, diagnose.secretsstore and any other
diagnosis an attempt carries) follow as advice, less those that only repeat a finding's remedy.
Pure; every string is plain text for the renderers to escape."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from verify.findings import AttemptVerdict, CheckResult, CheckStatus, Uninspectable
from verify.report.result import WorkloadResult

SHOWN_PODS = 3  # pod names named in one finding; the others are counted


@dataclass(frozen=True)
class Finding:
    """One problem of one workload, where it shows and what to do about it."""

    what: str  # "container app lacks env KEY", "cannot be inspected: …", a workload-level problem
    where: str = ""  # "pod web-1 (node-1)", "3 pods (…) on node-1 (2), node-2 (1)"; "" for the workload
    remedy: str = ""  # why, and what to do; "" when the problem's own words say it
    pods: tuple[str, ...] = ()

    @property
    def problem(self) -> str:
        return f"{self.where} {self.what}" if self.where else self.what

    @property
    def line(self) -> str:
        """The problem and its remedy on one line (an annotation's message, a JUnit failure's)."""
        return said(self.problem, self.remedy)


def said(problem: str, remedy: str) -> str:
    """A problem and its remedy as one line."""
    return f"{problem} — {remedy}" if remedy else problem


def check_phrase(check: CheckResult) -> str:
    """A failing check in the run's words: `lacks env KEY`, `file PATH differs …`, `http …`."""
    if check.type == "http":
        if check.status is CheckStatus.UNINSPECTABLE:
            return f"cannot be checked on http {check.subject}: {check.detail}"
        return f"http {check.subject} {check.detail}"
    if check.type == "env":
        if check.status is CheckStatus.MISMATCH:
            return f"env {check.subject} {check.detail or 'value differs'}"
        return f"lacks env {check.subject}"
    if check.status is CheckStatus.MISSING:
        detail = f" ({check.detail})" if check.detail else ""
        return f"lacks file {check.subject}{detail}"
    detail = check.detail.removeprefix("content ")
    return f"file {check.subject} {detail}" if detail else f"file {check.subject} differs"


def error_phrase(error: Uninspectable) -> str:
    """Why a container (or pod) has no verdict of its checks: `cannot be inspected: ...`, or for
    one that did not hold still, `is not stable: ...`."""
    if error.code == "unstable":
        return f"is {error.reason}"
    return f"cannot be inspected: {error.reason}"


def where(pods: list[tuple[str, str]]) -> str:
    """`pod web-1 (node-1)`, or `3 pods (web-1, web-2, web-3) on node-1 (2), node-2 (1)`."""
    if len(pods) == 1:
        name, node = pods[0]
        return f"pod {name} ({node})" if node else f"pod {name}"
    names = [name for name, _ in pods]
    shown = ", ".join(names[:SHOWN_PODS]) + (
        f" and {len(names) - SHOWN_PODS} more" if len(names) > SHOWN_PODS else ""
    )
    nodes = Counter(node for _, node in pods if node)
    on = ", ".join(f"{node} ({n})" for node, n in sorted(nodes.items()))
    return f"{len(pods)} pods ({shown})" + (f" on {on}" if on else "")


def remedy_of(check: CheckResult, what: str) -> str:
    """The judgment's why, unless not judged or already the problem's own words (an uninspectable
    check's why is its detail); a why that opens with them says only the rest."""
    why = check.why if check.restart_can_fix is not None else ""
    if not why or why in what:
        return ""
    head, colon, rest = why.partition(": ")
    return rest if colon and head in what else why  # a why opening with the problem's words


def findings(*, workload: WorkloadResult) -> list[Finding]:
    """The workload's problems, each once: its error, the verdict attempt's workload-level
    problems, then each pod-level problem with every pod it shows in and its remedy."""
    out: list[Finding] = []
    if workload.error:
        out.append(Finding(workload.error))
    last = workload.verdict_attempt
    if last is None:
        return out
    out += [Finding(p) for p in dict.fromkeys((*last.permanent_problems, *last.problems))]
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for pod in last.pods:
        seen: list[tuple[str, str]] = []
        if pod.error is not None:
            seen.append((error_phrase(pod.error), ""))
        else:
            for check in pod.checks:
                if check.status is not CheckStatus.OK:
                    what = check_phrase(check)
                    seen.append((what, remedy_of(check, what)))
            for container in pod.containers:
                head = f"container {container.name}"
                if container.error is not None:
                    seen.append((f"{head} {error_phrase(container.error)}", ""))
                    continue
                for check in container.checks:
                    if check.status is not CheckStatus.OK:
                        what = f"{head} {check_phrase(check)}"
                        seen.append((what, remedy_of(check, what)))
        for key in dict.fromkeys(seen):
            groups.setdefault(key, []).append((pod.name, pod.node))
    out += [
        Finding(what, where(pods), remedy, tuple(name for name, _ in pods))
        for (what, remedy), pods in groups.items()
    ]
    return out


def _label_prefixes(workload: WorkloadResult) -> tuple[str, ...]:
    """How a diagnosis line may name its workload (the run's label, with or without namespace)."""
    kind, ns, name = workload.kind, workload.namespace, workload.name
    return (f"{kind} {ns}/{name}: ", f"{kind} {name}: ")


def diagnosis_of(*, attempt: AttemptVerdict, workload: WorkloadResult) -> list[str]:
    """An attempt's diagnosis lines, each once, without the workload's name (the page names it)."""
    out: list[str] = []
    for line in dict.fromkeys(attempt.diagnosis):
        for prefix in _label_prefixes(workload):
            line = line.removeprefix(prefix)
        out.append(line)
    return out


def advice(*, workload: WorkloadResult, shown: list[Finding] | None = None) -> list[str]:
    """The verdict attempt's diagnosis lines, without the workload's name (the page names it), less
    those that only repeat a remedy `shown` (default: the workload's findings) already gives."""
    last = workload.verdict_attempt
    if last is None:
        return []
    remedies = [f.remedy for f in (findings(workload=workload) if shown is None else shown) if f.remedy]
    return [
        line
        for line in diagnosis_of(attempt=last, workload=workload)
        if not any(remedy in line for remedy in remedies)
    ]
