"""Exec credential plugins (client.authentication.k8s.io v1 and v1beta1), run as kubectl runs them
(staging/src/k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go) but inside the run's deadline:
before any request, with a per-call timeout, never interactive, the credential kept until its
`expirationTimestamp`. A plugin that is missing, hangs or fails is one line naming the command
(and its `installHint`), never its raw stderr, and the run stops before it talks to the cluster."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verify.errors import KubeConfigError
from verify.redact import one_line

PER_CALL = 30.0  # seconds one plugin call may take (kubectl has none; a device-code login would wait forever)
_MAX_SHOWN = 200
# what a plugin's error text may carry that must not reach a log: tokens, keys, long opaque strings
_SECRETISH = re.compile(r"(?i)(bearer\s+\S+|eyJ[\w-]+\.[\w-]+\.[\w-]*|k8s-aws-v1\.\S+|[A-Za-z0-9+/_=-]{32,})")
# the value of a named secret: `password: x`, `client_secret=x`, `"access_token": "x"`, `x-api-key: x`
_NAMED_SECRET = re.compile(
    r"""(?i)(["']?[\w-]*(?:secret|password|passwd|token|api[_-]?key|credential)[\w-]*["']?\s*[:=]\s*)"""
    r"""("[^"]*"|'[^']*'|[^\s,;}&]+)"""
)
HINT = "see the docs' 'Credentials per platform' (docs/credentials.md)"
# an installHint's documentation link (no query, no user): shown whole, though its path is long
_PLAIN_URL = re.compile(r"^https?://[\w.-]+(?::\d+)?(?:/[\w./~%-]*)?(?:#[\w-]*)?$")


@dataclass(frozen=True)
class Credential:
    token: str = ""
    client_certificate_data: str = ""
    client_key_data: str = ""
    expires: dt.datetime | None = None
    origin: str = ""  # when not the plugin itself: what gave it (said when the cluster refuses it)


def shown(text: str) -> str:
    """A plugin's stderr as one printable, cut line with anything token-like masked."""
    line = one_line(_SECRETISH.sub("***", _NAMED_SECRET.sub(r"\1***", text)))
    return line if len(line) <= _MAX_SHOWN else line[: _MAX_SHOWN - 3] + "..."


def shown_hint(text: str) -> str:
    """An installHint as `shown`, except that plain documentation links stay whole (gcloud's
    points to .../cluster-access-for-kubectl#install_plugin, which the masking would cut)."""
    words = text.replace("\x00", "").split()  # NUL marks where a link goes back
    links = {i: w for i, w in enumerate(words) if _PLAIN_URL.match(w)}
    joined = " ".join("\x00" if i in links else w for i, w in enumerate(words))
    masked = _SECRETISH.sub("***", _NAMED_SECRET.sub(r"\1***", joined))
    kept = iter(links.values())
    line = one_line("".join(next(kept) if c == "\x00" else c for c in masked))
    return line if len(line) <= _MAX_SHOWN else line[: _MAX_SHOWN - 3] + "..."


def failure(command: str, what: str, exec_cfg: Mapping[str, Any]) -> KubeConfigError:
    hint = exec_cfg.get("installHint")
    shown_hint_ = f" ({shown_hint(str(hint))})" if isinstance(hint, str) and hint.strip() else ""
    return KubeConfigError(f"kubeconfig exec plugin {command!r} {what}{shown_hint_}; {HINT}")


def run(
    exec_cfg: Mapping[str, Any],
    *,
    cluster: Mapping[str, Any],
    timeout: float,
    environ: Mapping[str, str],
) -> Credential:
    """One call of the plugin; KubeConfigError (exit 2) when it cannot give a credential."""
    command = str(exec_cfg.get("command") or "")
    api_version = str(exec_cfg.get("apiVersion") or "client.authentication.k8s.io/v1")
    shown_command = os.path.basename(command) or "(none)"
    path = shutil.which(command, path=environ.get("PATH")) if command else None
    if path is None:
        raise failure(shown_command, "is not installed (not found on PATH)", exec_cfg)
    env = dict(environ)
    for item in exec_cfg.get("env") or []:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            env[item["name"]] = str(item.get("value", ""))
    spec: dict[str, Any] = {"interactive": False}
    if exec_cfg.get("provideClusterInfo"):
        spec["cluster"] = {
            k: v
            for k, v in {
                "server": cluster.get("server"),
                "tls-server-name": cluster.get("tls-server-name"),
                "insecure-skip-tls-verify": cluster.get("insecure-skip-tls-verify"),
                "certificate-authority-data": cluster.get("certificate-authority-data"),
                "proxy-url": cluster.get("proxy-url"),
            }.items()
            if v
        }
    env["KUBERNETES_EXEC_INFO"] = json.dumps(
        {"apiVersion": api_version, "kind": "ExecCredential", "spec": spec}
    )
    args = [str(a) for a in exec_cfg.get("args") or []]
    try:
        proc = _run_alone([path, *args], env=env, timeout=max(0.1, min(timeout, PER_CALL)))
    except subprocess.TimeoutExpired:
        raise failure(shown_command, f"did not answer within {min(timeout, PER_CALL):g}s", exec_cfg) from None
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise failure(shown_command, f"could not be started ({why})", exec_cfg) from None
    if proc.returncode != 0:
        said = shown(proc.stderr.decode("utf-8", "replace"))
        what = f"failed (exit {proc.returncode}){': ' + said if said else ''}"
        raise failure(shown_command, what, exec_cfg)
    try:
        status = json.loads(proc.stdout).get("status") or {}
    except (ValueError, AttributeError):
        raise failure(shown_command, "did not print an ExecCredential", exec_cfg) from None
    expires = None
    stamp = status.get("expirationTimestamp")
    if isinstance(stamp, str):
        try:
            expires = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            expires = None
    credential = Credential(
        token=str(status.get("token") or ""),
        client_certificate_data=str(status.get("clientCertificateData") or ""),
        client_key_data=str(status.get("clientKeyData") or ""),
        expires=expires,
    )
    if not credential.token and not credential.client_certificate_data:
        raise failure(shown_command, "printed no token and no client certificate", exec_cfg)
    return credential


def _run_alone(argv: list[str], *, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    """The plugin in a process group of its own, the whole group killed when it does not answer
    in time: a plugin is often a script whose child (a browser login, a `sleep`) would outlive it."""
    with subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,  # interactiveMode Never: nothing to answer a prompt with
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
