"""What errors may show of the user's input: names and short paths, never pasted content or
values, and always one line."""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.config.file import load_targets
from verify.config.job import load_job, load_settings
from verify.errors import ConfigError, ConfigFileError
from verify.redact import one_line, shown_path, without_userinfo

SECRET = "hunter2-never-shown"


def test_short_paths_are_quoted_and_pasted_content_is_only_measured() -> None:
    assert shown_path("/tmp/kc") == '"/tmp/kc"'
    pasted = "YXBpVmVyc2lvbjogdjEK" * 30
    assert SECRET not in shown_path(pasted + SECRET)
    assert (
        shown_path(pasted)
        == f"(a value of {len(pasted)} characters, not shown: file content rather than a path?)"
    )
    assert "token" not in shown_path("apiVersion: v1\nusers: [{user: {token: x}}]")


def test_a_bare_word_is_quoted_only_with_a_known_extension_and_otherwise_said_to_lack_one() -> None:
    # `report merge junit.xml` names the file it was given; a pasted token is only measured
    assert shown_path("junit.xml") == '"junit.xml"' and shown_path("summary.md") == '"summary.md"'
    token = "abcdef.0123456789abcdef"  # a kubeadm bootstrap token has a dot too
    said = shown_path(token)
    assert token not in said and said.startswith("(a value of 23 characters, not shown: it has no / and none")
    assert ".yaml" in said and ".xml" in said  # what it lacks, so a real path can be renamed


def test_a_long_real_path_is_accepted_and_only_its_length_is_quoted(tmp_path: Path) -> None:
    deep = tmp_path
    while len(str(deep)) < 300:
        deep = deep / ("d" * 40)
    deep.mkdir(parents=True)
    report = str(deep / "report.json")
    s = load_settings(argv=["--deployment", "web", "--report-json", report], environ={})
    assert s.report_json == report  # a CI workspace can be deep: only content is refused
    assert shown_path(report).startswith("(a value of")


def test_userinfo_is_dropped_from_server_urls() -> None:
    assert without_userinfo(f"https://admin:{SECRET}@10.0.0.1:6443/k8s") == "https://10.0.0.1:6443/k8s"
    assert without_userinfo("https://10.0.0.1:6443") == "https://10.0.0.1:6443"


def test_one_line_escapes_what_a_terminal_would_interpret() -> None:
    assert one_line("a\n  b\x1b[31m") == "a b\\x1b[31m"


@pytest.mark.parametrize(
    "entry",
    [
        f"[{{name: API_KEY, value: {SECRET}}}]",  # a pod spec's env entry pasted in
        f"[{{API_KEY: {SECRET}}}]",
    ],
)
def test_a_mapping_given_as_an_env_name_in_a_config_file_is_never_echoed(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "verify.yaml"
    path.write_text(f"targets:\n  - target: deployment/web\n    expect-env: {entry}\n")
    with pytest.raises(ConfigFileError) as info:
        load_targets(path=str(path))
    text = str(info.value)
    assert SECRET not in text and "\n" not in text
    assert "expect-env: a mapping (content not shown) is not an env var name; list names only" in text


def test_a_mapping_given_as_expect_file_is_never_echoed(tmp_path: Path) -> None:
    path = tmp_path / "verify.yaml"
    path.write_text(f"targets:\n  - target: deployment/web\n    expect-file: {{/etc/app.conf: {SECRET}}}\n")
    with pytest.raises(ConfigFileError) as info:
        load_targets(path=str(path))
    assert SECRET not in str(info.value) and "a mapping (content not shown)" in str(info.value)


@pytest.mark.parametrize(
    "argv",
    [
        ["--expect=API_KEY=" + SECRET],  # argparse: "ambiguous option: --expect=..."
        ["--expect=API_KEY=top " + SECRET],  # a space inside the value
        ["--from-spec=" + SECRET],  # argparse: "ignored explicit argument '...'"
        ["--from-spec=it's " + SECRET],  # repr() switches to double quotes
    ],
)
def test_argument_errors_never_repeat_what_was_typed_after_the_option(argv: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--deployment", "web", *argv], environ={})
    assert SECRET not in str(info.value)
    assert (
        "not a flag" in str(info.value) or "(not shown)" in str(info.value) or "see --help" in str(info.value)
    )


def test_kubeconfig_content_given_as_its_path_is_refused_without_echoing_it() -> None:
    content = f"apiVersion: v1\nusers: [{{name: u, user: {{token: {SECRET}}}}}]\n"
    with pytest.raises(ConfigError) as info:
        load_settings(argv=["--deployment", "web"], environ={"VERIFY_KUBECONFIG": content})
    text = str(info.value)
    assert SECRET not in text and "\n" not in text
    assert text.startswith("--kubeconfig: (a value of")
    assert "kubeconfig content goes in VERIFY_KUBECONFIG_DATA" in text


@pytest.mark.parametrize(
    ("env", "field"),
    [({"VERIFY_NAMESPACE": "default\n"}, "--namespace"), ({"VERIFY_DEPLOYMENT": "web\n"}, "--deployment")],
)
def test_a_trailing_newline_is_not_a_valid_name(env: dict[str, str], field: str) -> None:
    # `$` in a pattern also matches before a final newline: names are matched to their very end
    with pytest.raises(ConfigError) as info:
        load_job(
            argv=["--expect-env", "A", *([] if "VERIFY_DEPLOYMENT" in env else ["--deployment", "web"])],
            environ=env,
        )
    assert str(info.value).startswith(field) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("8080/healthz=200,", [(8080, "/healthz", 200)]),  # a trailing comma
        ("8080/a,,9090/b", [(8080, "/a", 200), (9090, "/b", 200)]),  # a doubled one
        ("8080/a?x=1,2,9090/b=204", [(8080, "/a?x=1,2", 200), (9090, "/b", 204)]),
    ],
)
def test_stray_commas_between_http_checks_are_separators(
    raw: str, expected: list[tuple[int, str, int]]
) -> None:
    s = load_settings(argv=["--deployment", "web"], environ={"VERIFY_EXPECT_HTTP": raw})
    assert [(c.port, c.path, c.status) for c in s.expect_http] == expected


def test_an_http_path_may_hold_commas_and_entries_still_split_before_each_port() -> None:
    s = load_settings(argv=["--deployment", "web", "--expect-http", "8080/items?ids=1,2"], environ={})
    assert [(c.port, c.path) for c in s.expect_http] == [(8080, "/items?ids=1,2")]
    s = load_settings(
        argv=["--deployment", "web"], environ={"VERIFY_EXPECT_HTTP": "8080/a?x=1,2, 9090/b\n8081/c"}
    )
    assert [(c.port, c.path) for c in s.expect_http] == [(8080, "/a?x=1,2"), (9090, "/b"), (8081, "/c")]


def test_the_same_workload_twice_in_a_config_file_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "verify.yaml"
    path.write_text("targets:\n  - target: deployment/web\n    expect-env: [A]\n  - target: deploy/web\n")
    with pytest.raises(ConfigFileError) as info:
        load_targets(path=str(path))
    assert str(info.value) == (
        f"{path}:4: targets[1] (deploy/web): names the same workload as targets[0] (line 2); name it once"
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\n::error title=X::y", "a ::error title=X::y"),  # a line break cannot start a command
        ("::add-mask::rollout-verify", "\\x3a:add-mask::rollout-verify"),
        ("  ::error::x", "\\x3a:error::x"),
        ("##[error]x", "\\x23#[error]x"),
        ("red \x1b[31m and \u202eRLO", "red \\x1b[31m and \\u202eRLO"),
        ("plain: text", "plain: text"),
        # the runner's legacy TryParse finds `##[` anywhere in a line (actions/runner,
        # src/Runner.Common/ActionCommand.cs): in a mountPath, an items path, an env key
        ("/etc/m##[stop-commands]tok", "/etc/m\\x23#[stop-commands]tok"),
        ("f ##[add-mask]rollout-verify ##[error]x", "f \\x23#[add-mask]rollout-verify \\x23#[error]x"),
        ("KEY###[error]", "KEY#\\x23#[error]"),
        ("#1 #[x] ## [y]", "#1 #[x] ## [y]"),  # no `##[`: left as written
        # a culture-sensitive IndexOf/StartsWith (ICU) skips ignorable code points such as a
        # variation selector or a combining grapheme joiner: any non-ASCII between counts as one
        ("a#\ufe0f#[error]x", "a\\x23\ufe0f#[error]x"),
        ("a#\u034f#\u034f[error]x", "a\\x23\u034f#\u034f[error]x"),
        ("\ufe0f::error::x", "\ufe0f\\x3a:error::x"),
        ("#\u200b#[error]x", "#\\u200b#[error]x"),  # unprintable: escaped already, which breaks it
    ],
)
def test_printable_line_is_one_line_that_cannot_open_a_ci_command(text: str, shown: str) -> None:
    from verify.redact import printable_line

    assert printable_line(text) == shown
    assert printable_line(shown) == shown  # escaping twice changes nothing


def test_the_writers_escape_every_str_and_print_only_built_markup_verbatim(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from verify.platforms import github, logs

    logs.stdout("::add-mask::x\n::error::y")
    logs.stderr("\x1b[2Jcleared")
    logs.stdout(github.command("error", "m\n::warning::w", title="t"))
    out, err = capsys.readouterr()
    assert out.splitlines() == ["\\x3a:add-mask::x ::error::y", "::error title=t::m ::warning::w"]
    assert err == "\\x1b[2Jcleared\n"


# what the runner could read as a command (see verify.redact._LEGACY_COMMAND): `##[` anywhere, with
# any non-ASCII character between its characters; `::` at the start, after any such characters
LEGACY = re.compile(r"#[^\x00-\x7f]*#[^\x00-\x7f]*\[")
LEADING = re.compile(r"\s*[^\x00-\x7f]*:[^\x00-\x7f]*:")
HOSTILE = st.text(
    st.sampled_from(["#", "[", ":", " ", "\n", "\r", "\x1b", "\ufe0f", "\u034f", "\u200b", "\u202e", "é", "a"])
    | st.characters()
)


@settings(max_examples=500, deadline=None)
@given(text=HOSTILE)
def test_no_text_escapes_into_an_unprintable_character_or_a_ci_command(text: str) -> None:
    from verify.redact import printable_line

    line = printable_line(text)
    assert line.isprintable() and not LEGACY.search(line) and not LEADING.match(line), (text, line)
    assert printable_line(line) == line


@settings(max_examples=100, deadline=None)
@given(
    doc=st.recursive(
        st.none() | st.booleans() | st.integers() | HOSTILE,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE, inner, max_size=3),
        max_leaves=8,
    )
)
def test_a_json_report_reads_back_as_written_and_holds_no_ci_command(doc: object) -> None:
    from verify.report.jsondoc import text as json_text

    text = json_text({"doc": doc})
    assert json.loads(text) == {"doc": doc}
    assert text.isascii() and "##[" not in text
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())


def _adversarial() -> Iterator[tuple[str, str]]:
    """20 MB strings built against each function, one at a time: control characters (each
    becomes 4), every unprintable code point (each escape computed once), whitespace runs,
    command characters, runs a regex could backtrack over, a URL of user-info."""
    size = 20 * 1024 * 1024
    unprintable = "".join(chr(c) for c in range(0x110000) if not chr(c).isprintable())
    yield "ESC", "\x1b" * size
    yield "a-ESC", "a\x1b" * (size // 2)
    yield "unprintable", unprintable * (size // len(unprintable) + 1)
    yield "whitespace", " \t" * (size // 2) + "x"
    yield "##[", "##[" * (size // 3)
    yield "#-variation", "#\ufe0f" * (size // 2) + "["
    yield "variation-::", "\ufe0f" * size + "::"
    yield "url", "https://" + "u:" * (size // 2) + "@host"


def test_every_function_of_redact_is_linear_20_mb_in_under_a_second_of_cpu() -> None:
    """Masking and escaping never outlive a deadline, whatever a cluster or a plugin wrote: CPU
    time of this process, not wall time (a loaded machine slows the clock, not the work)."""
    from verify import redact

    functions = [f for _, f in inspect.getmembers(redact, inspect.isfunction) if f.__module__ == redact.__name__]
    public = [f for f in functions if not f.__name__.startswith("_")]
    assert {"one_line", "printable_line", "short", "escaped", "shown_path"} <= {f.__name__ for f in public}
    slow = {}
    for name, text in _adversarial():
        for function in public:
            start = time.process_time()
            function(text)
            spent = time.process_time() - start
            if spent >= 1.0:
                slow[f"{function.__name__}({name})"] = round(spent, 2)
    assert not slow, slow


def test_a_text_longer_than_a_line_shows_is_cut_and_says_how_much() -> None:
    from verify.redact import MAX_LINE, one_line, printable_line

    assert one_line("a" * (MAX_LINE + 5)) == "a" * MAX_LINE + "… (5 more characters not shown)"
    assert printable_line("\x1b" * (MAX_LINE + 1)) == "\\x1b" * MAX_LINE + "… (1 more character not shown)"
