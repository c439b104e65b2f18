"""GitLab CI: collapsible log sections (the runner's `section_start`/`section_end` markers)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping

from verify.platforms.markup import Markup
from verify.redact import printable_line

_ESC = "\x1b[0K"


def active(*, environ: Mapping[str, str]) -> bool:
    """True inside a GitLab CI job (the runner sets GITLAB_CI=true)."""
    return environ.get("GITLAB_CI") == "true"


def _name(title: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "_", title.lower()).strip("_") or "section"


def section_start(*, title: str, now: float | None = None) -> Markup:
    stamp = int(time.time() if now is None else now)
    header = printable_line(title)
    return Markup(f"{_ESC}section_start:{stamp}:{_name(title)}[collapsed=false]\r{_ESC}{header}")


def section_end(*, title: str, now: float | None = None) -> Markup:
    stamp = int(time.time() if now is None else now)
    return Markup(f"{_ESC}section_end:{stamp}:{_name(title)}\r{_ESC}")
