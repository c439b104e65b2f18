"""Kubeconfig content from a CI secret: decoding, what gets masked, the 0600 temp file."""

from __future__ import annotations

import base64
import json
import os
import stat

import pytest

from verify.kube import kubeconfig as credentials

TOKEN = "tok-3f9a1c0b7d2e48a6"
KEY = base64.b64encode(b"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n").decode()
YAML = f"""apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: "https://127.0.0.1:6443", certificate-authority-data: Q0FDRVJU}}
users:
- name: sa
  user:
    token: {TOKEN}
- name: cert
  user: {{client-certificate-data: Q0VSVA==, client-key-data: {KEY}}}
- name: oidc
  user:
    exec:
      command: login
      env: [{{name: LOGIN_TOKEN, value: exec-env-secret-1}}, {{name: MODE, value: quiet-mode}}]
contexts:
- name: c
  context: {{cluster: c, user: sa}}
current-context: c
"""


def test_yaml_json_and_base64_content_all_decode_to_a_kubeconfig() -> None:
    as_json = json.dumps(
        {"apiVersion": "v1", "clusters": [], "users": [{"name": "x", "user": {"token": TOKEN}}]}
    )
    assert credentials.decode(data=YAML).startswith("apiVersion: v1")
    assert json.loads(credentials.decode(data=as_json))["users"][0]["user"]["token"] == TOKEN
    wrapped = base64.encodebytes(YAML.encode()).decode()  # with line breaks, as `base64` prints it
    assert credentials.decode(data=wrapped) == YAML


@pytest.mark.parametrize(
    "data",
    [
        "",
        "just-a-word",
        "key: [unclosed\n  token: " + TOKEN,
        "bm90IGEga3ViZWNvbmZpZw==",
        "\x80x",
        "kübeconfig",
    ],
)
def test_bad_content_is_rejected_without_quoting_it(data: str) -> None:
    with pytest.raises(credentials.KubeconfigDataError) as info:
        credentials.decode(data=data)
    assert TOKEN not in str(info.value)
    if data.strip():
        assert data.strip() not in str(info.value)


def test_token_like_values_are_found_for_masking() -> None:
    values = credentials.secret_values(text=YAML)
    assert TOKEN in values and KEY in values and "exec-env-secret-1" in values
    assert (
        "Q0VSVA==" not in values and "quiet-mode" not in values
    )  # certificates and plain env are not secrets
    encoded = base64.b64encode(YAML.encode()).decode()
    assert credentials.mask_values(data=encoded)[0] == encoded  # the secret as stored is masked too
    assert TOKEN in credentials.mask_values(data=encoded)


def test_a_client_secret_in_exec_args_is_masked_but_not_the_other_arguments() -> None:
    # `kubelogin convert-kubeconfig -l spn --client-secret S` writes the secret into the args
    text = """users:
- name: aks
  user:
    exec:
      command: kubelogin
      args: [get-token, --login, spn, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630,
             --client-secret, spn~secret-value-1, --password=ropc-password-1,
             --federated-token-file, /var/run/secrets/azure/tokens/azure-identity-token]
"""
    values = credentials.secret_values(text=text)
    assert sorted(values) == ["ropc-password-1", "spn~secret-value-1"]


def test_materialized_file_is_private_and_removed_afterwards() -> None:
    with credentials.materialized(text=YAML) as path:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode == 0o600
        with open(path) as fh:
            assert fh.read() == YAML
    assert not os.path.exists(path)


def test_materialized_file_is_removed_when_the_run_raises() -> None:
    with pytest.raises(RuntimeError), credentials.materialized(text=YAML) as path:
        raise RuntimeError("boom")
    assert not os.path.exists(path)


class _AskCounter:
    """Stands in for a credential's source (a token file re-read, a plugin asked): counts the asks."""

    def __init__(self) -> None:
        self.asks = 0

    def __call__(self) -> str:
        self.asks += 1
        return f"Bearer t{self.asks}"


def test_a_credential_is_asked_for_at_most_once_per_ttl() -> None:
    from verify.kube.credentials import Credentials

    source = _AskCounter()
    token = Credentials(origin="a test token", fix="", read=source, ttl=60.0)
    assert [token.authorization() for _ in range(200)] == ["Bearer t1"] * 200
    assert source.asks == 1


def test_a_credential_is_asked_again_once_the_ttl_has_passed() -> None:
    from verify.kube.credentials import Credentials

    source = _AskCounter()
    token = Credentials(origin="a test token", fix="", read=source, ttl=0.0)
    assert [token.authorization(), token.authorization()] == ["Bearer t1", "Bearer t2"]
