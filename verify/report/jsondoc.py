"""The --report-json document. Pure: `reason` is null unless the pod/container is uninspectable."""

from __future__ import annotations

import json
from typing import Any

from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    Uninspectable,
    restart_fixes,
)
from verify.report.result import RunInfo, RunResult


def _reason(error: Uninspectable | None) -> str | None:
    return None if error is None else error.reason


def _checks_json(checks: tuple[CheckResult, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in checks:
        # "target" is the report's name for a check's subject (kept: pipelines read it)
        doc: dict[str, Any] = {
            "type": c.type,
            "target": c.subject,
            "status": c.status.value,
            "detail": c.detail,
        }
        if c.status is not CheckStatus.OK:
            # the rule the decision read (findings.restart_fixes): may one restart be sent for this
            # check, and the judgment's why
            doc["restart_can_fix"] = restart_fixes(c)
            doc["why"] = c.why
        out.append(doc)
    return out


def _container_json(container: ContainerVerdict) -> dict[str, Any]:
    return {
        "name": container.name,
        "status": container.status.value,
        "reason": _reason(container.error),
        "checks": _checks_json(container.checks),
    }


def _attempt_json(attempt: AttemptVerdict) -> dict[str, Any]:
    return {
        "revision": attempt.revision,
        "problems": [*attempt.permanent_problems, *attempt.problems],
        "diagnosis": list(attempt.diagnosis),
        "pods": [
            {
                "name": p.name,
                "node": p.node,
                "status": p.status.value,
                "reason": _reason(p.error),
                "checks": _checks_json(p.checks),
                "containers": [_container_json(c) for c in p.containers],
            }
            for p in attempt.pods
        ],
    }


def to_json(*, run: RunResult, info: RunInfo | None = None) -> dict[str, Any]:
    """The --report-json document; `reason` is null unless the pod/container is uninspectable."""
    about: dict[str, Any] = {}
    if info is not None:
        about = {
            "version": info.version,
            "started_at": info.started,
            "ended_at": info.ended,
            "duration_seconds": round(info.duration, 3),
            "context": info.context,
            "server_version": info.server_version,
        }
    return {
        **about,
        "result": run.result,
        "exit_code": run.exit_code,
        "restarted": run.restarted,
        "message": run.message,
        "debug_containers": [
            {
                "namespace": d.namespace,
                "pod": d.pod,
                "container": d.container,
                "name": d.name,
                "added": d.added,
            }
            for d in run.debug_containers
        ],
        "workloads": [
            {
                "kind": w.kind,
                "namespace": w.namespace,
                "name": w.name,
                "result": w.result,
                "exit_code": w.exit_code,
                "restarted": w.restarted,
                "restarted_by_earlier_run": w.prior_restart or None,
                "would_restart": w.would_restart,
                "error": w.error,
                "attempts": [_attempt_json(a) for a in w.attempts],
            }
            for w in run.workloads
        ],
    }


def text(doc: dict[str, Any]) -> str:
    """The document as the file holds it, safe for a CI log to show (`cat report.json` in a
    step): `json.dumps` writes ASCII, escapes every control character and indents every line, so
    no line can open with `::`; a `##[` in a string, which GitHub's runner reads as a command
    anywhere in a line (see verify.redact), is written `#\\u0023[`: the same string to any reader."""
    return json.dumps(doc, indent=2).replace("##[", "#\\u0023[") + "\n"
