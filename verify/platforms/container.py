"""Runner paths inside a GitHub container action. Only the workspace, `_temp/_github_home` and
`_temp/_github_workflow` are mounted (at /github/workspace, /github/home, /github/workflow), yet
the environment reaches the container verbatim, so a path another step exported (a kubeconfig,
a Google credentials file) names the runner's file system (actions/runner#1984). Paths under a
mounted folder are translated; any other runner path is a clear error with the two fixes."""

from __future__ import annotations

import re
from collections.abc import Mapping

from verify.errors import ConfigError
from verify.redact import shown_path

ROOT = "/github"
# env vars that hold paths a run reads or writes (the Action maps its inputs to VERIFY_*)
PATH_VARS = (
    "KUBECONFIG",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",  # google-github-actions/auth exports it too
    "AZURE_FEDERATED_TOKEN_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "VERIFY_KUBECONFIG",
    "VERIFY_CONFIG",
    "VERIFY_REPORT_JSON",
    "VERIFY_JUNIT",
    "VERIFY_SUMMARY",
    "VERIFY_OUTPUT_DIR",
)
# .../work/REPO/REPO/rest or .../_work/REPO/REPO/rest: the runner's checkout of the repository
_WORKSPACE = re.compile(r"^/(?:.+/)?_?work/([^/]+)/\1(/.*)?$")
_TEMP = re.compile(r"^/(?:.+/)?_?work/_temp/(_github_home|_github_workflow)(/.*)?$")
_RUNNER = re.compile(
    r"^/(home/runner|Users/runner|opt/actions-runner|runner|actions-runner|__w)(/|$)|/_?work/"
)


def active(environ: Mapping[str, str]) -> bool:
    """Inside a container action: GitHub sets the workspace to the mounted one."""
    return environ.get("GITHUB_ACTIONS") == "true" and environ.get("GITHUB_WORKSPACE") == f"{ROOT}/workspace"


def translate(path: str, *, root: str = ROOT) -> str | None:
    """The path inside the container, or None when it names the runner's file system outside the
    mounted folders; paths that are not the runner's are returned as they are."""
    m = _TEMP.match(path)
    if m:
        folder = "home" if m.group(1) == "_github_home" else "workflow"
        return f"{root}/{folder}{m.group(2) or ''}"
    m = _WORKSPACE.match(path)
    if m:
        return f"{root}/workspace{m.group(2) or ''}"
    if _RUNNER.search(path) and not path.startswith(f"{root}/"):
        return None
    return path


def translated_environ(environ: Mapping[str, str], *, root: str = ROOT) -> dict[str, str]:
    """`environ` with the path variables translated; ConfigError for one that cannot be reached."""
    out = dict(environ)
    for var in PATH_VARS:
        value = environ.get(var)
        if not value:
            continue
        parts = value.split(":") if var == "KUBECONFIG" else [value]
        moved: list[str] = []
        for part in parts:
            inside = translate(part, root=root) if part else part
            if inside is None:
                raise ConfigError(
                    f"{var}: {shown_path(part)} is on the runner, outside what a container action can "
                    f"see ({root}/workspace, {root}/home, {root}/workflow); pass the kubeconfig's "
                    "content in the `kubeconfig` input, or write the file under the workspace",
                    field=var,
                )
            moved.append(inside)
        out[var] = ":".join(moved)
    return out
