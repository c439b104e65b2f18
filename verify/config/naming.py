"""Every setting's names: its field, its `VERIFY_*` env var, its flag and its pipeline input.

One name per knob, so pipelines can configure the step either way and every error can say
which knob to turn."""

from __future__ import annotations

from collections.abc import Sequence

from verify.errors import ConfigError
from verify.redact import one_line

ENV_PREFIX = "VERIFY_"
PROG = "rollout-verify"

# field name -> CLI flag; the env var is always VERIFY_<FIELD NAME UPPER>
FLAGS: dict[str, str] = {
    "namespace": "--namespace",
    "deployment": "--deployment",
    "rollout": "--rollout",
    "revision": "--revision",
    "targets": "--target",
    "selector": "--selector",
    "config": "--config",
    "containers": "--container",
    "expect_env": "--expect-env",
    "expect_file": "--expect-file",
    "expect_http": "--expect-http",
    "restart": "--restart",
    "timeout": "--timeout",
    "exec_timeout": "--exec-timeout",
    "concurrency": "--concurrency",
    "kubeconfig": "--kubeconfig",
    "context": "--context",
    "report_json": "--report-json",
    "junit": "--junit",
    "summary": "--summary",
    "output_dir": "--output-dir",
    "from_spec": "--from-spec",
    "volume_grace": "--volume-grace",
    "min_ready": "--min-ready",
    "fail_fast": "--fail-fast",
    "dry_run": "--dry-run",
    "color": "--color",
    "debug_image": "--debug-image",
}
# settings with no flag: content that must not appear in a process list or shell history
ENV_ONLY: tuple[str, ...] = ("kubeconfig_data",)

# field name -> pipeline input (GitHub Action input, Argo parameter, GitLab component input)
# where it is not the field name in kebab-case.
_INPUTS: dict[str, str] = {
    "kubeconfig": "kubeconfig-path",
    "kubeconfig_data": "kubeconfig",
}


def env_var(field: str) -> str:
    """The environment variable that configures `field`."""
    return ENV_PREFIX + field.upper()


def cli_flag(field: str) -> str | None:
    """The flag that configures `field`, or None for env-only settings."""
    return FLAGS.get(field)


def pipeline_input(field: str) -> str:
    """The input name pipelines use for `field`: one name for the Action, Argo and GitLab."""
    return _INPUTS.get(field, field.replace("_", "-"))


def _named(field: str, message: str) -> str:
    flag = FLAGS.get(field)
    if flag is not None:
        return f"{flag}: {one_line(message)} ({env_var(field)})"
    if field in ENV_ONLY:
        return f"{env_var(field)}: {one_line(message)}"
    return one_line(message)


def config_error(field: str, message: str, *more: str) -> ConfigError:
    """A ConfigError as ONE line per problem, each naming the flag and the env var of `field`:
    `--namespace: "Prod" is not a valid namespace name ... (VERIFY_NAMESPACE)`."""
    lines = tuple(_named(field, m) for m in (message, *more))
    return ConfigError(lines[0], field=field, lines=lines if more else ())


def config_errors(problems: Sequence[tuple[str, str]]) -> ConfigError:
    """Several settings wrong at once: one line each, each naming its own flag and env var."""
    lines = tuple(_named(field, message) for field, message in problems)
    return ConfigError(lines[0], field=problems[0][0], lines=lines if len(lines) > 1 else ())


# how close a typo must be: VERIFY_* names share their prefix, and one far from every setting may
# belong to another tool (VERIFY_SSL); a flag typo is said however it is spelled
ENV_CUTOFF = 0.85
FLAG_CUTOFF = 0.7
# an application's env keys are short and share no prefix: one swapped pair in a six-letter key
# (DB_ULR for DB_URL) is 0.83, where two different keys of one family (DB_USER, DB_URL) are 0.77
KEY_CUTOFF = 0.8


def did_you_mean(word: str, known: Sequence[str], *, cutoff: float, prefix: bool = False) -> str | None:
    """The known name `word` was most likely meant to be (a typo, or with `prefix` a cut-short
    flag such as --dep), or None when it is far from all of them: the one rule for mistyped flags,
    VERIFY_* variables and expected env keys."""
    starting = [k for k in known if k.startswith(word)] if prefix and len(word) > 3 else []
    if starting:
        # `--expect` could be any of three: name them all
        return starting[0] if len(starting) == 1 else ", ".join(starting[:-1]) + " or " + starting[-1]
    import difflib  # a typo's path only

    same_letters = [k for k in known if k.lower() == word.lower()]
    if same_letters:  # db_url for DB_URL: env names, like flags, are case-sensitive
        return same_letters[0]

    close = difflib.get_close_matches(word, known, n=1, cutoff=cutoff)
    return close[0] if close else None
