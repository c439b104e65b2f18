"""The command line: one flag per setting, each defaulting to 'unset' so env values show through
unless overridden, and usage errors as ConfigError instead of argparse's exit."""

from __future__ import annotations

import argparse
import re
from typing import NoReturn

from verify.config.naming import PROG, config_error, env_var
from verify.config.settings import Settings
from verify.exitcodes import help_text


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors become ConfigError instead of exiting."""

    def error(self, message: str) -> NoReturn:
        head = "unrecognized arguments: "
        if message.startswith(head):
            # stray arguments may be values (a token, `--kubeconfig-data <base64>`): name only
            # the options, never what follows them
            words = message[len(head) :].split()
            flags = [w.partition("=")[0] for w in words if w.startswith("-")]
            hidden = len(words) - len(flags) + sum("=" in w for w in words if w.startswith("-"))
            message = head + (" ".join(flags) or "values")
            if hidden:
                message += f" ({hidden} value{'s' if hidden != 1 else ''} not shown)"
        else:
            # `ambiguous option: --expect=KEY=VALUE could match ...`, `ignored explicit argument
            # 'VALUE'`: argparse repeats what was typed, which may be a value; keep the options
            ambiguous = re.match(r"ambiguous option: (.*) could match (.*)$", message, re.S)
            if ambiguous:
                typed, eq, _ = ambiguous.group(1).partition("=")
                message = f"ambiguous option: {typed}{'=…' if eq else ''} could match {ambiguous.group(2)}"
            message = re.sub(r"explicit argument .*$", "explicit argument '…'", message, flags=re.S)
            message = re.sub(r"(--?[A-Za-z0-9][-\w]*)=\S*", r"\1=…", message)
            message = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)
        raise config_error("argv", f"{self.prog}: {message}; see --help")


def _help(field: str) -> str:
    desc = Settings.model_fields[field].description or ""
    return f"{desc} (env {env_var(field)})".replace("%", "%%")


def build_parser() -> argparse.ArgumentParser:
    """The CLI; every flag defaults to 'unset' so env values show through unless overridden."""
    p = _Parser(
        prog=PROG,
        description="Wait for the rollout of Deployments, StatefulSets and DaemonSets, then prove "
        "every pod of the new revision has the expected env keys, file contents and HTTP answers. "
        "Every flag can also be set via its VERIFY_* env var.",
        epilog=f"Env only: {env_var('kubeconfig_data')}: "
        + (Settings.model_fields["kubeconfig_data"].description or "").replace("%", "%%")
        + " "
        + help_text(),
        argument_default=None,
    )
    p.add_argument("--namespace", "-n", metavar="NS", help=_help("namespace"))
    # appended only to tell a repeat (which would silently drop the first name) from one use
    p.add_argument("--deployment", action="append", metavar="NAME", help=_help("deployment"))
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
    p.add_argument("--dry-run", action=argparse.BooleanOptionalAction, help=_help("dry_run"))
    return p
