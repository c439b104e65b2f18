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
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verify.errors import KubeConfigError
from verify.redact import one_line

PER_CALL = 30.0  # seconds one plugin call may take (kubectl has none; a device-code login would wait forever)
_MAX_SHOWN = 200
# What a plugin's error text may carry that must not reach a log: tokens, keys, long opaque strings.
# Linear time on any input (a plugin's stderr is not ours: a 20 MB unbroken word must not hold the
# GIL, and with it the signal handlers, for minutes): possessive quantifiers never give back what they
# took, and a pattern that could start anywhere inside a word starts only where a word starts.
_SECRETISH = re.compile(
    r"(?i)(bearer\s++\S++|(?<![\w-])eyJ[\w-]++\.[\w-]++\.[\w-]*+|k8s-aws-v1\.\S++|[A-Za-z0-9+/_=-]{32,}+)"
)
# the value of a named secret: `password: x`, `client_secret=x`, `"access_token": "x"`, `x-api-key: x`;
# the name is taken up to its first keyword at once (atomic), then to its end (possessive)
_NAMED_SECRET = re.compile(
    r"""(?i)((?<![\w-])["']?(?>[\w-]*?(?:secret|password|passwd|token|api[_-]?key|credential))[\w-]*+"""
    r"""["']?\s*+[:=]\s*+)("[^"]*+"|'[^']*+'|[^\s,;}&]++)"""
)
# masking reads at most this much of a plugin's text (cut where a word ends, so that no part of a
# token is left behind unmasked): a shown line is at most _MAX_SHOWN characters anyway
_MAX_READ = 64 * 1024
# where the docs say how to give each platform's pipeline a credential (exec plugins, fresh tokens)
RECIPE = "the docs' 'Credentials per platform' (docs/credentials.md)"
HINT = f"see {RECIPE}"
# an installHint's documentation link (no query, no user): shown whole, though its path is long
_PLAIN_URL = re.compile(r"^https?://[\w.-]+(?::\d+)?(?:/[\w./~%-]*)?(?:#[\w-]*)?$")


@dataclass(frozen=True)
class Credential:
    token: str = ""
    client_certificate_data: str = ""
    client_key_data: str = ""
    expires: dt.datetime | None = None
    origin: str = ""  # when not the plugin itself: what gave it (said when the cluster refuses it)


def _head(text: str) -> str:
    """At most _MAX_READ characters of `text`, ending where a word ends (a word cut in two could
    be the unmasked half of a token)."""
    if len(text) <= _MAX_READ:
        return text
    head = text[: _MAX_READ + 1]
    cut = max(head.rfind(c) for c in " \t\r\n")
    return head[:cut] if cut > 0 else ""


def _masked(text: str) -> str:
    return _SECRETISH.sub("***", _NAMED_SECRET.sub(r"\1***", text))


def shown(text: str) -> str:
    """A plugin's stderr as one printable, cut line with anything token-like masked."""
    line = one_line(_masked(_head(text)))
    return line if len(line) <= _MAX_SHOWN else line[: _MAX_SHOWN - 3] + "..."


def shown_hint(text: str) -> str:
    """An installHint as `shown`, except that plain documentation links stay whole (gcloud's
    points to .../cluster-access-for-kubectl#install_plugin, which the masking would cut)."""
    words = _head(text).replace("\x00", "").split()  # NUL marks where a link goes back
    links = {i: w for i, w in enumerate(words) if _PLAIN_URL.match(w)}
    joined = " ".join("\x00" if i in links else w for i, w in enumerate(words))
    masked = _masked(joined)
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
    api_version = str(exec_cfg.get("apiVersion") or API_VERSIONS[0])
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
    seconds = max(0.1, min(timeout, PER_CALL))
    try:
        returncode, out, err = _run_alone([path, *args], env=env, timeout=seconds)
    except subprocess.TimeoutExpired:
        raise failure(shown_command, f"did not answer within {min(timeout, PER_CALL):g}s", exec_cfg) from None
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise failure(shown_command, f"could not be started ({why})", exec_cfg) from None
    if returncode != 0:
        said = shown(err.decode("utf-8", "replace"))
        what = f"failed (exit {returncode}){': ' + said if said else ''}"
        raise failure(shown_command, what, exec_cfg)
    return _credential(out, api_version=api_version, command=shown_command, exec_cfg=exec_cfg)


API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")


def configured_version(exec_cfg: Mapping[str, Any], *, user: str) -> str:
    """The kubeconfig's `exec.apiVersion` (v1 when unset, as before), or the KubeConfigError client-go's
    authenticator gives for any other (exec.go `newAuthenticator`: "exec plugin: invalid apiVersion")."""
    version = exec_cfg.get("apiVersion") or API_VERSIONS[0]
    if version not in API_VERSIONS:
        raise KubeConfigError(
            f"kubeconfig user {user} exec.apiVersion: exec plugin: invalid apiVersion "
            f'"{one_line(str(version))[:80]}"; use {API_VERSIONS[0]} (or v1beta1)'
        )
    return str(version)


def _credential(out: bytes, *, api_version: str, command: str, exec_cfg: Mapping[str, Any]) -> Credential:
    """The ExecCredential a plugin printed, checked as client-go's authenticator checks it
    (staging/src/k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go `refreshCredsLocked`): the
    words after the field are client-go's own. Never the output itself (it holds the token)."""

    def wrong(field: str, why: str) -> KubeConfigError:
        return failure(command, f"printed a wrong ExecCredential ({field}): {why}", exec_cfg)

    try:
        doc = json.loads(out)
    except (ValueError, RecursionError) as e:
        where = f" at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise wrong("stdout", f"decoding stdout: not a JSON ExecCredential{where}") from None
    if not isinstance(doc, dict):
        raise wrong("stdout", f"decoding stdout: a JSON {type(doc).__name__}, not an ExecCredential object")
    kind = doc.get("kind")
    if kind != "ExecCredential":
        said = f'no kind "{one_line(str(kind))[:40]}" is registered' if kind else "Object 'Kind' is missing"
        raise wrong("kind", f"decoding stdout: {said}")
    returned = doc.get("apiVersion")
    if returned != api_version:
        shown_version = one_line(str(returned))[:80] if returned else "(none)"
        raise wrong(
            "apiVersion",
            f"exec plugin is configured to use API version {api_version}, "
            f"plugin returned version {shown_version}",
        )
    status = doc.get("status")
    if not isinstance(status, dict):
        raise wrong("status", "exec plugin didn't return a status field")
    fields = {k: status.get(k) for k in ("token", "clientCertificateData", "clientKeyData")}
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise wrong(f"status.{name}", f"decoding stdout: a {type(value).__name__}, not a string")
    token, cert, key = (v or "" for v in fields.values())
    if not token and not cert and not key:
        raise wrong("status", "exec plugin didn't return a token or cert/key pair")
    if bool(cert) != bool(key):
        raise wrong("status", "exec plugin returned only certificate or key, not both")
    expires = None
    stamp = status.get("expirationTimestamp")
    if stamp is not None:
        try:
            expires = dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        except ValueError:
            raise wrong("status.expirationTimestamp", "decoding stdout: not an RFC 3339 time") from None
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=dt.UTC)
    return Credential(token=token, client_certificate_data=cert, client_key_data=key, expires=expires)


# what is kept of a plugin's stdout and of its stderr (an ExecCredential is KiBs)
_MAX_OUTPUT = 4 * 1024 * 1024
_running: set[int] = set()  # the process groups of plugins running now (stopped when the run is cancelled)
_running_lock = threading.Lock()


def _run_alone(argv: list[str], *, env: dict[str, str], timeout: float) -> tuple[int, bytes, bytes]:
    """The plugin in a process group of its own, the whole group killed when it does not answer
    in time: a plugin is often a script whose child (a browser login, a `sleep`) would outlive it.
    Its output is read as it comes, at most _MAX_OUTPUT of each stream kept (the rest is read and
    dropped), so a plugin that prints gigabytes costs neither memory nor the deadline."""
    end = time.monotonic() + timeout
    with subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,  # interactiveMode Never: nothing to answer a prompt with
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        with _running_lock:
            _running.add(proc.pid)
        try:
            kept = _read_both(proc, end=end)
            if kept is None:
                _kill(proc.pid)
                raise subprocess.TimeoutExpired(argv, timeout)
            returncode = proc.wait(timeout=max(0.05, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill(proc.pid)
            raise
        finally:
            with _running_lock:
                _running.discard(proc.pid)
    return returncode, kept[0], kept[1]


def _read_both(proc: subprocess.Popen[bytes], *, end: float) -> tuple[bytes, bytes] | None:
    """stdout and stderr until both close, or None when `end` comes first."""
    assert proc.stdout is not None and proc.stderr is not None
    buffers = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    with selectors.DefaultSelector() as selector:
        for fd in buffers:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = end - time.monotonic()
            if left <= 0:
                return None
            for key, _ in selector.select(min(left, 0.5)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                elif len(buffers[key.fd]) < _MAX_OUTPUT:
                    buffers[key.fd] += chunk[: _MAX_OUTPUT - len(buffers[key.fd])]
    return bytes(buffers[proc.stdout.fileno()]), bytes(buffers[proc.stderr.fileno()])


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def stop_running() -> None:
    """Kill every plugin still running (a cancelled run leaves none behind: each has its own
    session, so the CI job's signal never reached it)."""
    with _running_lock:
        pids = list(_running)
    for pid in pids:
        _kill(pid)
