"""GitHub workflow commands and files: escaping per the runner's rules, heredoc outputs."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_renderers import failed_run
from verify.platforms import github


def parse_github_output(text: str) -> dict[str, str]:
    """The runner's parser for `name<<DELIM` blocks in $GITHUB_OUTPUT."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue
        name, sep, delim = line.partition("<<")
        assert sep, f"not heredoc syntax: {line!r}"
        value: list[str] = []
        i += 1
        while lines[i] != delim:
            value.append(lines[i])
            i += 1
        out[name] = "\n".join(value)
        i += 1
    return out


def test_message_escaping_keeps_a_command_on_one_line() -> None:
    line = github.command("error", "50% done\r\nnext ::warning::x\x1b[2K", title="a: b, c\n::x")
    # line breaks folded and control characters shown escaped (redact.printable_line), then the
    # runner's own escaping
    assert line == "::error title=a%3A b%2C c %3A%3Ax::50%25 done next ::warning::x\\x1b[2K"
    assert "\n" not in line and "\r" not in line and "\x1b" not in line


def test_add_mask_covers_each_line_of_a_multiline_value() -> None:
    lines = github.mask_lines(values=["tok%en-123", "line-one\nline-two"])
    assert lines == [
        "::add-mask::tok%25en-123",
        "::add-mask::line-one%0Aline-two",
        "::add-mask::line-one",
        "::add-mask::line-two",
    ]


def test_outputs_use_heredocs_that_survive_newlines_and_equals(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("earlier=1\n")
    github.write_outputs(path=str(path), outputs={"result": "failed", "odd": "a=b\nc<<d", "cmd": "\n::x::y"})
    text = path.read_text().removeprefix("earlier=1\n")
    # a value is one printable line that cannot open a command: `\x3a` stands for its first colon
    assert parse_github_output(text) == {"result": "failed", "odd": "a=b c<<d", "cmd": "\\x3a:x::y"}


def test_error_lines_one_per_problem_titled_with_the_workload() -> None:
    lines = github.error_lines(run=failed_run())
    title = "title=rollout-verify%3A deployment prod/web"
    assert lines[0] == f"::error {title}::expected 5 pods of revision 2, found 4"
    pods = [line for line in lines[1:]]
    assert [line.split("::")[2].split(" ")[1] for line in pods] == ["web-c", "web-d", "web-e"]
    assert pods[0] == (
        f"::error {title}::pod web-c (node-2) container app file /cm/script.py differs from configmap testcm/script.py"
    )


def test_summary_is_appended_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("# earlier step\n")
    github.append_summary(path=str(path), markdown="### mine")
    assert path.read_text() == "# earlier step\n### mine\n"
