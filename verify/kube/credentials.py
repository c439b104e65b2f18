"""Who the run is to the API server: the third step of the connection path (kube.loading selected
the user entry, kube.endpoint read the cluster; kube.transport connects with what this gives).

The user entry is read as the official Python client reads it (kubernetes/config/kube_config.py
`_load_authentication`: an exec plugin, else `token`/`tokenFile`, else username/password; the client
certificate for an https server), the pod's ServiceAccount token as `load_incluster_config` does
(read again every minute: a projected token is rotated in place). Token files are trimmed as
client-go trims them (transport/token_source.go `fileTokenSource`). A token holding a control
character (a line break pasted with it) is refused before any request, naming where it came from:
it cannot be sent as a header, and asking again cannot change it.

Each credential knows its origin, said when the cluster refuses it (401) with its expiry when the
token says it (a JWT's `exp`, never anything else of it) and what renews it.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import math
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Generator, Mapping
from typing import Any

import httpx

from verify.errors import KubeConfigError
from verify.kube import plugins, tempfiles, transport
from verify.kube.endpoint import Endpoint
from verify.kube.loading import KubeconfigInvalid, Selection
from verify.kube.names import SERVICE_ACCOUNT_TOKEN
from verify.redact import one_line, shown_path

_TOKEN_REREAD = 60.0  # in-cluster: the projected token is read again after this many seconds
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
RECIPE = plugins.RECIPE


def checked_token(token: str, *, source: str) -> str:
    """`token`, or the KubeConfigError naming `source` when it holds a control character."""
    if _CONTROL.search(token):
        where = "a line break" if re.search(r"[\r\n]", token) else "a control character"
        raise KubeConfigError(
            f"{source}: the token holds {where}, which no HTTP header can carry; set it again "
            f"without it (see {RECIPE})"
        )
    return token


def jwt_expiry(token: str) -> dt.datetime | None:
    """A JWT's `exp` claim (ServiceAccount, OIDC and cloud tokens are JWTs), None for any other
    token: only that claim is read, nothing of the token is kept or shown."""
    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) > 16384:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error, RecursionError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    if not isinstance(exp, int | float) or isinstance(exp, bool) or not math.isfinite(exp):
        return None
    try:
        return dt.datetime.fromtimestamp(exp, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _when(moment: dt.datetime, *, now: dt.datetime) -> str:
    """`2026-05-01 10:00 UTC (3 h ago)`: when a token expired or expires."""
    seconds = (moment - now).total_seconds()
    span = abs(seconds)
    amount = (
        f"{int(span // 86400)} d"
        if span >= 86400
        else f"{int(span // 3600)} h"
        if span >= 3600
        else f"{int(span // 60)} min"
    )
    relative = f"{amount} ago" if seconds < 0 else f"in {amount}"
    return f"{moment.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC ({relative})"


class Credentials:
    """The `Authorization` value of every request (REST, watch, exec), asked of its source at most
    once per `ttl` seconds: asking re-reads a token file or refreshes an expired plugin credential,
    which costs more than an exec's own work when every one of hundreds of execs asks."""

    def __init__(
        self,
        *,
        origin: str,
        fix: str,
        read: Callable[[], str | None] = lambda: None,
        renew: Callable[[], None] | None = None,
        expires: Callable[[], dt.datetime | None] = lambda: None,
        cert_file: str | None = None,
        key_file: str | None = None,
        ttl: float = 1.0,
    ) -> None:
        self.origin = origin  # "the token of kubeconfig user "ci" (file "/x/kc")"
        self.fix = fix  # what renews it
        self.cert_file = cert_file
        self.key_file = key_file
        self._read = read
        self._renew = renew
        self._expires = expires
        self.ttl = ttl
        self._lock = threading.Lock()
        self._value: str | None = None
        self._at = -math.inf
        self._refused: set[str] = set()

    def authorization(self) -> str | None:
        with self._lock:
            now = time.monotonic()
            if now - self._at >= self.ttl:
                self._value = self._read() or None
                self._at = now
            return self._value

    def renewed(self, *, refused: str) -> str | None:
        """After a 401 for `refused`: the plugin's new credential, asked for once however many
        requests were refused with the same one (client-go's exec authenticator does the same on a
        401); None when there is no plugin or it gave the refused credential again."""
        if self._renew is None:
            return None
        with self._lock:
            if self._value == refused and refused not in self._refused:
                self._refused.add(refused)  # asked once per refused credential, whatever follows
                self._renew()
                self._value = self._read() or None
                self._at = time.monotonic()
            return self._value if self._value and self._value != refused else None

    def refused(self) -> str:
        """What a 401 says after the server's own words: whose credential, its expiry when it is
        readable, and the fix."""
        if not self.origin:
            return ""
        now = dt.datetime.now(dt.UTC)
        expires = self._expires()
        if expires is None:
            value = self._value or ""
            expires = jwt_expiry(value.split(" ", 1)[1]) if " " in value else None
        if expires is None:
            when = ""
        elif expires <= now:
            when = f"; it expired {_when(expires, now=now)}"
        else:
            when = f"; it expires {_when(expires, now=now)}, so it was revoked or is for another cluster"
        return f"the cluster did not accept {self.origin}{when}; {self.fix}"


def resolve(
    selection: Selection, *, endpoint: Endpoint, timeout: float, environ: Mapping[str, str]
) -> Credentials:
    """The credential of the selected user (or the pod's ServiceAccount), checked before any request."""
    if selection.in_cluster:
        return _service_account()
    user = selection.user
    if not user:
        return Credentials(origin="", fix="")
    who = f'kubeconfig user "{one_line(selection.user_name)[:80]}" (file {shown_path(selection.user_file)})'
    if user.get("auth-provider") and not isinstance(user.get("exec"), Mapping):
        name = (user.get("auth-provider") or {}).get("name", "")
        raise KubeConfigError(
            f"kubeconfig user {one_line(selection.user_name)}: the legacy auth-provider "
            f"{one_line(str(name))!r} is not supported (kubectl dropped it too); use its exec "
            f"plugin (gke-gcloud-auth-plugin, kubelogin); {plugins.HINT}"
        )
    cert_file, key_file = selection.cert_file, selection.key_file
    exec_cfg = user.get("exec")
    if isinstance(exec_cfg, Mapping):
        return _plugin(
            dict(exec_cfg),
            selection=selection,
            who=who,
            timeout=timeout,
            environ=environ,
            https=endpoint.https,
        )
    fix = f"give the kubeconfig a fresh token (see {RECIPE})"
    if user.get("token"):
        token = checked_token(str(user["token"]), source=f"{who} token")
        return _fixed(f"Bearer {token}", origin=f"the token of {who}", fix=fix, cert=(cert_file, key_file))
    if "tokenFile" in user and "token" not in user:
        path = os.path.normpath(str(user["tokenFile"]))
        with open(path, encoding="utf-8") as fh:
            token = fh.read().strip()
        if token:
            token = checked_token(token, source=f"{who} tokenFile {path}")
            origin = f"the token in {path} ({who} tokenFile)"
            return _fixed(
                f"Bearer {token}", origin=origin, fix=f"renew the token in {path}", cert=(cert_file, key_file)
            )
    if "username" in user and "password" in user:
        pair = f"{user['username']}:{user['password']}".encode("latin-1")
        origin = f"the username and password of {who}"
        basic = f"Basic {base64.b64encode(pair).decode()}"
        return _fixed(basic, origin=origin, fix="check them", cert=(cert_file, key_file))
    if cert_file:
        origin = f"the client certificate of {who}"
        return Credentials(origin=origin, fix="renew the certificate", cert_file=cert_file, key_file=key_file)
    return Credentials(origin="", fix="", cert_file=cert_file, key_file=key_file)


def _fixed(value: str, *, origin: str, fix: str, cert: tuple[str | None, str | None]) -> Credentials:
    return Credentials(origin=origin, fix=fix, read=lambda: value, cert_file=cert[0], key_file=cert[1])


def _service_account() -> Credentials:
    """The mounted ServiceAccount token, read again once a minute."""
    if not os.path.isfile(SERVICE_ACCOUNT_TOKEN):
        raise KubeconfigInvalid("Service token file does not exist.")
    current = [""]
    read_at = [-math.inf]

    def read() -> str | None:
        if time.monotonic() - read_at[0] >= _TOKEN_REREAD:
            with open(SERVICE_ACCOUNT_TOKEN, encoding="utf-8") as fh:
                content = fh.read().strip()
            if not content:
                raise KubeconfigInvalid("Token file exists but empty.")
            current[0] = checked_token(content, source=f"the ServiceAccount token {SERVICE_ACCOUNT_TOKEN}")
            read_at[0] = time.monotonic()
        return f"Bearer {current[0]}"

    read()
    return Credentials(
        origin=f"the pod's ServiceAccount token ({SERVICE_ACCOUNT_TOKEN})",
        fix="check that the pod's ServiceAccount still exists and its token is mounted (a projected token, "
        "not a copy)",
        read=read,
    )


def _plugin(
    exec_cfg: dict[str, Any],
    *,
    selection: Selection,
    who: str,
    timeout: float,
    environ: Mapping[str, str],
    https: bool,
) -> Credentials:
    """The exec plugin's credential, asked for again once it has expired (a token lives ~15 minutes
    on EKS, an hour on GKE) and once when the cluster refuses it with a 401 (a revoked or rotated
    one). The plugin runs here, before any request, never through the official client."""
    plugins.configured_version(exec_cfg, user=one_line(selection.user_name))
    cluster = dict(selection.cluster)
    name = os.path.basename(str(exec_cfg.get("command") or ""))

    def ask() -> plugins.Credential:
        given = _plugin_credential(exec_cfg, cluster=cluster, timeout=timeout, environ=environ)
        if given.token:
            checked_token(given.token, source=f"kubeconfig exec plugin {name!r} status.token")
        return given

    state = [ask()]
    cert_file, key_file = selection.cert_file, selection.key_file  # unless the plugin gives its own
    if state[0].client_certificate_data and https:
        cert_file = tempfiles.write(state[0].client_certificate_data.encode())
        key_file = tempfiles.write(state[0].client_key_data.encode())

    def read() -> str | None:
        expires = state[0].expires
        if (
            state[0].token
            and expires is not None
            and dt.datetime.now(dt.UTC) >= expires - dt.timedelta(seconds=30)
        ):
            state[0] = ask()
        return f"Bearer {state[0].token}" if state[0].token else None

    def renew() -> None:
        state[0] = ask()

    origin = state[0].origin or f"the token the exec plugin {one_line(name)!r} of {who} gave"
    return Credentials(
        origin=origin,
        fix="the plugin was asked again and gave no token the cluster accepts; check its login "
        f"(see {RECIPE})",
        read=read,
        renew=renew if state[0].token else None,
        expires=lambda: state[0].expires,
        cert_file=cert_file,
        key_file=key_file,
    )


def _plugin_credential(
    exec_cfg: Mapping[str, Any], *, cluster: Mapping[str, Any], timeout: float, environ: Mapping[str, str]
) -> plugins.Credential:
    """The plugin's credential: from the plugin when it is on PATH; else, for the cloud plugins
    kube.cloud knows (EKS, GKE, AKS), minted in-process from the standard cloud credentials, so an image
    without the CLIs still connects; else plugins.run's one "not installed" line."""
    command = str(exec_cfg.get("command") or "")
    if command and shutil.which(command, path=environ.get("PATH")) is None:
        from verify.kube import cloud  # only for a missing plugin: the minters are start-up otherwise

        mint = cloud.minter(exec_cfg)
        if mint is not None:
            # each minter bounds its own requests; this bounds the whole call, whatever the cloud
            # SDK under it does (their sockets are not kube.transport's)
            seconds = max(0.1, min(timeout, plugins.PER_CALL))
            try:
                return transport.within(seconds + 1, lambda: mint(timeout=timeout, environ=environ))
            except TimeoutError:
                name = os.path.basename(command)
                raise plugins.failure(
                    name,
                    f"is not installed (not found on PATH) and its token was not minted in-process "
                    f"within {seconds:g}s",
                    exec_cfg,
                ) from None
    return plugins.run(exec_cfg, cluster=cluster, timeout=timeout, environ=environ)


class ConfigAuth(httpx.Auth):
    """The credential, looked up per request (through `Credentials`, so a token the plugin or the
    token file renews is picked up within a second)."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.credentials.authorization()
        if token:
            request.headers["Authorization"] = token
        response = yield request
        if response.status_code == 401 and token:
            # once, and only with a credential the plugin has just given anew: not a retry of
            # the refused one (verify.kube.retry never retries a 401)
            fresh = self.credentials.renewed(refused=token)
            if fresh:
                request.headers["Authorization"] = fresh
                yield request
