"""What an error may show of the user's own input: one printable line, and never content that was
given where a path or a URL belongs (a pasted kubeconfig, a token, a password in a URL)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# no file name component is longer (NAME_MAX); a longer "path" is content pasted in its place
MAX_SHOWN_PATH = 255


def one_line(text: str) -> str:
    """One printable line: whitespace runs collapsed, anything unprintable (an ESC would start a
    terminal escape sequence in a CI log, U+202E would reverse the text) shown escaped."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode() for c in " ".join(text.split())
    )


def escaped(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii")


def looks_like_content(value: str) -> bool:
    """Multi-line or longer than any path component: a file's content (base64 or YAML) rather
    than its path."""
    return len(value) > MAX_SHOWN_PATH or bool(_CONTROL.search(value))


def shown_path(value: str) -> str:
    """A path as errors quote it, or a note of its length when it is content, not a path."""
    if looks_like_content(value):
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
