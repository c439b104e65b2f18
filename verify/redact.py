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
# characters of a text that one printed line shows: a longer text is cut first, so that escaping
# costs little whatever a cluster, a report or a plugin wrote (escaping is linear, but ~1 µs per
# distinct unprintable character: a 20 MB line of them would take seconds and print 200 MB)
MAX_LINE = 64 * 1024
# an output value ($GITHUB_OUTPUT's heredocs, Argo's output files, a GitLab dotenv made from them) is
# data a later step splits, not a line someone reads: `failed-pods` of 2,000 pods is ~130 KB, and a
# value cut at MAX_LINE would hand that step a wrong list. GitHub takes 1 MB of outputs (github/docs,
# data/reusables/actions/output-limitations.md: "Outputs can be a maximum of 1 MB per job ... Size
# is approximated based on UTF-16 encoding"); a value past that is cut here, saying how much
MAX_OUTPUT_VALUE = 1024 * 1024

# GitHub's runner reads a workflow command in two forms (actions/runner, src/Runner.Common/
# ActionCommand.cs, called from src/Runner.Worker/ActionCommandManager.cs TryProcessCommand):
# `TryParseV2` takes `::name ...::data` where the line, its leading whitespace trimmed, starts with
# `::`; the legacy `TryParse` takes `##[name ...]data` *anywhere* in the line (`IndexOf("##[")`).
# Both compare with the current culture: where ICU is present, a culture-sensitive IndexOf or
# StartsWith skips ignorable code points (a variation selector, a combining grapheme joiner), so
# any non-ASCII character between the command's characters is treated as one that may vanish.
# The first `#` of each such `##[` is written `\x23`; the first `:` of a leading `::`, `\x3a`.
_LEGACY_COMMAND = re.compile(r"#(?=[^\x00-\x7f]*#[^\x00-\x7f]*\[)")
_LEADING_COMMAND = re.compile(r"[^\x00-\x7f]*(:)[^\x00-\x7f]*:")


def _bounded(text: str, limit: int = MAX_LINE) -> tuple[str, str]:
    """`text` cut at `limit` characters, and the words that say how much was cut."""
    if len(text) <= limit:
        return text, ""
    more = len(text) - limit
    return text[:limit], f"… ({more} more character{'s' if more > 1 else ''} not shown)"


def _escapes(line: str) -> dict[int, str]:
    """`str.translate`'s table for `line`: each distinct character of it, an unprintable one as
    its escape. Every character is in the table: a lookup that misses costs an exception."""
    distinct = set(line)
    bad = [c for c in distinct if not c.isprintable()]
    # one encode for all of them: no escape holds a space, so the spaces between them survive
    shown = " ".join(bad).encode("unicode_escape").decode("ascii").split(" ")
    table = {ord(c): c for c in distinct}
    table.update(zip(map(ord, bad), shown, strict=True))
    return table


def one_line(text: str, *, limit: int = MAX_LINE) -> str:
    """One printable line: whitespace runs collapsed, anything unprintable (an ESC would start a
    terminal escape sequence in a CI log, U+202E would reverse the text) shown escaped; at most
    `limit` characters of `text`. Linear in `text`, with only C loops over its characters."""
    text, cut = _bounded(text, limit)
    line = " ".join(text.split())
    if not line.isprintable():
        line = line.translate(_escapes(line))
    return line + cut


def printable_line(text: str, *, limit: int = MAX_LINE) -> str:
    """The one escaping of every printed string that a cluster or a user wrote (names, paths,
    messages, keys, label values): `one_line`, and no CI command in it. A Deployment whose
    mountPath held `::add-mask::...` at a line's start, or `##[stop-commands]...` anywhere in it,
    could otherwise mask the log, forge an annotation or switch off the run's own commands on
    GitHub; such a `#` or `:` is shown escaped instead (see _LEGACY_COMMAND). An output value
    passes `limit=MAX_OUTPUT_VALUE`: the same escape, a larger bound."""
    line = _LEGACY_COMMAND.sub(r"\\x23", one_line(text, limit=limit))
    leading = _LEADING_COMMAND.match(line)
    if leading:
        line = line[: leading.start(1)] + "\\x3a" + line[leading.end(1) :]
    return line


def short(text: str, *, limit: int = 60) -> str:
    """A user's text quoted in an error: one printable line, cut at `limit` characters."""
    line = one_line(text)
    return line if len(line) <= limit else line[:limit] + "…"


def escaped(text: str) -> str:
    """Every character that is not printable ASCII as its Python escape (a path shown exactly)."""
    text, cut = _bounded(text)
    return text.encode("unicode_escape").decode("ascii") + cut


def looks_like_content(value: str) -> bool:
    """Multi-line or longer than any path can be: a file's content (YAML, base64) rather than
    its path."""
    return len(value) > PATH_MAX or bool(_CONTROL.search(value))


# a bare word is shown as a path only with one of these suffixes or names: anything else may be
# a token pasted where the path belongs (`--kubeconfig abcdef.0123456789abcdef`)
_PATH_SUFFIXES = (
    ".yaml",
    ".yml",
    ".json",
    ".conf",
    ".config",
    ".kubeconfig",
    ".kube",
    ".cfg",
    ".txt",
    ".xml",
    ".md",  # the other reports a run writes, passed where its JSON report belongs
)
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
        return (
            f"(a value of {len(value)} characters, not shown: it has no / and none of the file extensions "
            f"{', '.join(_PATH_SUFFIXES)}; a token?)"
        )
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
