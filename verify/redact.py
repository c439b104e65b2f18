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


def printable_line(text: str) -> str:
    """The one escaping of every printed string that a cluster or a user wrote (names, paths,
    messages, keys, label values): `one_line`, and a line cannot open as a CI command. GitHub's
    runner reads `::cmd::` (and the older `##[cmd]`) at the start of any line of stdout or stderr,
    so a Deployment whose mountPath held `::add-mask::...` could otherwise mask the log or forge an
    annotation. Its first character is shown escaped instead."""
    line = one_line(text)
    if line.startswith("::"):
        return "\\x3a" + line[1:]
    if line.startswith("##["):
        return "\\x23" + line[1:]
    return line


def short(text: str, *, limit: int = 60) -> str:
    """A user's text quoted in an error: one printable line, cut at `limit` characters."""
    line = one_line(text)
    return line if len(line) <= limit else line[:limit] + "…"


def escaped(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii")


def looks_like_content(value: str) -> bool:
    """Multi-line or longer than any path can be: a file's content (YAML, base64) rather than
    its path."""
    return len(value) > PATH_MAX or bool(_CONTROL.search(value))


# a bare word is shown as a path only with one of these suffixes or names: anything else may be
# a token pasted where the path belongs (`--kubeconfig abcdef.0123456789abcdef`)
_PATH_SUFFIXES = (".yaml", ".yml", ".json", ".conf", ".config", ".kubeconfig", ".kube", ".cfg", ".txt")
_PATH_NAMES = ("config", "kubeconfig", "token", "credentials")


def looks_like_path(value: str) -> bool:
    """Has a directory part, or a file name no token has."""
    if "/" in value or "\\" in value or value.startswith("~"):
        return True
    name = value.lower()
    return name in _PATH_NAMES or name.endswith(_PATH_SUFFIXES)


def shown_path(value: str) -> str:
    """A path as errors quote it; a long, multi-line or bare-word one only by its length (it may
    be content or a token pasted where the path belongs)."""
    if len(value) > MAX_SHOWN_PATH or _CONTROL.search(value):
        return f"(a value of {len(value)} characters, not shown: file content rather than a path?)"
    if not looks_like_path(value):
        return f"(a value of {len(value)} characters, not shown: it has no / and no file extension; a token?)"
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
