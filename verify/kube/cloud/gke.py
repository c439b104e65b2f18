"""GKE tokens without gke-gcloud-auth-plugin: what the plugin prints (kubernetes/cloud-provider-gcp
cmd/gke-gcloud-auth-plugin, its default_credentials_token_provider.go): a Google OAuth2 access
token for the scopes cloud-platform and userinfo.email (the second makes GKE see a service account
by its email, not its numeric id), expiring when the token does. google-auth mints it (imported
only here, only when minting: the `cloud` extra) from Application Default Credentials, read from
the run's own environment: a service-account key, a user's refresh token, or an `external_account`
file (Workload Identity Federation, as google-github-actions/auth writes it), else the metadata
server. Every request goes through one transport that keeps the call's deadline and remembers
which host answered what, so a failure is one line naming the step, never google-auth's text."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from verify.errors import KubeConfigError
from verify.kube.cloud.args import split
from verify.kube.plugins import PER_CALL, Credential, failure, shown
from verify.redact import shown_path

COMMAND = "gke-gcloud-auth-plugin"
SCOPES = (
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
)
ADC_FLAG = "--use_application_default_credentials"
# google-github-actions/auth exports the same file for gcloud (CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE)
# and for the client libraries (GOOGLE_APPLICATION_CREDENTIALS)
GCLOUD_FILE_VAR = "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE"
ADC_FILE_VAR = "GOOGLE_APPLICATION_CREDENTIALS"
# where an external_account's subject token comes from (its credential_source), as said in a message
_SUBJECT_SOURCES = {"file": "a file", "url": "a URL", "executable": "an executable", "environment_id": "AWS"}


@dataclass(frozen=True)
class Request:
    command: str
    # --use_application_default_credentials: ADC. Without it the plugin asks gcloud for its active
    # account; with neither on PATH the same credentials are what gcloud would use: the file
    # CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE names, else ADC
    adc: bool


def parse(command: str, args: list[str]) -> Request | None:
    """The request of `gke-gcloud-auth-plugin [--use_application_default_credentials[=BOOL]]`, as
    `gcloud container clusters get-credentials` writes it; None for any other flag (--account,
    --impersonate_service_account, --use_edge_cloud, ... need gcloud) or argument."""
    if command != COMMAND:
        return None
    parsed = split(args, valued={}, booleans={ADC_FLAG: "adc"}, missing="refuse")
    if parsed is None or parsed.positional:
        return None
    return Request(command, parsed.booleans.get("adc", False))


class _OutOfTime(Exception):
    """The call's deadline passed between two requests (never caught by google-auth's retries)."""


@dataclass
class _Seen:
    """What the transport saw last: the host asked, its HTTP status (0: no answer) and body."""

    host: str = ""
    status: int = 0
    body: bytes = b""
    hosts: list[str] = field(default_factory=list)


def mint(
    request: Request, *, exec_cfg: Mapping[str, Any], timeout: float, environ: Mapping[str, str]
) -> Credential:
    """A fresh access token from the credentials of `environ` (see the module docstring), within
    `timeout` seconds (at most plugins.PER_CALL) for every request it takes."""
    try:
        import google.auth
        import google.auth.transport.requests  # needs requests: checked here, used in _transport
        from google.auth.exceptions import GoogleAuthError
    except ImportError:
        raise _failed(exec_cfg, "", "needs google-auth and requests: install rollout-verify[cloud]") from None
    _quiet()
    seconds = max(0.1, min(timeout, PER_CALL))
    seen = _Seen()
    http = _transport(deadline=time.monotonic() + seconds, environ=environ, seen=seen)
    source = "Application Default Credentials"
    path, var = _credentials_file(request, environ)
    try:
        if path is not None:
            info = _read(path, var, exec_cfg)
            source = f"{var} ({_describe(info)})"
            credentials = _load(info)
        else:
            credentials, _ = google.auth.default(scopes=SCOPES, request=http)
            if type(credentials).__module__.startswith("google.auth.compute_engine"):
                source = "the metadata server's service account"
        credentials.refresh(http)
    except _OutOfTime:
        raise _failed(exec_cfg, source, f"no answer within {seconds:g}s{_from(seen)}") from None
    except (GoogleAuthError, ValueError) as e:
        raise _failed(exec_cfg, source, _why(e, seen, seconds=seconds, from_file=path is not None)) from None
    token = str(getattr(credentials, "token", "") or "")
    if not token:
        raise _failed(exec_cfg, source, f"no access token was given{_from(seen)}")
    expiry = getattr(credentials, "expiry", None)  # google-auth's expiry: naive UTC
    expires = expiry.replace(tzinfo=dt.UTC) if isinstance(expiry, dt.datetime) else None
    origin = (
        f"the GKE access token minted in-process ({request.command} is not on PATH) from {source}: "
        "check that this Google identity may use the cluster (IAM roles/container.* in its "
        "project, or RBAC bindings for its email)"
    )
    return Credential(token=token, expires=expires, origin=origin)


def _quiet() -> None:
    """google-auth's warnings ("unavailable metadata server", ...) never reach stderr: with no
    handler configured Python prints them there (logging.lastResort); the failure is our one line."""
    google = logging.getLogger("google")
    if not any(isinstance(h, logging.NullHandler) for h in google.handlers):
        google.addHandler(logging.NullHandler())


def _credentials_file(request: Request, environ: Mapping[str, str]) -> tuple[str | None, str]:
    """The credentials file ADC would read, from the run's environment (a container action's
    variables are translated there): $GOOGLE_APPLICATION_CREDENTIALS, else gcloud's
    application_default_credentials.json when it exists (google-auth _default.py, _cloud_sdk.py)."""
    if not request.adc and environ.get(GCLOUD_FILE_VAR):
        return environ[GCLOUD_FILE_VAR], GCLOUD_FILE_VAR
    if environ.get(ADC_FILE_VAR):
        return environ[ADC_FILE_VAR], ADC_FILE_VAR
    config = environ.get("CLOUDSDK_CONFIG") or os.path.join(environ.get("HOME") or "~", ".config", "gcloud")
    well_known = os.path.join(os.path.expanduser(config), "application_default_credentials.json")
    if os.path.isfile(well_known):
        return well_known, "gcloud's application_default_credentials.json"
    return None, ""


def _read(path: str, var: str, exec_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The credentials file's JSON object; one line naming the file (never its content) if not."""
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
    except OSError as e:
        raise _failed(exec_cfg, "", f"{var} {shown_path(path)} cannot be read ({e.strerror})") from None
    except ValueError:
        raise _failed(exec_cfg, "", f"{var} {shown_path(path)} is not JSON") from None
    if not isinstance(info, dict):
        raise _failed(exec_cfg, "", f"{var} {shown_path(path)} is not a JSON object")
    return info


def _load(info: dict[str, Any]) -> Any:
    """The credentials of a file, by its type, as ADC loads them (google-auth _default.py
    _load_credentials_from_info) but with each type's own constructor, as google-auth asks
    (its generic loaders warn) and without the project-id lookup they add (a call to Cloud
    Resource Manager). A user's credentials keep the scopes they were granted, as in ADC."""
    from google.auth.exceptions import DefaultCredentialsError

    kind = info.get("type")
    if kind == "service_account":
        from google.oauth2 import service_account

        return service_account.Credentials.from_service_account_info(info, scopes=SCOPES)
    if kind == "authorized_user":
        from google.oauth2 import credentials

        return credentials.Credentials.from_authorized_user_info(info)
    if kind == "impersonated_service_account":
        from google.auth.impersonated_credentials import Credentials as Impersonated

        return Impersonated.from_impersonated_service_account_info(info, scopes=SCOPES)
    if kind == "external_account_authorized_user":
        from google.auth import external_account_authorized_user

        return external_account_authorized_user.Credentials.from_info(info)
    if kind == "external_account":
        source = info.get("credential_source") or {}
        if info.get("subject_token_type") == "urn:ietf:params:aws:token-type:aws4_request":
            from google.auth import aws

            return aws.Credentials.from_info(info, scopes=SCOPES)
        if isinstance(source, dict) and "executable" in source:
            from google.auth import pluggable

            return pluggable.Credentials.from_info(info, scopes=SCOPES)
        from google.auth import identity_pool

        return identity_pool.Credentials.from_info(info, scopes=SCOPES)
    raise DefaultCredentialsError(f"type {kind!r} is not one ADC loads")


def _describe(info: Mapping[str, Any]) -> str:
    """What kind of credential a file holds and whose it is: names and hosts, never a secret."""
    kind = str(info.get("type") or "no type")
    if kind == "service_account":
        return f"the key of service account {shown(str(info.get('client_email') or '?'))}"
    if kind == "authorized_user":
        return "a user's refresh token, as gcloud auth application-default login writes it"
    if kind == "external_account":
        source = info.get("credential_source") or {}
        given = next((v for k, v in _SUBJECT_SOURCES.items() if k in source), "an unknown source")
        what = f"Workload Identity Federation, subject token from {given}"
        what += f", exchanged at {_host(info, 'token_url')}"
        impersonation = str(info.get("service_account_impersonation_url") or "")
        if impersonation:
            email = impersonation.rpartition("/")[2].partition(":")[0]
            what += f", as service account {shown(email)}"
        return what
    if kind == "impersonated_service_account":
        target = str(info.get("service_account_impersonation_url") or "").rpartition("/")[2].partition(":")[0]
        return f"impersonating service account {shown(target)}"
    return f"type {shown(kind)}"


def _host(info: Mapping[str, Any], key: str) -> str:
    return shown(urlsplit(str(info.get(key) or "")).netloc or "?")


def _why(e: Exception, seen: _Seen, *, seconds: float, from_file: bool) -> str:
    """A failure as one line: the host that refused and its OAuth or API error (code and
    description, masked), or that it could not be reached; google-auth's own text is never used
    (it can quote a response, or a file path that holds a token)."""
    from google.auth.exceptions import DefaultCredentialsError, TransportError

    if seen.status >= 400:
        return f"{seen.host} refused it (HTTP {seen.status}{_error(seen.body)})"
    if isinstance(e, TransportError) and seen.host and not seen.status:
        cause = type(e.__cause__ or e).__name__
        if "Timeout" in cause:
            return f"{seen.host} did not answer within {seconds:g}s"
        return f"{seen.host} could not be reached ({cause})"
    if isinstance(e, DefaultCredentialsError | ValueError) and from_file and not seen.hosts:
        return f"the file is not a credential google-auth can load ({type(e).__name__})"
    if isinstance(e, DefaultCredentialsError) and not from_file:
        return (
            "found no Google credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's "
            "application_default_credentials.json, or a metadata server)"
        )
    return f"google-auth failed ({type(e).__name__}){_from(seen)}"


def _error(body: bytes) -> str:
    """`: code: description` of an OAuth error (RFC 6749 5.2) or a Google API error body."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    if isinstance(error, dict):  # {"error": {"code", "message", "status"}}
        code, text = error.get("status"), error.get("message")
    else:
        code, text = error, data.get("error_description")
    said = ": ".join(str(p) for p in (code, text) if p)
    return f": {shown(said)}" if said else ""


def _from(seen: _Seen) -> str:
    return f" (last asked: {seen.host})" if seen.host else ""


def _transport(*, deadline: float, environ: Mapping[str, str], seen: _Seen) -> Any:
    """google-auth's requests transport, every call bounded by what is left of `deadline`, its CA
    bundle the run's REQUESTS_CA_BUNDLE (or CURL_CA_BUNDLE), its answers noted in `seen`."""
    import google.auth.transport.requests

    verify: str | bool = environ.get("REQUESTS_CA_BUNDLE") or environ.get("CURL_CA_BUNDLE") or True

    class Timed(google.auth.transport.requests.Request):
        def __call__(
            self,
            url: str,
            method: str = "GET",
            body: Any = None,
            headers: Any = None,
            timeout: float | None = None,
            **kwargs: Any,
        ) -> Any:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _OutOfTime
            seen.host, seen.status, seen.body = shown(urlsplit(url).netloc.rpartition("@")[2]), 0, b""
            seen.hosts.append(seen.host)
            kwargs.setdefault("verify", verify)
            wait = min(left, timeout) if timeout else left
            response = super().__call__(url, method, body, headers, timeout=wait, **kwargs)
            seen.status, seen.body = int(response.status), bytes(response.data or b"")
            return response

    return Timed()


def _failed(exec_cfg: Mapping[str, Any], source: str, why: str) -> KubeConfigError:
    origin = f" from {source}" if source else ""
    return failure(
        COMMAND,
        f"is not installed (not found on PATH) and its GKE access token could not be minted "
        f"in-process{origin}: {why}",
        exec_cfg,
    )
