"""kubesim's EKS authenticator (apiserver/eks.py) against tokens presigned by botocore: a genuine
one authenticates; one whose URL, cluster, date, region or key was tampered with is refused."""

from __future__ import annotations

import base64
import datetime as dt
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tests.kubesim.apiserver.eks import (
    TEST_ACCESS_KEY_ID,
    TEST_ARN,
    TEST_SECRET_ACCESS_KEY,
    EksAuthenticator,
    Refused,
    signing_key,
)


def presigned(
    *,
    cluster: str = "shop",
    region: str = "eu-west-1",
    secret: str = TEST_SECRET_ACCESS_KEY,
    sign_cluster: bool = True,
    action: str = "GetCallerIdentity",
) -> str:
    req = AWSRequest(
        method="GET",
        url=f"https://sts.{region}.amazonaws.com/?Action={action}&Version=2011-06-15",
        headers={"x-k8s-aws-id": cluster} if sign_cluster else {},
    )
    SigV4QueryAuth(Credentials(TEST_ACCESS_KEY_ID, secret), "sts", region, expires=60).add_auth(req)
    return str(req.url)


def token(url: str) -> str:
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


def with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(changes)
    return urlunsplit(parts._replace(query=urlencode(query)))


def refusal(tok: str, **kw: dt.datetime) -> str:
    with pytest.raises(Refused) as e:
        EksAuthenticator("shop").verify(tok, **kw)
    return str(e.value)


def test_the_signing_key_derivation_matches_the_published_example() -> None:
    # AWS's example of deriving a SigV4 signing key (IAM, us-east-1, 2012-02-15)
    key = signing_key(
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", date="20120215", region="us-east-1", service="iam"
    )
    assert key.hex() == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"


def test_a_genuine_token_authenticates_as_the_mapped_iam_identity() -> None:
    arn, user, groups, _ = EksAuthenticator("shop").verify(token(presigned()))
    assert (arn, user, groups) == (TEST_ARN, "ci", ["system:masters"])
    assert "X-Amz-SignedHeaders=host%3Bx-k8s-aws-id" in presigned()  # what botocore's presign signs


def test_tampered_or_foreign_tokens_are_refused() -> None:
    url = presigned()
    assert "SignatureDoesNotMatch" in refusal(token(presigned(cluster="other")))
    assert "SignatureDoesNotMatch" in refusal(token(presigned(secret="not-the-secret")))
    assert "SignatureDoesNotMatch" in refusal(token(with_query(url, Version="2011-06-16")))
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)).strftime("%Y%m%dT%H%M%SZ")
    assert "SignatureDoesNotMatch" in refusal(token(with_query(url, **{"X-Amz-Date": later})))
    assert "did not sign the x-k8s-aws-id" in refusal(token(presigned(sign_cluster=False)))
    assert "unexpected action" in refusal(token(presigned(action="AssumeRole")))
    assert "unexpected hostname" in refusal(token(url.replace("amazonaws.com", "amazonaws.com.evil.example")))
    assert "scope" in refusal(token(url.replace("sts.eu-west-1.", "sts.eu-west-2.")))
    assert "non-whitelisted" in refusal(token(with_query(url, extra="1")))
    assert "prefix" in refusal(token(url)[len("k8s-aws-v1.") :])
    assert "padded" in refusal(token(url) + "==")


def test_a_token_lives_fifteen_minutes_after_its_date() -> None:
    tok = token(presigned())
    now = dt.datetime.now(dt.UTC)
    EksAuthenticator("shop").verify(tok, now=now + dt.timedelta(minutes=14))
    assert "expired" in refusal(tok, now=now + dt.timedelta(minutes=16))
