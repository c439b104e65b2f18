"""Every setting's names: its field, its `VERIFY_*` env var, its flag and its pipeline input.

One name per knob, so pipelines can configure the step either way and every error can say
which knob to turn."""

from __future__ import annotations

from verify.errors import ConfigError
from verify.redact import one_line

ENV_PREFIX = "VERIFY_"
PROG = "rollout-verify"

# field name -> CLI flag; the env var is always VERIFY_<FIELD NAME UPPER>
FLAGS: dict[str, str] = {
    "namespace": "--namespace",
    "deployment": "--deployment",
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
    "dry_run": "--dry-run",
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


def config_error(field: str, message: str) -> ConfigError:
    """A ConfigError as ONE line naming the flag and the env var of `field`:
    `--namespace: "Prod" is not a valid namespace name ... (VERIFY_NAMESPACE)`."""
    flag = FLAGS.get(field)
    if flag is not None:
        text = f"{flag}: {one_line(message)} ({env_var(field)})"
    elif field in ENV_ONLY:
        text = f"{env_var(field)}: {one_line(message)}"
    else:
        text = one_line(message)
    return ConfigError(text, field=field)
