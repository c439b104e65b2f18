"""verify.kube.cloud.gke: which gke-gcloud-auth-plugin kubeconfigs are minted in-process, and the
one line a failure to mint is (no Google endpoint involved: kubesim's are in tests/e2e)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from verify.errors import KubeConfigError
from verify.kube import cloud
from verify.kube.cloud import gke

HINT = (
    "Install gke-gcloud-auth-plugin for use with kubectl by following "
    "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin"
)


@pytest.mark.parametrize(
    ("command", "args", "adc"),
    [
        ("gke-gcloud-auth-plugin", [], False),  # as `gcloud container clusters get-credentials` writes it
        ("/usr/lib/google-cloud-sdk/bin/gke-gcloud-auth-plugin", [], False),
        ("gke-gcloud-auth-plugin", ["--use_application_default_credentials"], True),
        ("gke-gcloud-auth-plugin", ["--use_application_default_credentials=true"], True),
        ("gke-gcloud-auth-plugin", ["--use_application_default_credentials=False"], False),
        ("gke-gcloud-auth-plugin", ["--use_application_default_credentials=maybe"], None),
        ("gke-gcloud-auth-plugin", ["--impersonate_service_account=sa@p.iam.gserviceaccount.com"], None),
        ("gke-gcloud-auth-plugin", ["--account", "me@example.com"], None),
        ("gke-gcloud-auth-plugin", ["--use_edge_cloud", "--project=p", "--location=l", "--cluster=c"], None),
        ("gke-gcloud-auth-plugin", ["--use_application_default_credentials", "true"], None),  # a positional
        ("gke-gcloud-auth-plugin", ["--version"], None),
        ("gcloud", ["config", "config-helper", "--format=json"], None),
    ],
)
def test_which_gke_plugin_commands_are_minted(command: str, args: list[str], adc: bool | None) -> None:
    wanted = None if adc is None else gke.Request("gke-gcloud-auth-plugin", adc)
    assert gke.parse(command.rsplit("/", 1)[-1], args) == wanted
    assert (cloud.minter({"command": command, "args": args}) is None) == (wanted is None)


def mint(environ: dict[str, str], *, adc: bool = True, timeout: float = 5) -> str:
    """The one line minting fails with."""
    with pytest.raises(KubeConfigError) as e:
        gke.mint(
            gke.Request(gke.COMMAND, adc), exec_cfg={"installHint": HINT}, timeout=timeout, environ=environ
        )
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith(
        "kubeconfig exec plugin 'gke-gcloud-auth-plugin' is not installed (not found on PATH) and its "
        "GKE access token could not be minted in-process"
    ), text
    # the hint as plugins.failure shows it (its long URL path is masked like anything token-like)
    assert (
        "(Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/"
        "kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin)" in text
    )
    return text


def test_no_credentials_anywhere_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from google.auth.compute_engine import _metadata

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    asked: list[object] = []
    monkeypatch.setattr(_metadata, "is_on_gce", lambda request: asked.append(request) or False)
    text = mint({"HOME": str(tmp_path), "CLOUDSDK_CONFIG": str(tmp_path / "gcloud")})
    assert "found no Google credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's" in text
    assert len(asked) == 1  # the metadata server was the last place looked
    assert capsys.readouterr().err == ""  # google-auth's own warning is not printed


def test_an_unreadable_credentials_file_is_named_never_shown(tmp_path: Path) -> None:
    secret = "-----BEGIN PRIVATE KEY-----not json at all, but secret"
    bad = tmp_path / "creds.json"
    bad.write_text(secret)
    text = mint({"GOOGLE_APPLICATION_CREDENTIALS": str(bad)})
    assert f'GOOGLE_APPLICATION_CREDENTIALS "{bad}" is not JSON' in text and "secret" not in text
    text = mint({"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json")})
    assert "cannot be read (No such file or directory)" in text
    bad.write_text(json.dumps({"type": "service_account", "private_key": "not a key", "client_email": "x"}))
    text = mint({"GOOGLE_APPLICATION_CREDENTIALS": str(bad)})
    assert "the file is not a credential google-auth can load" in text and "not a key" not in text


def test_gclouds_credential_file_override_is_what_gcloud_mode_reads(tmp_path: Path) -> None:
    (tmp_path / "gcloud.json").write_text("{")
    (tmp_path / "adc.json").write_text("[]")
    env = {
        "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE": str(tmp_path / "gcloud.json"),
        "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "adc.json"),
    }
    assert "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE" in mint(env, adc=False)
    assert "GOOGLE_APPLICATION_CREDENTIALS" in mint(env, adc=True)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    server.close()


def test_a_token_endpoint_that_never_answers_ends_within_the_timeout(
    silent_server: int, tmp_path: Path
) -> None:
    subject = tmp_path / "oidc-token"
    subject.write_text("header.payload.signature")
    creds = tmp_path / "wif.json"
    creds.write_text(
        json.dumps(
            {
                "type": "external_account",
                "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
                "token_url": f"http://127.0.0.1:{silent_server}/v1/token",
                "credential_source": {"file": str(subject)},
            }
        )
    )
    started = time.monotonic()
    text = mint({"GOOGLE_APPLICATION_CREDENTIALS": str(creds)}, timeout=0.5)
    assert time.monotonic() - started < 3
    assert f"127.0.0.1:{silent_server} did not answer within 0.5s" in text
    assert "Workload Identity Federation, subject token from a file" in text
