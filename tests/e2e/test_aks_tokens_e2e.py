"""AKS tokens minted in-process: a kubeconfig as `az aks get-credentials` + `kubelogin
convert-kubeconfig -l <login>` write it, in an environment without `kubelogin`, connects with the
Azure credentials of the environment. kubesim plays the cluster's Microsoft Entra ID on its own
port (tests/kubesim/apiserver/entra.py): it issues the federated tokens, checks them and the
client secret itself, and its access tokens authenticate only for the cluster's server id.

azure-identity trusts kubesim's CA through REQUESTS_CA_BUNDLE. For spn, kubelogin takes the
authority only from --authority-host (else --environment's cloud), so those kubeconfigs add it,
and --disable-instance-discovery, as kubelogin needs for any authority Microsoft does not know."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.kubesim import Cluster, Knobs
from tests.kubesim.apiserver.entra import (
    AKS_OIDC_ISSUER,
    AKS_SERVER_ID,
    AKS_SUBJECT,
    ARM_RESOURCE,
    GITHUB_REQUEST_TOKEN,
    IDENTITY_HEADER,
    MSI_CLIENT_ID,
    TEST_CLIENT_ID,
    TEST_CLIENT_SECRET,
    TEST_TENANT_ID,
)
from tests.support.helpers import deployment, plant, run_verify

WRONG_SECRET = "kubesim~Entra.Wrong-Secret_000000000000001"
SECRETS = ("AZURE_CLIENT_SECRET", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "IDENTITY_HEADER")  # never in an output
# the exec user `kubelogin convert-kubeconfig -l <login>` writes (pkg/internal/converter/convert.go)
CONVERTED = {
    "workloadidentity": ["get-token", "--login", "workloadidentity", "--server-id", AKS_SERVER_ID],
    "spn": ["get-token", "--login", "spn", "--server-id", AKS_SERVER_ID, "--client-id", TEST_CLIENT_ID,
            "--tenant-id", TEST_TENANT_ID, "--environment", "AzurePublicCloud"],
    "msi": ["get-token", "--login", "msi", "--server-id", AKS_SERVER_ID, "--client-id", MSI_CLIENT_ID],
}


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0, aks_server_id=AKS_SERVER_ID)


@pytest.fixture
def rolled_out(cluster: Cluster) -> Cluster:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    return cluster


def authority(cluster: Cluster) -> str:
    return f"https://127.0.0.1:{cluster.port}/"


def aks_kubeconfig(cluster: Cluster, path: Path, args: list[str]) -> str:
    doc = yaml.safe_load(cluster.kubeconfig())
    doc["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "kubelogin",
            "args": args,
            "installHint": "\nkubelogin is not installed which is required to connect to AAD enabled cluster.\n",
        }
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def spn_args(cluster: Cluster) -> list[str]:
    return [*CONVERTED["spn"], "--authority-host", authority(cluster), "--disable-instance-discovery"]


def azure_env(cluster: Cluster, tmp_path: Path, **extra: str) -> dict[str, str]:
    """No `kubelogin` on PATH, kubesim's CA trusted, no GitHub OIDC unless asked. The Azure
    variables are left unset rather than blank: kubelogin takes a variable set, even empty."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    assert shutil.which("kubelogin", path=str(empty)) is None
    plant(*(v for k, v in extra.items() if k in SECRETS))
    return {
        "PATH": str(empty),
        "REQUESTS_CA_BUNDLE": str(cluster.ca_path),
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "",
        **extra,
    }


def accepted(cluster: Cluster) -> list[str]:
    return cluster.call(lambda: [t for t in cluster.auth.tokens if t.startswith("kubesim-entra.")])


def served(cluster: Cluster) -> dict[str, int]:
    assert cluster.auth.entra is not None
    return cluster.call(lambda: dict(cluster.auth.entra.served) if cluster.auth.entra else {})


def test_workload_identity_without_kubelogin_exchanges_the_federated_token_file(
    rolled_out: Cluster, tmp_path: Path
) -> None:
    assert rolled_out.auth.entra is not None
    projected = tmp_path / "azure-identity-token"  # as AKS's workload identity webhook mounts it
    projected.write_text(rolled_out.auth.entra.federated_token(issuer=AKS_OIDC_ISSUER, subject=AKS_SUBJECT))
    plant(projected.read_text())
    env = azure_env(
        rolled_out,
        tmp_path,
        AZURE_CLIENT_ID=TEST_CLIENT_ID,
        AZURE_TENANT_ID=TEST_TENANT_ID,
        AZURE_FEDERATED_TOKEN_FILE=str(projected),
        AZURE_AUTHORITY_HOST=authority(rolled_out),
    )
    kc = aks_kubeconfig(rolled_out, tmp_path / "kc", CONVERTED["workloadidentity"])
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert len(accepted(rolled_out)) == 1 and served(rolled_out) == {"token": 1}
    assert rolled_out.call(lambda: list(rolled_out.auth.refused)) == []
    assert "kubesim-entra." not in out.everything and "get_token failed" not in out.everything


def test_github_actions_oidc_token_is_exchanged_as_kubelogin_prefers_it(rolled_out: Cluster, tmp_path: Path) -> None:
    env = azure_env(
        rolled_out,
        tmp_path,
        AZURE_CLIENT_ID=TEST_CLIENT_ID,
        AZURE_TENANT_ID=TEST_TENANT_ID,
        AZURE_FEDERATED_TOKEN_FILE=str(tmp_path / "not-there"),  # not read: GitHub's token is preferred
        AZURE_AUTHORITY_HOST=authority(rolled_out),
        ACTIONS_ID_TOKEN_REQUEST_TOKEN=GITHUB_REQUEST_TOKEN,
        ACTIONS_ID_TOKEN_REQUEST_URL=f"{authority(rolled_out)}github/oidc/token?api-version=2.0",
    )
    kc = aks_kubeconfig(rolled_out, tmp_path / "kc", CONVERTED["workloadidentity"])
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert served(rolled_out) == {"github": 1, "token": 1} and len(accepted(rolled_out)) == 1


def test_a_service_principal_without_kubelogin_connects_with_the_environments_secret(
    rolled_out: Cluster, tmp_path: Path
) -> None:
    env = azure_env(rolled_out, tmp_path, AZURE_CLIENT_SECRET=TEST_CLIENT_SECRET)
    kc = aks_kubeconfig(rolled_out, tmp_path / "kc", spn_args(rolled_out))
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert served(rolled_out) == {"openid": 1, "token": 1} and len(accepted(rolled_out)) == 1
    assert TEST_CLIENT_SECRET not in out.everything and "kubesim-entra." not in out.everything


def test_a_managed_identity_endpoint_on_loopback_is_used_for_msi(rolled_out: Cluster, tmp_path: Path) -> None:
    env = azure_env(
        rolled_out, tmp_path, IDENTITY_ENDPOINT=f"{authority(rolled_out)}msi/token", IDENTITY_HEADER=IDENTITY_HEADER
    )
    kc = aks_kubeconfig(rolled_out, tmp_path / "kc", CONVERTED["msi"])
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert served(rolled_out) == {"msi": 1} and len(accepted(rolled_out)) == 1


def test_a_refused_secret_is_one_line_and_the_cluster_is_never_asked(cluster: Cluster, tmp_path: Path) -> None:
    env = azure_env(cluster, tmp_path, AZURE_CLIENT_SECRET=WRONG_SECRET)
    kc = aks_kubeconfig(cluster, tmp_path / "kc", spn_args(cluster))
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 2, out.everything
    assert cluster.requests.total() == 0 and served(cluster) == {"openid": 1, "token": 1}
    (line,) = [ln for ln in out.stderr.splitlines() if ln.strip()]  # the run's only words
    assert line.startswith("rollout-verify: error: kubeconfig exec plugin 'kubelogin' is not installed"), line
    assert (
        f"AKS token for server id '{AKS_SERVER_ID}' could not be minted in-process: Entra ID "
        f"({authority(cluster)}) refused it: AADSTS7000215: Invalid client secret provided." in line
    ), line
    assert "kubelogin is not installed which is required" in line
    assert WRONG_SECRET not in out.everything and "Traceback" not in out.everything
    assert "get_token failed" not in out.everything  # azure-identity's own warning is not printed


def test_a_token_for_another_server_id_is_refused_by_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    env = azure_env(cluster, tmp_path, AZURE_CLIENT_SECRET=TEST_CLIENT_SECRET)
    args = spn_args(cluster)
    args[args.index(AKS_SERVER_ID)] = ARM_RESOURCE
    kc = aks_kubeconfig(cluster, tmp_path / "kc", args)
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code != 0, out.everything
    assert any("not the cluster's server id" in r for r in cluster.call(lambda: list(cluster.auth.refused)))
    (line,) = [ln for ln in out.stderr.splitlines() if "HTTP 401" in ln]
    assert f"the cluster did not accept the AKS token for server id '{ARM_RESOURCE}' minted in-process" in line, line
    assert f"with --login spn from client '{TEST_CLIENT_ID}' of tenant '{TEST_TENANT_ID}'" in line, line
    assert "with the secret of AZURE_CLIENT_SECRET" in line and TEST_CLIENT_SECRET not in out.everything


def test_an_installed_kubelogin_is_run_as_before(rolled_out: Cluster, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubelogin").write_text(
        f"#!{sys.executable}\nimport json\n"
        f"print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        f" 'status': {{'token': {rolled_out.admin_token!r}}}}}))\n"
    )
    (bin_dir / "kubelogin").chmod(0o755)
    env = {**azure_env(rolled_out, tmp_path, AZURE_CLIENT_SECRET=WRONG_SECRET), "PATH": str(bin_dir)}
    kc = aks_kubeconfig(rolled_out, tmp_path / "kc", spn_args(rolled_out))
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert served(rolled_out) == {} and accepted(rolled_out) == []
