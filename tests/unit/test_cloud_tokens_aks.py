"""verify.kube.cloud.aks: which kubelogin commands are minted in-process, how the environment
overrides their flags (as kubelogin's options.go), and the one line a failure to mint is."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verify.errors import KubeConfigError
from verify.kube import cloud
from verify.kube.cloud import aks, entra

SERVER = "6dae42f8-4368-4678-94ff-3960e28e3630"
CLIENT = "3c1a9f0e-2b4d-4e6f-8a1b-c2d3e4f5a6b7"
TENANT = "72f9a0c1-5b3e-4d6a-9e8f-0a1b2c3d4e5f"
SECRET = "unit~Test.Secret-000000000000000000000001"
HINT = {"installHint": "kubelogin is not installed which is required to connect to AAD enabled cluster."}
# what `kubelogin convert-kubeconfig -l spn` writes from az aks get-credentials' kubeconfig
SPN = ["get-token", "--login", "spn", "--server-id", SERVER, "--client-id", CLIENT, "--tenant-id", TENANT,
       "--environment", "AzurePublicCloud"]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (SPN, aks.Request("spn", SERVER, CLIENT, TENANT, "AzurePublicCloud")),
        ([*SPN, "--client-secret", SECRET], aks.Request("spn", SERVER, CLIENT, TENANT, client_secret=SECRET)),
        (["get-token", "--login", "workloadidentity", "--server-id", SERVER], aks.Request("workloadidentity", SERVER)),
        (
            ["get-token", "-l", "workloadidentity", "--server-id", SERVER, "--client-id", CLIENT, "-t", TENANT,
             "--authority-host", "https://login.microsoftonline.com/", "--federated-token-file=/var/run/t",
             "--cache-dir", "/root/.kube/cache/kubelogin"],
            aks.Request("workloadidentity", SERVER, CLIENT, TENANT, authority_host="https://login.microsoftonline.com/",
                        federated_token_file="/var/run/t"),
        ),
        (["get-token", "--login=msi", "--server-id", SERVER, "--client-id", CLIENT], aks.Request("msi", SERVER, CLIENT)),
        (
            ["get-token", "--login", "msi", "--server-id", SERVER, "--identity-resource-id", "/subscriptions/x/id"],
            aks.Request("msi", SERVER, identity_resource_id="/subscriptions/x/id"),
        ),
        (
            [*SPN, "--disable-instance-discovery", "--disable-environment-override=true", "--use-azurerm-env-vars=false"],
            aks.Request("spn", SERVER, CLIENT, TENANT, disable_instance_discovery=True, disable_environment_override=True),
        ),
        (["get-token", "--login", "azurecli", "--server-id", SERVER], None),  # needs the az CLI itself
        (["get-token", "--login", "devicecode", "--server-id", SERVER, "--client-id", CLIENT], None),
        (["get-token", "--server-id", SERVER, "--client-id", CLIENT], None),  # devicecode by default
        (["get-token", "--login", "interactive", "--server-id", SERVER], None),
        (["get-token", "--login", "ropc", "--server-id", SERVER, "--username", "u"], None),
        (["get-token", "--login", "spn", "--client-id", CLIENT], None),  # no server id
        ([*SPN, "--legacy"], None),
        ([*SPN, "--pop-enabled", "--pop-claims", "u=/ARM/ID"], None),
        ([*SPN, "--client-certificate", "/etc/spn.pfx"], None),
        ([*SPN, "--timeout", "30s"], None),
        ([*SPN, "--disable-instance-discovery", "true"], None),  # a bool flag takes no separate value
        ([*SPN, "--disable-instance-discovery=maybe"], None),
        ([*SPN, "--tenant-id"], None),  # a flag without its value
        (["convert-kubeconfig", "--login", "spn", "--server-id", SERVER], None),
    ],
)
def test_which_kubelogin_commands_are_minted(args: list[str], wanted: aks.Request | None) -> None:
    assert aks.parse("kubelogin", args) == wanted
    assert (cloud.minter({"command": "/usr/local/bin/kubelogin", "args": args}) is None) == (wanted is None)


def test_the_client_secret_is_never_in_the_requests_repr() -> None:
    request = aks.parse("kubelogin", [*SPN, "--client-secret", SECRET])
    assert request is not None and SECRET not in repr(request)


def test_the_environment_overrides_the_flags_as_kubelogin_reads_it() -> None:
    request = aks.Request("spn", SERVER, "flag-client", "flag-tenant", client_secret="flag-secret")
    env = {
        "AAD_SERVICE_PRINCIPAL_CLIENT_ID": "kubelogin-client",
        "AZURE_CLIENT_ID": "azure-client",
        "AAD_SERVICE_PRINCIPAL_CLIENT_SECRET": "kubelogin-secret",
        "AZURE_TENANT_ID": "azure-tenant",
        "AZURE_AUTHORITY_HOST": "https://127.0.0.1:1/",
        "ARM_CLIENT_ID": "arm-client",
    }
    got, sources = aks.resolved(request, env)
    assert (got.client_id, got.tenant_id, got.client_secret) == ("azure-client", "azure-tenant", "kubelogin-secret")
    assert sources["client_secret"] == "AAD_SERVICE_PRINCIPAL_CLIENT_SECRET"
    assert got.authority_host == ""  # only workload identity reads AZURE_AUTHORITY_HOST
    terraform, _ = aks.resolved(aks.Request("spn", SERVER, use_azurerm_env_vars=True), env)
    assert (terraform.client_id, terraform.tenant_id) == ("arm-client", "")
    kept, _ = aks.resolved(aks.Request("spn", SERVER, "flag-client", disable_environment_override=True), env)
    assert kept.client_id == "flag-client"
    workload, _ = aks.resolved(aks.Request("workloadidentity", SERVER), {**env, "AZURE_FEDERATED_TOKEN_FILE": "/t"})
    assert (workload.authority_host, workload.federated_token_file) == ("https://127.0.0.1:1/", "/t")
    switched, _ = aks.resolved(aks.Request("spn", SERVER), {"AAD_LOGIN_METHOD": "workloadidentity", **env})
    assert switched.login == "workloadidentity" and switched.authority_host == "https://127.0.0.1:1/"
    emptied, _ = aks.resolved(request, {"AZURE_CLIENT_SECRET": ""})  # set, even empty, wins (LookupEnv)
    assert emptied.client_secret == ""


def test_the_authority_and_the_scope() -> None:
    assert aks.authority(aks.Request("spn", SERVER, environment="AzureChinaCloud")) == "https://login.chinacloudapi.cn/"
    assert aks.authority(aks.Request("spn", SERVER, environment="azureusgovernment")) == "https://login.microsoftonline.us/"
    assert aks.authority(aks.Request("spn", SERVER, environment="AzureStackCloud")) == "https://login.microsoftonline.com/"
    for wrong in ("https://127.0.0.1:8443", "http://127.0.0.1:8443/", "127.0.0.1/"):
        with pytest.raises(ValueError, match="is not an https URL ending in '/'"):
            aks.authority(aks.Request("spn", SERVER, authority_host=wrong))
    assert entra.scope(SERVER) == f"{SERVER}/.default"
    assert entra.scope(f"{SERVER}//") == f"{SERVER}/.default"
    assert entra.scope("api://aks/.default") == "api://aks/.default"


class FakeCredential:
    made: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __init__(self, *args: Any, **kw: Any) -> None:
        self.made.append((args, kw))

    def __enter__(self) -> FakeCredential:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def get_token(self, *scopes: str) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken(f"token-for:{' '.join(scopes)}", 1_900_000_000)


def test_a_service_principal_token_is_the_client_secret_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    import azure.identity

    monkeypatch.setattr(azure.identity, "ClientSecretCredential", FakeCredential)
    FakeCredential.made.clear()
    mint = cloud.minter({"command": "kubelogin", "args": [*SPN, "--disable-instance-discovery"]})
    assert mint is not None
    credential = mint(timeout=5, environ={"AZURE_CLIENT_SECRET": SECRET, "REQUESTS_CA_BUNDLE": "/ca.pem"})
    assert credential.token == f"token-for:{SERVER}/.default"
    assert credential.expires is not None and credential.expires.timestamp() == 1_900_000_000
    ((args, kw),) = FakeCredential.made
    assert args == (TENANT, CLIENT, SECRET)
    assert kw["authority"] == "https://login.microsoftonline.com/" and kw["disable_instance_discovery"] is True
    assert kw["connection_verify"] == "/ca.pem" and kw["read_timeout"] == 5
    assert SECRET not in credential.origin and "with the secret of AZURE_CLIENT_SECRET" in credential.origin


def failed(args: list[str], environ: dict[str, str], *, timeout: float = 5) -> str:
    mint = cloud.minter({"command": "kubelogin", "args": args, **HINT})
    assert mint is not None
    with pytest.raises(KubeConfigError) as e:
        mint(timeout=timeout, environ=environ)
    text = str(e.value)
    assert text.startswith("kubeconfig exec plugin 'kubelogin' is not installed (not found on PATH) and its AKS token")
    assert HINT["installHint"] in text and "\n" not in text
    return text


def test_missing_or_unmintable_credentials_are_one_line(tmp_path: Path) -> None:
    assert "no client secret (from --client-secret)" in failed(SPN, {})
    assert "a client certificate" in failed(SPN, {"AZURE_CLIENT_CERTIFICATE_PATH": "/spn.pem", "AZURE_CLIENT_SECRET": SECRET})
    assert "AAD_LOGIN_METHOD='devicecode' is a login only kubelogin does" in failed(SPN, {"AAD_LOGIN_METHOD": "devicecode"})
    workload = ["get-token", "--login", "workloadidentity", "--server-id", SERVER]
    assert "no client id (from --client-id)" in failed(workload, {"AZURE_TENANT_ID": TENANT})
    assert "no federated token file" in failed(workload, {"AZURE_CLIENT_ID": CLIENT, "AZURE_TENANT_ID": TENANT})
    missing = str(tmp_path / "no-such-token")
    text = failed(workload, {"AZURE_CLIENT_ID": CLIENT, "AZURE_TENANT_ID": TENANT, "AZURE_FEDERATED_TOKEN_FILE": missing})
    assert f'the federated token file "{missing}" could not be read (No such file or directory)' in text
    bad_host = {"AZURE_CLIENT_SECRET": SECRET}
    assert "is not an https URL ending in '/'" in failed([*SPN, "--authority-host", "https://127.0.0.1:1"], bad_host)


def test_msi_refuses_where_azure_identity_would_use_workload_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"AZURE_AUTHORITY_HOST": "https://a/", "AZURE_TENANT_ID": TENANT, "AZURE_FEDERATED_TOKEN_FILE": "/t"}.items():
        monkeypatch.setenv(name, value)
    text = failed(["get-token", "--login", "msi", "--server-id", SERVER], {})
    assert "use --login workloadidentity or install kubelogin" in text


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never says anything (a hung authority)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_an_authority_that_never_answers_is_given_up_within_the_timeout(
    silent_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    args = [*SPN, "--authority-host", f"https://127.0.0.1:{silent_port}/", "--disable-instance-discovery"]
    text = failed(args, {"AZURE_CLIENT_SECRET": SECRET}, timeout=1)
    assert time.monotonic() - started < 3
    assert f"Entra ID (https://127.0.0.1:{silent_port}/) did not answer within 1s" in text and SECRET not in text


def test_an_unreachable_authority_is_one_line_and_nothing_is_logged(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    args = [*SPN, "--client-secret", SECRET, "--authority-host", f"https://127.0.0.1:{port}/", "--disable-instance-discovery"]
    text = failed(args, {})
    assert f"Entra ID (https://127.0.0.1:{port}/) could not be reached (Connection refused)" in text
    assert SECRET not in text
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""  # azure-identity's WARNING is not printed
    assert logging.getLogger("azure").propagate is False


def test_a_secret_echoed_in_a_refusal_is_hidden() -> None:
    assert entra.hidden(f"AADSTS7000215: Invalid client secret {SECRET}.", [SECRET]) == "AADSTS7000215: Invalid client secret ***."
