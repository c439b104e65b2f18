"""AKS tokens without kubelogin: what `kubelogin get-token --login spn|workloadidentity|msi` prints
(as `az aks get-credentials` + `kubelogin convert-kubeconfig -l <login>` write it). Followed from
Azure/kubelogin pkg/internal: token/options.go (the flags; UpdateFromEnv, the environment variables
that override them; GetCloudConfiguration, the authority of each --environment), token/provider.go
(which credential each login uses), token/execCredentialPlugin.go (the scope `<server-id>/.default`,
the expiry the token's own), token/githubactionscredential.go (GitHub Actions' OIDC token),
converter/convert.go (what convert-kubeconfig writes). azure-identity mints (imported only when
minting: the `cloud` extra); `--login azurecli` and the interactive logins need kubelogin itself."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verify.errors import KubeConfigError
from verify.kube.cloud import entra
from verify.kube.cloud.args import split
from verify.kube.plugins import Credential, failure, shown

LOGINS = ("spn", "workloadidentity", "msi")
# options.go GetCloudConfiguration: --environment (case-insensitive) to azcore's cloud authority;
# any other name is the public cloud
PUBLIC = "https://login.microsoftonline.com/"
_CLOUDS = {
    "AZURECLOUD": PUBLIC,
    "AZUREPUBLIC": PUBLIC,
    "AZUREPUBLICCLOUD": PUBLIC,
    "AZUREUSGOVERNMENT": "https://login.microsoftonline.us/",
    "AZUREUSGOVERNMENTCLOUD": "https://login.microsoftonline.us/",
    "AZURECHINACLOUD": "https://login.chinacloudapi.cn/",
}
# get-token's flags understood (pflag: `--f v` or `--f=v`, `-l v`), by the Request field they set;
# the cache directories only say where kubelogin keeps an authentication record
_VALUED = {
    "--login": "login",
    "-l": "login",
    "--server-id": "server_id",
    "--client-id": "client_id",
    "--tenant-id": "tenant_id",
    "-t": "tenant_id",
    "--environment": "environment",
    "-e": "environment",
    "--client-secret": "client_secret",
    "--authority-host": "authority_host",
    "--federated-token-file": "federated_token_file",
    "--identity-resource-id": "identity_resource_id",
    "--cache-dir": "",
    "--token-cache-dir": "",
}
_BOOLS = {
    "--disable-environment-override": "disable_environment_override",
    "--disable-instance-discovery": "disable_instance_discovery",
    "--use-azurerm-env-vars": "use_azurerm_env_vars",
}


@dataclass(frozen=True)
class Request:
    login: str
    server_id: str
    client_id: str = ""
    tenant_id: str = ""
    environment: str = "AzurePublicCloud"
    client_secret: str = dataclasses.field(default="", repr=False)
    authority_host: str = ""
    federated_token_file: str = ""
    identity_resource_id: str = ""
    disable_environment_override: bool = False
    disable_instance_discovery: bool = False
    use_azurerm_env_vars: bool = False
    client_certificate: str = ""  # only ever from the environment: a certificate is not minted here


def parse(command: str, args: list[str]) -> Request | None:
    """The request of `kubelogin get-token --login spn|workloadidentity|msi --server-id S …` with
    only the flags above; None for anything else (another login, --legacy, PoP, a certificate)."""
    if command != "kubelogin":
        return None
    parsed = split(args, valued=_VALUED, booleans=_BOOLS, missing="refuse")
    if parsed is None:
        return None
    values: dict[str, Any] = {**parsed.values, **parsed.booleans}  # keys: Request's fields only
    if parsed.positional != ("get-token",):
        return None
    if values.get("login") not in LOGINS or not values.get("server_id"):
        return None
    return Request(**values)


def resolved(request: Request, environ: Mapping[str, str]) -> tuple[Request, dict[str, str]]:
    """options.go UpdateFromEnv: the environment's variables override the flags (a variable set,
    even empty, wins, as os.LookupEnv), unless --disable-environment-override. Also says where each
    of client id, tenant id and secret came from."""
    sources = {"client_id": "--client-id", "tenant_id": "--tenant-id", "client_secret": "--client-secret"}
    if request.disable_environment_override:
        return request, sources
    changes: dict[str, Any] = {}

    def take(field: str, *names: str) -> None:
        for name in names:
            if name in environ:
                changes[field] = environ[name]
                sources[field] = name

    if request.use_azurerm_env_vars:
        take("client_id", "ARM_CLIENT_ID")
        take("client_secret", "ARM_CLIENT_SECRET")
        take("client_certificate", "ARM_CLIENT_CERTIFICATE_PATH")
        take("tenant_id", "ARM_TENANT_ID")
    else:
        take("client_id", "AAD_SERVICE_PRINCIPAL_CLIENT_ID", "AZURE_CLIENT_ID")
        take("client_secret", "AAD_SERVICE_PRINCIPAL_CLIENT_SECRET", "AZURE_CLIENT_SECRET")
        take("client_certificate", "AAD_SERVICE_PRINCIPAL_CLIENT_CERTIFICATE")
        take("client_certificate", "AZURE_CLIENT_CERTIFICATE_PATH")
        take("tenant_id", "AZURE_TENANT_ID")
    take("login", "AAD_LOGIN_METHOD")
    if changes.get("login", request.login) == "workloadidentity":
        take("client_id", "AZURE_CLIENT_ID")
        take("federated_token_file", "AZURE_FEDERATED_TOKEN_FILE")
        take("authority_host", "AZURE_AUTHORITY_HOST")
    return dataclasses.replace(request, **changes), sources


def authority(request: Request) -> str:
    """--authority-host (or, for workload identity, AZURE_AUTHORITY_HOST), else the cloud of
    --environment; as kubelogin's Validate, an https URL with a host and a trailing slash."""
    host = request.authority_host or _CLOUDS.get(request.environment.upper(), PUBLIC)
    if not re.fullmatch(r"https://[^/?#\s]+/(?:[^?#\s]*/)?", host):
        raise ValueError(f"authority host {entra.named(host)!r} is not an https URL ending in '/'")
    return host


def mint(
    request: Request, *, exec_cfg: Mapping[str, Any], timeout: float, environ: Mapping[str, str]
) -> Credential:
    """A fresh token for `<server-id>/.default` from the standard Azure credentials of `environ`,
    as the login of the kubeconfig (or AAD_LOGIN_METHOD) gets it."""
    try:
        import azure.identity  # noqa: F401
    except ImportError:
        raise _failed(request, exec_cfg, "needs azure-identity: install rollout-verify[cloud]") from None
    req, sources = resolved(request, environ)
    hide = [v for v in (req.client_secret, request.client_secret) if v]
    try:
        if req.login not in LOGINS:
            login = entra.named(req.login)
            raise entra.Unmintable(f"AAD_LOGIN_METHOD={login!r} is a login only kubelogin does")
        if req.login == "msi":
            minted = entra.managed_identity(req, environ=environ, timeout=timeout)
        else:
            mint_by = entra.service_principal if req.login == "spn" else entra.workload_identity
            minted = mint_by(req, host=authority(req), sources=sources, environ=environ, timeout=timeout)
    except entra.Unmintable as e:
        raise _failed(request, exec_cfg, entra.hidden(str(e), hide)) from None
    except ValueError as e:
        raise _failed(request, exec_cfg, entra.hidden(shown(str(e)), hide)) from None
    token, expires_on, source = minted
    origin = (
        f"the AKS token for server id {entra.named(req.server_id)!r} minted in-process (kubelogin is not "
        f"on PATH) with --login {req.login} from {source}: check those credentials and that the cluster "
        "grants their identity access (Azure RBAC for Kubernetes or a RoleBinding)"
    )
    expires = dt.datetime.fromtimestamp(expires_on, dt.UTC)
    return Credential(token=token, expires=expires, origin=origin)


def _failed(request: Request, exec_cfg: Mapping[str, Any], why: str) -> KubeConfigError:
    return failure(
        "kubelogin",
        "is not installed (not found on PATH) and its AKS token for server id "
        f"{entra.named(request.server_id)!r} could not be minted in-process: {why}",
        exec_cfg,
    )
