"""kubesim's Google endpoints (apiserver/gke.py): a GitHub ID token is exchanged for its federated
principal, which may impersonate the service account its repository is bound to; a service-account
key's assertion and a user's refresh token get access tokens; tokens signed by another key, for
another audience or repository, or expired, are refused; GKE's apiserver names an access token's
identity by its email only with the userinfo.email scope. The endpoint logic is called directly,
then once over HTTPS as google-auth calls it."""

from __future__ import annotations

import ssl
import time
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.kubesim import Cluster, Knobs
from tests.kubesim.apiserver.gke import (
    OAUTH2_AUDIENCE,
    PROVIDER_NAME,
    SCOPE_CLOUD,
    SCOPE_EMAIL,
    TEST_USER,
    TOKEN_EXCHANGE,
    GoogleSim,
    Refused,
    sign_jwt,
    unique_id,
)

SCOPES = [SCOPE_CLOUD, SCOPE_EMAIL]


@pytest.fixture(scope="module")
def sim() -> GoogleSim:
    return GoogleSim()


@pytest.fixture(scope="module")
def other_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def exchange_form(sim: GoogleSim, subject: str, **changes: str) -> dict[str, str]:
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "audience": sim.audience,
        "scope": " ".join(SCOPES),
        "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "subject_token": subject,
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
    }
    return {**form, **changes}


def refusal(call: Any, *args: Any, **kw: Any) -> tuple[int, str]:
    """(HTTP status, OAuth error code or API status: its description or message)."""
    with pytest.raises(Refused) as e:
        call(*args, **kw)
    error = e.value.body.get("error")
    if isinstance(error, dict):
        return e.value.status, f"{error['status']}: {error['message']}"
    return e.value.status, f"{error}: {e.value.body.get('error_description')}"


def test_a_github_token_is_exchanged_and_impersonates_the_bound_service_account(sim: GoogleSim) -> None:
    federated = sim.exchange(exchange_form(sim, sim.oidc_token()))["access_token"]
    name, groups, _ = sim.user(federated) or ("", [], 0.0)
    assert name.startswith("principal://iam.googleapis.com/projects/") and name.endswith(
        "/subject/repo:shop/app:ref:refs/heads/main"
    )
    assert groups == []  # the principal itself is bound to nothing in the cluster
    answer = sim.generate_access_token(
        sim.service_account, authorization=f"Bearer {federated}", body={"scope": SCOPES, "lifetime": "3600s"}
    )
    assert answer["expireTime"].endswith("Z")
    assert sim.user(answer["accessToken"])[:2] == (sim.service_account, ["system:masters"])  # type: ignore[index]


def test_subject_tokens_that_are_forged_foreign_or_stale_are_refused(
    sim: GoogleSim, other_key: rsa.RSAPrivateKey
) -> None:
    forged = sim.oidc_token(key=other_key)
    assert refusal(sim.exchange, exchange_form(sim, forged)) == (400, "invalid_grant: Invalid JWT Signature.")
    assert refusal(sim.exchange, exchange_form(sim, "not-a-jwt"))[1].startswith("invalid_grant: Invalid JWT")
    wrong_audience = sim.oidc_token(audience="https://iam.googleapis.com/projects/1/other")
    assert (
        "audience in ID Token does not match" in refusal(sim.exchange, exchange_form(sim, wrong_audience))[1]
    )
    other_repo = sim.oidc_token(repository="someone/else")
    assert refusal(sim.exchange, exchange_form(sim, other_repo))[1] == (
        "unauthorized_client: The given credential is rejected by the attribute condition."
    )
    expired = sim.oidc_token(lifetime=-1)
    assert refusal(sim.exchange, exchange_form(sim, expired))[1] == "invalid_grant: ID Token has expired."
    good = sim.oidc_token()
    assert refusal(sim.exchange, exchange_form(sim, good, audience="//iam.googleapis.com/x"))[1].startswith(
        "invalid_target"
    )
    assert refusal(sim.exchange, exchange_form(sim, good, grant_type="password"))[1].startswith(
        "unsupported_grant_type"
    )
    assert refusal(sim.exchange, exchange_form(sim, good, scope=""))[1].startswith("invalid_scope")


def test_impersonation_needs_a_known_caller_bound_to_the_service_account(sim: GoogleSim) -> None:
    body = {"scope": SCOPES}
    assert (
        refusal(
            sim.generate_access_token, sim.service_account, authorization="Bearer ya29.unknown", body=body
        )[0]
        == 401
    )
    stranger = sim._issue(
        "principal://elsewhere", frozenset(SCOPES), email=False, attributes={"repository": "x/y"}
    )
    status, said = refusal(
        sim.generate_access_token, sim.service_account, authorization=f"Bearer {stranger}", body=body
    )
    assert (status, said.split(":")[0]) == (403, "PERMISSION_DENIED")
    federated = sim.exchange(exchange_form(sim, sim.oidc_token()))["access_token"]
    assert (
        refusal(
            sim.generate_access_token,
            "nobody@x.iam.gserviceaccount.com",
            authorization=f"Bearer {federated}",
            body=body,
        )[0]
        == 404
    )


def assertion(sim: GoogleSim, key: rsa.RSAPrivateKey | None = None, **changes: Any) -> str:
    now = int(time.time())
    claims = {
        "iss": sim.service_account,
        "aud": OAUTH2_AUDIENCE,
        "scope": " ".join(SCOPES),
        "iat": now,
        "exp": now + 3600,
    }
    return sign_jwt(key or sim.sa_key, {**claims, **changes}, kid=sim.sa_key_id)


def test_a_service_account_assertion_must_be_signed_by_its_key(
    sim: GoogleSim, other_key: rsa.RSAPrivateKey
) -> None:
    def grant(jwt: str) -> dict[str, Any]:
        return sim.oauth2_token(
            {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": jwt}
        )

    token = grant(assertion(sim))["access_token"]
    assert sim.user(token)[:2] == (sim.service_account, ["system:masters"])  # type: ignore[index]
    assert refusal(grant, assertion(sim, other_key)) == (400, "invalid_grant: Invalid JWT Signature.")
    assert refusal(grant, assertion(sim, aud="https://example.com/token"))[1].endswith(
        "Failed audience check."
    )
    assert "short-lived" in refusal(grant, assertion(sim, exp=int(time.time()) + 7200))[1]
    assert refusal(grant, assertion(sim, iss="other@x.iam.gserviceaccount.com"))[1].startswith(
        "invalid_grant"
    )


def test_a_refresh_token_needs_its_client(sim: GoogleSim) -> None:
    form = {
        "grant_type": "refresh_token",
        "client_id": sim.client_id,
        "client_secret": sim.client_secret,
        "refresh_token": sim.refresh_token,
    }
    assert sim.user(sim.oauth2_token(form)["access_token"])[:2] == (TEST_USER, ["system:masters"])  # type: ignore[index]
    assert refusal(sim.oauth2_token, {**form, "client_secret": "nope"})[0] == 401
    assert refusal(sim.oauth2_token, {**form, "refresh_token": "1//revoked"})[1] == (
        "invalid_grant: Token has been expired or revoked."
    )


def test_without_the_userinfo_email_scope_a_service_account_is_its_numeric_id(sim: GoogleSim) -> None:
    token = sim.oauth2_token(
        {
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
            "assertion": assertion(sim, scope=SCOPE_CLOUD),
        }
    )["access_token"]
    assert sim.user(token)[:2] == (unique_id(sim.service_account), [])  # type: ignore[index]
    sim.issued[token].expires = time.time() - 1
    assert sim.user(token) is None


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(gke_project="kubesim-shop")


def test_google_auth_gets_tokens_over_https_and_the_apiserver_accepts_them(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import google.oauth2.credentials
    import httpx
    from google.auth import exceptions, identity_pool
    from google.auth.transport.requests import Request
    from google.oauth2 import service_account

    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cluster.ca_path))
    gke = cluster.auth.gke
    assert gke is not None
    token_file = tmp_path / "oidc"
    token_file.write_text(gke.oidc_token())
    monkeypatch.setattr(google.oauth2.credentials, "_GOOGLE_OAUTH2_TOKEN_ENDPOINT", gke.oauth2_url)
    made = [
        identity_pool.Credentials.from_info(gke.external_account_info(), scopes=SCOPES),
        identity_pool.Credentials.from_info(
            gke.external_account_info(token_file=str(token_file)), scopes=SCOPES
        ),
        service_account.Credentials.from_service_account_info(gke.service_account_info(), scopes=SCOPES),
        google.oauth2.credentials.Credentials.from_authorized_user_info(gke.authorized_user_info()),
    ]
    for credentials in made:
        credentials.refresh(Request())
        answer = httpx.get(
            f"{cluster.url}/api/v1/namespaces/default/pods",
            headers={"Authorization": f"Bearer {credentials.token}"},
            verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
        )
        assert answer.status_code == 200, answer.text
    assert cluster.call(lambda: dict(gke.calls)) == {"github": 1, "sts": 2, "iam": 2, "oauth2": 2}
    token_file.write_text(gke.oidc_token(repository="someone/else"))
    refused = identity_pool.Credentials.from_info(
        gke.external_account_info(token_file=str(token_file)), scopes=SCOPES
    )
    with pytest.raises(exceptions.OAuthError) as e:
        refused.refresh(Request())
    assert "rejected by the attribute condition" in str(e.value)
    assert cluster.call(lambda: [r.split(":")[0] for r in gke.refused]) == ["POST /v1/token"]
    assert PROVIDER_NAME in gke.audience
