"""Colour on a terminal only: `--color auto` (the default) paints when the stream is a TTY and
`NO_COLOR` is unset or empty (no-color.org); `always` and `never` are the user's explicit word and
beat `NO_COLOR`, as that convention asks. Pipes, files and CI logs get plain text by default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Protocol

Mode = Literal["auto", "always", "never"]

# SGR sequences per style; a result word is its own style
_STYLES = {
    "passed": "\x1b[1;32m",
    "failed": "\x1b[1;31m",
    "error": "\x1b[1;31m",
    "bold": "\x1b[1m",
}
_RESET = "\x1b[0m"


class _Stream(Protocol):
    def isatty(self) -> bool: ...


def wanted(*, mode: Mode, environ: Mapping[str, str], stream: _Stream) -> bool:
    """Whether to paint what goes to `stream`."""
    if mode != "auto":
        return mode == "always"
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


class Painter:
    """`paint(text, style)` for the writers: `text` already escaped, returned wrapped in the
    style's SGR sequence when colour is on, else unchanged (an unknown style is plain)."""

    def __init__(self, *, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, style: str) -> str:
        start = _STYLES.get(style)
        return f"{start}{text}{_RESET}" if self.on and start and text else text
