"""Text whoever can edit a Deployment (or write a report) may put in any name, and the check that
an output holds none of it raw: no unprintable character, no `##[` anywhere in a line and no `::`
opening one (GitHub's runner reads both as workflow commands: actions/runner
src/Runner.Common/ActionCommand.cs, TryParse and TryParseV2), except the product's own commands."""

from __future__ import annotations

import re

# line breaks, both command forms (`##[stop-commands]` would switch off the run's own annotations),
# an ESC, a bidi override, and `##[` with a variation selector between (an ICU culture-sensitive
# IndexOf skips it)
FORGED = (
    "\n::error title=INJECTED::forged\n::add-mask::rollout-verify\r##[error]old\x1b[31m\u202edesrever"
    " ##[stop-commands]tok ##[add-mask]rollout-verify #\ufe0f#[error]vs"
)
# an env name is printable ASCII without `=` on any apiserver (RelaxedEnvironmentVariableValidation)
FORGED_ENV = "::add-mask::rollout-verify ::error::INJECTED ##[error]old ##[stop-commands]tok ##[add-mask]x"

LEGACY = re.compile(r"#[^\x00-\x7f]*#[^\x00-\x7f]*\[")
LEADING = re.compile(r"[^\x00-\x7f]*:[^\x00-\x7f]*:")
# what rollout-verify itself may start a line of stdout with on GitHub
OWN_COMMANDS = re.compile(r"^::(error title=rollout-verify|group::|endgroup::$|add-mask::)")
# GitLab's collapsible section markers, the one ESC and CR the product writes (a CR read back as
# text with universal newlines is an LF)
GITLAB_MARKER = re.compile(r"\x1b\[0Ksection_(?:start|end):\d+:[a-z0-9_.-]+(?:\[collapsed=false\])?[\r\n]\x1b\[0K")


def assert_clean(name: str, text: str, *, own_commands: bool = False) -> None:
    """`text` (one output, any number of lines) holds no forged command and no raw control."""
    text = GITLAB_MARKER.sub("", text)
    raw = {c for c in text if not c.isprintable() and c != "\n"}
    assert not raw, f"{name} holds raw {sorted(raw)!r}"
    for line in text.split("\n"):
        assert not LEGACY.search(line), f"{name}: a forged legacy command: {line[:120]!r}"
        start = line.lstrip()
        if LEADING.match(start):
            assert own_commands and OWN_COMMANDS.match(start), f"{name}: a forged command line: {line[:120]!r}"
            assert start != "::add-mask::rollout-verify", name
