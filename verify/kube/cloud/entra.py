"""Microsoft Entra ID tokens with azure-identity, one credential per kubelogin login (Azure/kubelogin
pkg/internal/token/provider.go): spn is ClientSecretCredential, workloadidentity is
WorkloadIdentityCredential (the federated token file) or, inside GitHub Actions with an id-token,
an assertion of GitHub's OIDC token (githubactionscredential.go), msi is ManagedIdentityCredential.
Within the plugin call's time, and every failure one line without the library's text: only the
AADSTS code and its first sentence, the secret itself replaced if it were ever echoed."""

from __future__ import annotations

import json
import logging
import os
import re
import ssl
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from verify.kube.plugins import shown
from verify.kube.transport import get, within
from verify.redact import one_line, shown_path, without_userinfo

if TYPE_CHECKING:
    from verify.kube.cloud.aks import Request

Minted = tuple[str, int, str]  # (token, expires_on as epoch seconds, what it was minted from)

DEFAULT_SCOPE = "/.default"
EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"  # githubactionscredential.go azureADAudience
ACTIONS_TOKEN, ACTIONS_URL = "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL"
PER_REQUEST = 30.0  # seconds at most for one HTTP request, within the plugin call's time
_AADSTS = re.compile(r"AADSTS\d+:[^.]{0,160}\.?")
_ERRNO = re.compile(r"\[Errno -?\d+\] ([A-Za-z ,-]{1,60})")
# azure-identity's variables for workload identity: with all of them, its ManagedIdentityCredential
# is a WorkloadIdentityCredential (kubelogin's Go azidentity one never is)
_WORKLOAD_VARS = ("AZURE_AUTHORITY_HOST", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE")


class Unmintable(Exception):
    """Why this credential cannot be minted: already one printable line without secrets."""


def service_principal(
    req: Request, *, host: str, sources: Mapping[str, str], environ: Mapping[str, str], timeout: float
) -> Minted:
    """spn: client credentials with the secret (clientsecretcredential.go)."""
    if req.client_certificate:
        raise Unmintable("a client certificate (from the environment) is not minted in-process")
    _require(req, sources, "client_id", "tenant_id", "client_secret")
    from azure.identity import ClientSecretCredential

    credential = ClientSecretCredential(
        req.tenant_id,
        req.client_id,
        req.client_secret,
        authority=host,
        disable_instance_discovery=req.disable_instance_discovery,
        **_transport(environ, timeout),
    )
    source = (
        f"client {named(req.client_id)!r} of tenant {named(req.tenant_id)!r} with the secret of "
        f"{sources['client_secret']}, from {named(without_userinfo(host))}"
    )
    return _token(credential, req, host=host, timeout=timeout, source=source, reading="")


def workload_identity(
    req: Request, *, host: str, sources: Mapping[str, str], environ: Mapping[str, str], timeout: float
) -> Minted:
    """workloadidentity: a federated token exchanged for an Entra token (client_assertion); GitHub
    Actions' own OIDC token when the job may request one, as kubelogin prefers it, else the file."""
    _require(req, sources, "client_id", "tenant_id")
    if environ.get(ACTIONS_TOKEN) and environ.get(ACTIONS_URL):
        from azure.identity import ClientAssertionCredential

        assertion = ClientAssertionCredential(
            req.tenant_id,
            req.client_id,
            lambda: github_token(environ, timeout=timeout),
            authority=host,
            **_transport(environ, timeout),
        )
        source = _federated(req, f"GitHub Actions' OIDC token ({ACTIONS_URL})", host)
        return _token(assertion, req, host=host, timeout=timeout, source=source, reading="")
    if not req.federated_token_file:
        raise Unmintable("no federated token file (--federated-token-file or AZURE_FEDERATED_TOKEN_FILE)")
    from azure.identity import WorkloadIdentityCredential

    credential = WorkloadIdentityCredential(
        tenant_id=req.tenant_id,
        client_id=req.client_id,
        token_file_path=req.federated_token_file,
        authority=host,
        **_transport(environ, timeout),
    )
    what = f"the federated token file {shown_path(req.federated_token_file)}"
    source = _federated(req, what, host)
    return _token(credential, req, host=host, timeout=timeout, source=source, reading=what)


def managed_identity(req: Request, *, environ: Mapping[str, str], timeout: float) -> Minted:
    """msi: the managed identity of the machine or service (msicredential.go); azure-identity finds
    its endpoint in the process's environment (IDENTITY_ENDPOINT, MSI_ENDPOINT, else IMDS)."""
    if all(os.environ.get(name) for name in _WORKLOAD_VARS):
        raise Unmintable(
            "with AZURE_FEDERATED_TOKEN_FILE set, azure-identity's managed identity would be a workload "
            "identity, which kubelogin's is not: use --login workloadidentity or install kubelogin"
        )
    from azure.identity import ManagedIdentityCredential

    which: dict[str, Any] = {}
    if req.client_id:
        which["client_id"], what = req.client_id, f"client id {named(req.client_id)!r}"
    elif req.identity_resource_id:
        which["identity_config"] = {"resource_id": req.identity_resource_id}
        what = f"resource id {named(req.identity_resource_id)!r}"
    else:
        what = "system-assigned"
    credential = ManagedIdentityCredential(**which, **_transport(environ, timeout))
    endpoint = next((n for n in ("IDENTITY_ENDPOINT", "MSI_ENDPOINT") if os.environ.get(n)), "IMDS")
    source = f"the managed identity ({what}) of {endpoint}"
    return _token(credential, req, host=endpoint, timeout=timeout, source=source, reading="")


def github_token(environ: Mapping[str, str], *, timeout: float) -> str:
    """GitHub Actions' OIDC token for Entra's audience, as githubactionscredential.go asks it
    (through kube.transport: within the plugin call's time, however the answer trickles)."""
    import httpx

    try:
        url = httpx.URL(environ[ACTIONS_URL]).copy_set_param("audience", EXCHANGE_AUDIENCE)
        status, body = get(
            str(url),
            headers={
                "Authorization": f"bearer {environ[ACTIONS_TOKEN]}",
                "Accept": "application/json; api-version=2.0",
                "Content-Type": "application/json",
            },
            seconds=min(timeout, PER_REQUEST),
            verify=_tls(environ),
            environ=environ,
        )
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as e:
        raise Unmintable(f"GitHub Actions' OIDC token could not be requested ({type(e).__name__})") from None
    if status != 200:
        raise Unmintable(f"GitHub Actions' OIDC token request answered HTTP {status}")
    try:
        value = json.loads(body).get("value")
    except (ValueError, AttributeError):
        value = None
    if not isinstance(value, str) or not value:
        raise Unmintable("GitHub Actions' OIDC token answer carries no token")
    return value


def _federated(req: Request, what: str, host: str) -> str:
    who = f"client {named(req.client_id)!r} of tenant {named(req.tenant_id)!r}"
    return f"{who} with {what}, from {named(without_userinfo(host))}"


def _require(req: Request, sources: Mapping[str, str], *fields: str) -> None:
    """kubelogin's own checks: "client ID cannot be empty" and the like, naming where it comes from."""
    names = {"client_id": "client id", "tenant_id": "tenant id", "client_secret": "client secret"}
    for field in fields:
        if not getattr(req, field):
            raise Unmintable(f"no {names[field]} (from {sources.get(field, field)})")


def _tls(environ: Mapping[str, str]) -> ssl.SSLContext | bool:
    """The CA bundle requests (under azure-core) trusts: REQUESTS_CA_BUNDLE, else certifi's."""
    ca = environ.get("REQUESTS_CA_BUNDLE") or environ.get("CURL_CA_BUNDLE")
    return ssl.create_default_context(cafile=ca) if ca else True


def _transport(environ: Mapping[str, str], timeout: float) -> dict[str, Any]:
    """azure-core's request options: bounded waits, one retry, the environment's CA bundle."""
    seconds = max(1.0, min(timeout, PER_REQUEST))
    options: dict[str, Any] = {"connection_timeout": seconds, "read_timeout": seconds, "retry_total": 1}
    ca = environ.get("REQUESTS_CA_BUNDLE") or environ.get("CURL_CA_BUNDLE")
    if ca:
        options["connection_verify"] = ca
    return options


def scope(server_id: str) -> str:
    """execCredentialPlugin.go GetScope: the server id without trailing slashes, + `/.default`."""
    text = server_id.rstrip("/")
    return text if text.endswith(DEFAULT_SCOPE) else text + DEFAULT_SCOPE


def _token(credential: Any, req: Request, *, host: str, timeout: float, source: str, reading: str) -> Minted:
    """The credential's token for the cluster's scope, or Unmintable saying why in one line."""
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ServiceRequestError
    from azure.identity import CredentialUnavailableError

    _quiet()

    def get() -> Any:
        with credential:
            return credential.get_token(scope(req.server_id))

    hide = [v for v in (req.client_secret,) if v]
    entra = f"Entra ID ({named(without_userinfo(host))})"
    try:
        token = within(timeout, get, name="entra-token")
    except Unmintable:
        raise
    except TimeoutError:
        raise Unmintable(f"{entra} did not answer within {timeout:g}s") from None
    except CredentialUnavailableError as e:
        raise Unmintable(hidden(shown(str(e.message)), hide)) from None
    except ClientAuthenticationError as e:
        found, errno = _AADSTS.search(str(e.message)), _ERRNO.search(str(e.message))
        if errno and not found:  # MSAL's own requests failing are "Authentication failed" too
            raise Unmintable(f"{entra} could not be reached ({errno.group(1).strip()})") from None
        status = f"HTTP {e.status_code}" if e.status_code else "authentication failed"
        why = found.group(0) if found else status
        raise Unmintable(f"{entra} refused it: {hidden(shown(why), hide)}") from None
    except ServiceRequestError as e:
        errno = _ERRNO.search(str(e.message))
        why = errno.group(1).strip() if errno else type(e).__name__
        raise Unmintable(f"{entra} could not be reached ({why})") from None
    except HttpResponseError as e:
        raise Unmintable(f"{entra} answered HTTP {e.status_code}") from None
    except OSError as e:
        what = reading or "a file azure-identity needs"
        raise Unmintable(f"{what} could not be read ({e.strerror or type(e).__name__})") from None
    except ValueError as e:  # azure-identity's and MSAL's checks of their arguments
        raise Unmintable(hidden(shown(str(e)), hide)) from None
    except Exception as e:  # anything else the libraries raise: its kind only, never its text
        raise Unmintable(f"{entra} failed ({type(e).__name__})") from None
    return str(token.token), int(token.expires_on), source


def named(text: str) -> str:
    """An identifier, URL or name as a message quotes it: one printable line, cut (not masked:
    ids are GUIDs, which the token mask would hide)."""
    line = one_line(text)
    return line if len(line) <= 120 else line[:117] + "..."


def hidden(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _quiet() -> None:
    """azure-identity logs every failure at WARNING with the library's text, which Python's last
    resort handler would print: those loggers keep their records to themselves."""
    for name in ("azure", "msal"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())
        logger.propagate = False
