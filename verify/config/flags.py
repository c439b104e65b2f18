"""The command line: one flag per setting, each defaulting to 'unset' so env values show through
unless overridden, and usage errors as ConfigError instead of argparse's exit."""

from __future__ import annotations

import argparse
import functools
import re
from typing import NoReturn

from verify import __version__
from verify.config.naming import FLAG_CUTOFF, FLAGS, PROG, config_error, did_you_mean, env_var
from verify.config.settings import FIELDS
from verify.errors import ConfigError
from verify.exitcodes import help_text
from verify.redact import short


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors become ConfigError instead of exiting."""

    def error(self, message: str) -> NoReturn:
        head = "unrecognized arguments: "
        if message.startswith(head):
            raise _unknown(message[len(head) :].split(), known=sorted(self._option_string_actions))
        switch = re.match(r"argument (--[-\w]+)/(--[-\w]+): ignored explicit argument", message)
        if switch:  # --dry-run=yes
            flag, off = switch[1], switch[2]
            raise config_error("argv", f"{flag} takes no value; pass {flag} or {off}, see --help")
        # `ignored explicit argument 'VALUE'`, `expected one argument`: argparse repeats what was
        # typed, which may be a value; keep the options
        message = re.sub(r"explicit argument .*$", "explicit argument '…'", message, flags=re.S)
        message = re.sub(r"(--?[A-Za-z0-9][-\w]*)=\S*", r"\1=…", message)
        message = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)
        raise config_error("argv", f"{message}; see --help")


def _unknown(words: list[str], *, known: list[str]) -> ConfigError:
    """One line per unknown flag, with the flag it was most likely meant to be. Words after an
    unknown flag may be its values (a token after `--kubeconfig-data`): they are counted, never
    shown, and neither is anything after a flag's `=`."""
    flags = [w.partition("=")[0] for w in words if w.startswith("-")]
    hidden = len(words) - len(flags) + sum("=" in w for w in words if w.startswith("-"))
    lines: list[str] = []
    for flag in dict.fromkeys(flags):
        meant = did_you_mean(flag, known, cutoff=FLAG_CUTOFF, prefix=True)
        hint = f"did you mean {meant}?" if meant else "see --help"
        lines.append(f"{short(flag, limit=40)} is not a flag; {hint}")
    if hidden:
        what = f"{hidden} value{'s' if hidden != 1 else ''} after {'it' if len(lines) == 1 else 'them'}"
        if not lines:
            lines.append(f"unrecognized arguments: {what.split(' after')[0]} (not shown); see --help")
        else:
            lines[-1] += f" ({what} not shown)"
    return config_error("argv", *lines)


def shown_default(field: str) -> str:
    """A setting's default as --help and the docs' reference print it (`10m`, `30s`; "" for none)."""
    default = FIELDS[field].default
    if default is None or default is False or default == []:
        return ""
    if default is True:
        return "true"
    if field in _DURATIONS and isinstance(default, float):
        seconds = int(default)
        return f"{seconds // 60}m" if seconds >= 60 and seconds % 60 == 0 else f"{seconds}s"
    return str(default)


_DURATIONS = ("timeout", "exec_timeout", "volume_grace", "min_ready")


def _help(field: str) -> str:
    desc = FIELDS[field].description
    default = shown_default(field)
    shown = f"; default {default}" if default else ""
    return f"{desc} (env {env_var(field)}{shown})".replace("%", "%%")


@functools.cache
def build_parser() -> argparse.ArgumentParser:
    """The CLI; every flag defaults to 'unset' so env values show through unless overridden.
    Built once per process (--help and every parse share it)."""
    p = _Parser(
        prog=PROG,
        description="Wait for the rollout of Deployments, StatefulSets, DaemonSets and Argo Rollouts, then "
        "prove every pod of the new revision has the expected env keys, file contents and HTTP answers. "
        "Every flag can also be set via its VERIFY_* env var. `rollout-verify report merge --help`: "
        "a fleet's report.json files as one verdict.",
        epilog=f"Env only: {env_var('kubeconfig_data')}: "
        + FIELDS["kubeconfig_data"].description.replace("%", "%%")
        + " "
        + help_text(),
        argument_default=None,
        allow_abbrev=False,  # `--dep` is a typo to name, never silently `--deployment`
        add_help=False,  # --help and --version are answered by the cli, the one place that exits
    )
    p.add_argument(
        "targets_given",
        nargs="*",
        metavar="KIND/NAME|NAME",
        help="Workloads to verify, as `kubectl rollout status` takes them: deploy/web, "
        "statefulset/db, ds/agent, rollout/web, or a bare NAME for a Deployment (same as --target).",
    )
    p.add_argument("-h", "--help", action="store_true", help="Show this help and exit.")
    p.add_argument("--version", action="store_true", help="Show the version and exit.")
    p.add_argument("--namespace", "-n", metavar="NS", help=_help("namespace"))
    # appended only to tell a repeat (which would silently drop the first name) from one use
    p.add_argument("--deployment", action="append", metavar="NAME", help=_help("deployment"))
    p.add_argument("--rollout", action="append", metavar="NAME", help=_help("rollout"))
    p.add_argument("--revision", metavar="{latest,stable}", help=_help("revision"))
    p.add_argument("--target", dest="targets", action="append", metavar="KIND/NAME", help=_help("targets"))
    p.add_argument("--selector", "-l", metavar="LABELS", help=_help("selector"))
    p.add_argument("--config", metavar="FILE", help=_help("config"))
    p.add_argument(
        "--container", dest="containers", action="append", metavar="NAME", help=_help("containers")
    )
    p.add_argument("--expect-env", action="append", metavar="KEY", help=_help("expect_env"))
    p.add_argument("--expect-file", action="append", metavar="PATH=SPEC", help=_help("expect_file"))
    p.add_argument("--expect-http", action="append", metavar="PORT/PATH[=STATUS]", help=_help("expect_http"))
    p.add_argument("--restart", metavar="{once,never}", help=_help("restart"))
    p.add_argument("--timeout", metavar="DURATION", help=_help("timeout"))
    p.add_argument("--exec-timeout", metavar="DURATION", help=_help("exec_timeout"))
    p.add_argument("--concurrency", metavar="N", help=_help("concurrency"))
    p.add_argument("--kubeconfig", metavar="PATH", help=_help("kubeconfig"))
    p.add_argument("--context", metavar="NAME", help=_help("context"))
    p.add_argument("--report-json", metavar="PATH", help=_help("report_json"))
    p.add_argument("--junit", metavar="PATH", help=_help("junit"))
    p.add_argument("--summary", metavar="PATH", help=_help("summary"))
    p.add_argument("--output-dir", metavar="DIR", help=_help("output_dir"))
    p.add_argument("--from-spec", action=argparse.BooleanOptionalAction, help=_help("from_spec"))
    p.add_argument("--volume-grace", metavar="DURATION", help=_help("volume_grace"))
    p.add_argument("--min-ready", metavar="DURATION", help=_help("min_ready"))
    p.add_argument("--fail-fast", action=argparse.BooleanOptionalAction, help=_help("fail_fast"))
    p.add_argument("--dry-run", action=argparse.BooleanOptionalAction, help=_help("dry_run"))
    p.add_argument("--color", metavar="{auto,always,never}", help=_help("color"))
    p.add_argument("--debug-image", metavar="IMAGE", help=_help("debug_image"))
    return p


# flags that take a value: a value that starts with "-" and a digit (`--timeout -1m`) is joined to
# its flag, or argparse would take it for a flag and say only "expected one argument"
_SWITCHES = ("from_spec", "dry_run", "fail_fast")
_TAKES_VALUE = frozenset(flag for field, flag in FLAGS.items() if field not in _SWITCHES)
_NEGATIVE = re.compile(r"-[0-9.]")


def parse(argv: list[str]) -> argparse.Namespace:
    """The flags and positional targets, in any order (`web --timeout 5m db`)."""
    words: list[str] = []
    for word in argv:
        if words and words[-1] in _TAKES_VALUE and _NEGATIVE.match(word):
            words[-1] = f"{words[-1]}={word}"  # its own check then says what is wrong with it
        else:
            words.append(word)
    return build_parser().parse_intermixed_args(words)


def info_request(argv: list[str]) -> str | None:
    """The text --help or --version asks for (None when neither is given); bad flags raise first."""
    namespace = parse(argv)
    if namespace.help:
        return build_parser().format_help()
    if namespace.version:
        return f"{PROG} {__version__}"
    return None
