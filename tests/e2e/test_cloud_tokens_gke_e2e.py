"""GKE access tokens minted in-process when gke-gcloud-auth-plugin is not installed: the kubeconfig
`gcloud container clusters get-credentials` writes, in an environment without the plugin (nor
gcloud), connects with the Google credentials of the environment: the Workload Identity
Federation file google-github-actions/auth writes, or a service-account key. kubesim plays GKE
and Google's token endpoints on loopback (tests/kubesim/apiserver/gke.py); google-auth trusts
them through REQUESTS_CA_BUNDLE=<kubesim's CA>."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kubesim import Cluster, Knobs
from tests.kubesim.apiserver.gke import GoogleSim
from tests.support import container_action
from tests.support.helpers import deployment, plant, run_verify
from verify.kube.cloud import gke

INSTALL_HINT = (
    "Install gke-gcloud-auth-plugin for use with kubectl by following "
    "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin"
)


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0, gke_project="kubesim-shop")


@pytest.fixture
def sim(cluster: Cluster) -> GoogleSim:
    assert cluster.auth.gke is not None
    return cluster.auth.gke


def gke_kubeconfig(cluster: Cluster, path: Path, *, args: list[str] | None = None) -> str:
    """The user entry `gcloud container clusters get-credentials shop` writes."""
    doc = yaml.safe_load(cluster.kubeconfig(user="gke_kubesim-shop_europe-west1_shop"))
    doc["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gke-gcloud-auth-plugin",
            **({"args": args} if args else {}),
            "installHint": INSTALL_HINT,
            "provideClusterInfo": True,
            "interactiveMode": "IfAvailable",
        }
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def google_env(cluster: Cluster, tmp_path: Path, credentials: dict[str, Any]) -> dict[str, str]:
    """No plugin (nor gcloud) on PATH; the credentials file exported as google-github-actions/auth
    exports it; kubesim's CA trusted; a metadata server only on a closed loopback port."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    assert shutil.which("gke-gcloud-auth-plugin", path=str(empty)) is None
    assert cluster.auth.gke is not None
    plant(*cluster.call(cluster.auth.gke.secret_values))
    path = tmp_path / "gha-creds-1a2b3c.json"
    path.write_text(json.dumps(credentials))
    return {
        "PATH": str(empty),
        "GOOGLE_APPLICATION_CREDENTIALS": str(path),
        "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE": str(path),
        "GOOGLE_GHA_CREDS_PATH": str(path),
        "CLOUDSDK_CORE_PROJECT": "kubesim-shop",
        "GOOGLE_CLOUD_PROJECT": "kubesim-shop",
        "REQUESTS_CA_BUNDLE": str(cluster.ca_path),
        "GCE_METADATA_HOST": "127.0.0.1:9",
        "GCE_METADATA_IP": "127.0.0.1:9",
    }


def accepted(cluster: Cluster) -> dict[str, str]:
    """The Google access tokens the apiserver authenticated, with the user each one was."""
    return cluster.call(lambda: {t: u.name for t, u in cluster.auth.tokens.items() if t.startswith("ya29.")})


def test_a_gke_kubeconfig_without_the_plugin_connects_through_workload_identity_federation(
    cluster: Cluster, sim: GoogleSim, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    kc = gke_kubeconfig(cluster, tmp_path / "kc")
    env = google_env(cluster, tmp_path, sim.external_account_info())
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    # GitHub's OIDC token, exchanged at STS, then the service account impersonated: one of each
    assert cluster.call(lambda: dict(sim.calls)) == {"github": 1, "sts": 1, "iam": 1}
    assert set(accepted(cluster).values()) == {sim.service_account}
    plant(*cluster.call(sim.secret_values))  # the federated token too, never accepted by the cluster
    assert "ya29." not in out.everything


def test_a_service_account_key_file_is_minted_too(cluster: Cluster, sim: GoogleSim, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    kc = gke_kubeconfig(cluster, tmp_path / "kc", args=["--use_application_default_credentials"])
    env = google_env(cluster, tmp_path, sim.service_account_info())
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert cluster.call(lambda: dict(sim.calls)) == {"oauth2": 1}
    assert set(accepted(cluster).values()) == {sim.service_account}
    assert "ya29." not in out.everything and "PRIVATE KEY" not in out.everything


def test_a_refused_exchange_is_one_line_and_nothing_reaches_the_cluster(
    cluster: Cluster, sim: GoogleSim, tmp_path: Path
) -> None:
    # the file form of credential_source: a GitHub ID token for another repository, which the
    # provider's attribute condition rejects
    subject = tmp_path / "oidc-token"
    subject.write_text(sim.oidc_token(repository="someone/else"))
    plant(subject.read_text())
    kc = gke_kubeconfig(cluster, tmp_path / "kc")
    env = google_env(cluster, tmp_path, sim.external_account_info(token_file=str(subject)))
    cluster.reset_counts()
    out = run_verify("--deployment", "web", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 2, out.everything
    assert cluster.requests.total() == 0
    assert cluster.call(lambda: dict(sim.calls)) == {"sts": 1}
    (line,) = [
        ln for ln in out.stderr.splitlines() + out.stdout.splitlines() if "gke-gcloud-auth-plugin" in ln
    ]
    assert (
        "'gke-gcloud-auth-plugin' is not installed (not found on PATH) and its GKE access token could not be "
        "minted in-process from CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE (Workload Identity Federation, subject "
        f"token from a file, exchanged at 127.0.0.1:{sim.port}, as service account {sim.service_account}): "
        f"127.0.0.1:{sim.port} refused it (HTTP 400: unauthorized_client: The given credential is rejected "
        "by the attribute condition.)"
    ) in line, line
    assert "Install gke-gcloud-auth-plugin for use with kubectl" in line
    assert "eyJ" not in out.everything


def test_an_installed_plugin_is_run_as_before(cluster: Cluster, sim: GoogleSim, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "plugin-ran"
    (bin_dir / "gke-gcloud-auth-plugin").write_text(
        f"#!{sys.executable}\nimport json\nopen({str(ran)!r}, 'w').write('yes')\n"
        f"print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        f" 'status': {{'token': {cluster.admin_token!r}}}}}))\n"
    )
    (bin_dir / "gke-gcloud-auth-plugin").chmod(0o755)
    kc = gke_kubeconfig(cluster, tmp_path / "kc")
    env = {**google_env(cluster, tmp_path, sim.service_account_info()), "PATH": str(bin_dir)}
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kc, tmp_path=tmp_path, env=env)
    assert out.code == 0, out.everything
    assert ran.read_text() == "yes"
    assert cluster.call(lambda: dict(sim.calls)) == {}


def test_the_minted_credential_expires_with_its_token_and_says_where_it_came_from(
    cluster: Cluster, sim: GoogleSim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datetime as dt

    import google.oauth2.credentials

    # google-auth always refreshes a user's token at oauth2.googleapis.com: point it at kubesim
    monkeypatch.setattr(google.oauth2.credentials, "_GOOGLE_OAUTH2_TOKEN_ENDPOINT", sim.oauth2_url)
    adc = tmp_path / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir()
    adc.write_text(json.dumps(sim.authorized_user_info()))
    environ = {"CLOUDSDK_CONFIG": str(adc.parent), "REQUESTS_CA_BUNDLE": str(cluster.ca_path)}
    credential = gke.mint(gke.Request(gke.COMMAND, False), exec_cfg={}, timeout=5, environ=environ)
    assert credential.expires is not None
    left = credential.expires - dt.datetime.now(dt.UTC)
    assert dt.timedelta(minutes=59) < left <= dt.timedelta(hours=1)
    assert cluster.call(lambda: sim.user(credential.token)) is not None
    assert credential.origin.startswith(
        "the GKE access token minted in-process (gke-gcloud-auth-plugin is not on PATH) from gcloud's "
        "application_default_credentials.json (a user's refresh token"
    )
    assert credential.token not in credential.origin


def test_in_a_container_action_the_runner_paths_of_the_kubeconfig_and_the_credentials_are_found(
    cluster: Cluster, sim: GoogleSim, tmp_path: Path
) -> None:
    """google-github-actions/auth writes its credentials file into the checkout and exports the
    runner's path (GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE); the
    gcloud-written kubeconfig sits there too: inside the container both are found under
    /github/workspace and the token is minted from them."""
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    folders = container_action.mounts(tmp_path)
    gke_kubeconfig(cluster, folders["workspace"] / "kubeconfig")
    env = google_env(cluster, tmp_path, sim.external_account_info())
    creds = Path(env["GOOGLE_APPLICATION_CREDENTIALS"])
    (folders["workspace"] / creds.name).write_text(creds.read_text())
    creds.unlink()  # only the workspace's copy exists
    on_runner = f"{container_action.RUNNER_WORKSPACE}/{creds.name}"
    env.update(
        GOOGLE_APPLICATION_CREDENTIALS=on_runner,
        CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE=on_runner,
        GOOGLE_GHA_CREDS_PATH=on_runner,
        KUBECONFIG=f"{container_action.RUNNER_WORKSPACE}/kubeconfig",
    )
    done = container_action.run(folders, env, "--deployment", "web", "--expect-env", "A")
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(accepted(cluster).values()) == {sim.service_account}
    assert container_action.left_nothing()
