"""--output-dir: one file per output, so Argo output parameters read them with `valueFrom.path`.

Values are written without a trailing newline (a parameter is the file's exact content), and
each file is replaced atomically so a reader never sees half of one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from verify.redact import MAX_OUTPUT_VALUE, printable_line

OUTPUT_FILES = ("result", "restarted", "failed-pods", "exit-code")
REPORT_JSON, JUNIT_XML, SUMMARY_MD = "report.json", "junit.xml", "summary.md"


def _write(path: str, text: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def write_output_dir(*, directory: str, outputs: Mapping[str, str], documents: Mapping[str, str]) -> None:
    """`outputs` by name (see OUTPUT_FILES) and whole `documents` (report.json, junit.xml, ...)."""
    os.makedirs(directory, exist_ok=True)
    for name in OUTPUT_FILES:  # a value is one escaped line, as $GITHUB_OUTPUT's, and as whole
        _write(os.path.join(directory, name), printable_line(outputs[name], limit=MAX_OUTPUT_VALUE))
    for name, text in documents.items():
        _write(os.path.join(directory, name), text)
