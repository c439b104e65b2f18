"""What an error may show of the user's own input: one printable line, and never content that was
given where a path or a URL belongs (a pasted kubeconfig, a token, a password in a URL)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# longer paths are not quoted in errors: a pasted single-line kubeconfig (base64) or token would
# be, and real paths this long are rare (a file name component is at most 255 bytes)
MAX_SHOWN_PATH = 255
PATH_MAX = 4096


def one_line(text: str) -> str:
    """One printable line: whitespace runs collapsed, anything unprintable (an ESC would start a
    terminal escape sequence in a CI log, U+202E would reverse the text) shown escaped."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode() for c in " ".join(text.split())
    )


def escaped(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii")


def looks_like_content(value: str) -> bool:
    """Multi-line or longer than any path can be: a file's content (YAML, base64) rather than
    its path."""
    return len(value) > PATH_MAX or bool(_CONTROL.search(value))


def shown_path(value: str) -> str:
    """A path as errors quote it; a long or multi-line one only by its length (it may be content
    pasted where the path belongs)."""
    if len(value) > MAX_SHOWN_PATH or _CONTROL.search(value):
        return f"(a value of {len(value)} characters, not shown: file content rather than a path?)"
    return f'"{escaped(value)}"'


def without_userinfo(url: str) -> str:
    """`https://user:password@host` as `https://host`: a URL in a message names the server only."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an unparsable URL, not shown)"
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
