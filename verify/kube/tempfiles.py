"""Private files holding decoded credential content (a kubeconfig's `*-data` fields, a plugin's
client certificate), removed when the process exits, as the official loader's are."""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile

_written: list[str] = []


def write(content: bytes) -> str:
    """A new private (0600) file holding `content`; its path."""
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    if not _written:
        atexit.register(_remove)
    _written.append(path)
    return path


def _remove() -> None:
    for path in _written:
        with contextlib.suppress(OSError):
            os.remove(path)
    _written.clear()
