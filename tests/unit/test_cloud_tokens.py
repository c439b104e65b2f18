"""verify.kube.cloud: which exec plugins are minted in-process, and the EKS token's shape."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from botocore.stub import Stubber

from verify.errors import KubeConfigError
from verify.kube import cloud
from verify.kube.cloud import eks

KEYS = {"AWS_ACCESS_KEY_ID": "AKIAUNITTEST0000001", "AWS_SECRET_ACCESS_KEY": "unit/test+secret/0000000001"}


@pytest.mark.parametrize(
    ("command", "args", "wanted"),
    [
        (
            "aws",
            ["--region", "eu-west-1", "eks", "get-token", "--cluster-name", "shop", "--output", "json"],
            eks.Request("aws", "shop", "eu-west-1"),
        ),
        (
            "/usr/local/bin/aws",
            ["eks", "get-token", "--cluster-name=shop", "--role-arn", "arn:aws:iam::1:role/r"],
            eks.Request("aws", "shop", None, "arn:aws:iam::1:role/r"),
        ),
        (
            "aws",
            ["eks", "get-token", "--cluster-id", "c-123", "--profile", "ci"],
            eks.Request("aws", "c-123", profile="ci"),
        ),
        (
            "aws-iam-authenticator",
            ["token", "-i", "shop", "-r", "arn:aws:iam::1:role/r"],
            eks.Request("aws-iam-authenticator", "shop", None, "arn:aws:iam::1:role/r"),
        ),
        ("aws", ["eks", "get-token"], None),  # no cluster
        (
            "aws",
            ["eks", "get-token", "--cluster-name", "shop", "--endpoint-url", "x"],
            None,
        ),  # not understood
        ("aws", ["sts", "get-caller-identity"], None),
        ("kubelogin", ["get-token", "--login", "spn"], None),
    ],
)
def test_which_plugins_are_minted(command: str, args: list[str], wanted: eks.Request | None) -> None:
    assert eks.parse(command.rsplit("/", 1)[-1], args) == wanted
    assert (cloud.minter({"command": command, "args": args}) is None) == (wanted is None)


def test_the_token_is_a_presigned_get_caller_identity_for_the_cluster() -> None:
    mint = cloud.minter(
        {
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", "shop"],
            "env": [{"name": "AWS_REGION", "value": "eu-central-1"}],
        }
    )
    assert mint is not None
    credential = mint(timeout=5, environ=KEYS)
    assert credential.token.startswith("k8s-aws-v1.") and "=" not in credential.token
    body = credential.token[len("k8s-aws-v1.") :]
    url = urlsplit(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode())
    query = parse_qs(url.query)
    assert url.netloc == "sts.eu-central-1.amazonaws.com"  # the plugin's env applies
    assert query["Action"] == ["GetCallerIdentity"] and query["X-Amz-Expires"] == ["60"]
    assert query["X-Amz-SignedHeaders"] == ["host;x-k8s-aws-id"]
    assert credential.expires is not None
    assert KEYS["AWS_SECRET_ACCESS_KEY"] not in credential.origin and "shop" in credential.origin


def test_a_role_is_assumed_before_signing(monkeypatch: pytest.MonkeyPatch) -> None:
    import botocore.session

    made: list[Any] = []
    real = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kw: Any) -> Any:
        client = real(self, *args, **kw)
        stub = Stubber(client)
        stub.add_response(
            "assume_role",
            {
                "Credentials": {
                    "AccessKeyId": "ASIAROLE000000000001",
                    "SecretAccessKey": "role-secret",
                    "SessionToken": "role-session",
                    "Expiration": "2099-01-01T00:00:00Z",
                }
            },
            {"RoleArn": "arn:aws:iam::111122223333:role/deploy", "RoleSessionName": stub_any()},
        )
        stub.activate()
        made.append(stub)
        return client

    monkeypatch.setattr(botocore.session.Session, "create_client", create_client)
    request = eks.Request("aws", "shop", "eu-west-1", "arn:aws:iam::111122223333:role/deploy")
    credential = eks.mint(request, exec_cfg={}, timeout=5, environ=KEYS)
    body = credential.token[len("k8s-aws-v1.") :]
    query = parse_qs(urlsplit(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()).query)
    assert query["X-Amz-Credential"][0].startswith("ASIAROLE000000000001/")
    assert query["X-Amz-Security-Token"] == ["role-session"]
    made[0].assert_no_pending_responses()
    assert "as role arn:aws:iam::111122223333:role/deploy" in credential.origin


def stub_any() -> Any:
    from botocore.stub import ANY

    return ANY


def test_no_credentials_is_one_line_naming_the_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-role lookup: loopback only
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(KubeConfigError) as e:
        eks.mint(
            eks.Request("aws", "shop", "eu-west-1"),
            exec_cfg={"installHint": "Install the AWS CLI"},
            timeout=5,
            environ={},
        )
    text = str(e.value)
    assert "'aws' is not installed (not found on PATH) and its EKS token for cluster 'shop'" in text
    assert "found no AWS credentials" in text and "(Install the AWS CLI)" in text and "\n" not in text


def test_an_install_hints_link_is_shown_whole_and_anything_token_like_beside_it_masked() -> None:
    from verify.kube.plugins import shown_hint

    line = shown_hint(
        "see https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin"
        " or use Bearer short-tok-9 and https://x.example/a?token=abcdefabcdefabcdefabcdefabcdefabcdef"
    )
    assert "cluster-access-for-kubectl#install_plugin" in line
    assert "abcdefabcdefabcdefabcdefabcdef" not in line and "short-tok-9" not in line


def test_a_plugins_error_text_masks_named_secrets_however_short() -> None:
    from verify.kube.plugins import shown

    line = shown(
        "password: hunter2-supersecret client_secret=Q~abc.def_ghi12 "
        '{"access_token":"ya29.short", "expires_in": 3599} x-api-key: sk_live_51H token=abc&user=me'
    )
    for secret in ("hunter2", "Q~abc", "ya29.short", "sk_live", "abc&"):
        assert secret not in line, line
    assert "expires_in" in line and "3599" in line and "user=me" in line
