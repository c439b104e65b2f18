"""Command line entry point: the only place that prints verdicts and exits."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence

from verify.config import ConfigError, load_settings

EXIT_CONFIG = 2


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(*, argv: Sequence[str], environ: Mapping[str, str]) -> int:
    try:
        settings = load_settings(argv=argv, environ=environ)
    except ConfigError as e:
        _stderr(f"rollout-verify: error: {e}")
        return EXIT_CONFIG
    # Heavy imports only once the arguments are known to be good (keeps --help and errors fast).
    from verify import kube, report, runner

    try:
        connection = kube.connect(
            kubeconfig=settings.kubeconfig,
            context=settings.context,
            concurrency=settings.concurrency,
        )
    except kube.KubeConfigError as e:
        _stderr(f"rollout-verify: error: {e}")
        return EXIT_CONFIG
    try:
        result = runner.execute(
            settings=settings, connection=connection, log=lambda m: _stderr(f"rollout-verify: {m}")
        )
    finally:
        connection.close()
    for wl in result.workloads:
        for line in report.problem_lines(workload=wl):
            print(line, flush=True)
    print(report.verdict_line(run=result), flush=True)
    if settings.report_json:
        with open(settings.report_json, "w") as fh:
            json.dump(report.to_json(run=result), fh, indent=2)
            fh.write("\n")
    return result.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    code = run(argv=list(sys.argv[1:] if argv is None else argv), environ=os.environ)
    sys.exit(code)
