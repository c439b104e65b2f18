"""Lines a platform's own syntax built (a workflow command, a log section marker), whose parts
were escaped where they were put in. The writers in `logs` print these as they are and pass every
other string through `redact.printable_line`: a bare str can never reach a log unescaped."""

from __future__ import annotations


class Markup(str):
    """A line to print verbatim; only the builders in verify/platforms make one."""

    __slots__ = ()
