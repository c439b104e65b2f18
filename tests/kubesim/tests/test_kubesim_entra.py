"""kubesim's Microsoft Entra ID (apiserver/entra.py): the token endpoint grants the test app's
client credentials (its secret, or a federated token kubesim signed) and refuses anything else
with Entra's AADSTS errors; the API server accepts only tokens issued for the cluster's server id."""

from __future__ import annotations

import ssl
import time

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.kubesim import Cluster, Knobs
from tests.kubesim.apiserver.entra import (
    AKS_OIDC_ISSUER,
    AKS_SERVER_ID,
    AKS_SUBJECT,
    ARM_RESOURCE,
    GITHUB_REQUEST_TOKEN,
    IDENTITY_HEADER,
    JWT_BEARER,
    MSI_CLIENT_ID,
    MSI_OBJECT_ID,
    TEST_CLIENT_ID,
    TEST_CLIENT_SECRET,
    TEST_OBJECT_ID,
    TEST_TENANT_ID,
    Entra,
    Refused,
)


@pytest.fixture(scope="module")
def entra() -> Entra:
    return Entra(AKS_SERVER_ID)


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(aks_server_id=AKS_SERVER_ID)


def secret_form(secret: str = TEST_CLIENT_SECRET, *, scope: str = f"{AKS_SERVER_ID}/.default") -> dict[str, str]:
    return {"grant_type": "client_credentials", "client_id": TEST_CLIENT_ID, "client_secret": secret, "scope": scope}


def assertion_form(assertion: str, *, kind: str = JWT_BEARER) -> dict[str, str]:
    return {
        "grant_type": "client_credentials",
        "client_id": TEST_CLIENT_ID,
        "client_assertion_type": kind,
        "client_assertion": assertion,
        "scope": f"{AKS_SERVER_ID}/.default",
    }


def refusal(entra: Entra, form: dict[str, str], tenant: str = TEST_TENANT_ID) -> tuple[int, str, int]:
    issued = len(entra.issued)
    status, body = entra.token(tenant, form)
    assert "access_token" not in body and len(entra.issued) == issued
    assert body["error_description"].startswith(f"AADSTS{body['error_codes'][0]}: ")
    return status, body["error"], body["error_codes"][0]


def test_the_apps_secret_gets_a_token_the_cluster_accepts(entra: Entra) -> None:
    status, body = entra.token(TEST_TENANT_ID, secret_form())
    assert status == 200 and body["token_type"] == "Bearer" and body["expires_in"] == 3599
    oid, user, groups, expires = entra.authenticate(body["access_token"]) or ("", "", [], 0.0)
    assert (oid, user, groups) == (TEST_OBJECT_ID, TEST_OBJECT_ID, ["system:masters"])
    assert 3500 < expires - time.time() <= 3599


def test_a_wrong_secret_is_refused_as_invalid_client(entra: Entra) -> None:
    assert refusal(entra, secret_form("kubesim~Entra.Test-Secret_0000000000000002")) == (401, "invalid_client", 7000215)
    assert entra.refused[-1] == "AADSTS7000215: Invalid client secret provided."
    form = secret_form()
    del form["client_secret"]
    assert refusal(entra, form) == (401, "invalid_client", 7000218)


def test_a_federated_token_kubesim_signed_is_exchanged(entra: Entra) -> None:
    for token in (entra.federated_token(), entra.federated_token(issuer=AKS_OIDC_ISSUER, subject=AKS_SUBJECT)):
        status, body = entra.token(TEST_TENANT_ID, assertion_form(token))
        assert status == 200, body
        assert entra.authenticate(body["access_token"]) is not None


def test_forged_foreign_or_stale_assertions_are_refused(entra: Entra) -> None:
    forged = entra.federated_token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048))
    assert refusal(entra, assertion_form(forged)) == (400, "invalid_client", 700027)
    tampered = entra.federated_token().split(".")
    other = entra.federated_token(subject="repo:evil/fork:ref:refs/heads/main").split(".")
    assert refusal(entra, assertion_form(".".join([tampered[0], other[1], tampered[2]])))[2] == 700027
    assert refusal(entra, assertion_form(entra.federated_token(issuer="https://evil.example")))[2] == 700211
    assert refusal(entra, assertion_form(entra.federated_token(audience="https://github.com/acme")))[2] == 700212
    assert refusal(entra, assertion_form(entra.federated_token(subject="repo:acme/shop:pull_request")))[2] == 700213
    assert refusal(entra, assertion_form(entra.federated_token(lifetime=-600)))[2] == 700024
    assert refusal(entra, assertion_form("not.a.jwt"))[2] == 50027
    assert refusal(entra, assertion_form(entra.federated_token(), kind="client_secret"))[2] == 900144


def test_requests_outside_the_tenants_app_and_resources_are_refused(entra: Entra) -> None:
    assert refusal(entra, secret_form(), tenant="common")[2] == 90002
    assert refusal(entra, {**secret_form(), "client_id": "00000000-0000-0000-0000-000000000000"})[2] == 700016
    assert refusal(entra, {**secret_form(), "grant_type": "password"})[2] == 70003
    assert refusal(entra, secret_form(scope=AKS_SERVER_ID))[2] == 1002012
    assert refusal(entra, secret_form(scope="api://unknown/.default"))[2] == 500011


def test_a_token_for_another_resource_does_not_authenticate_to_the_cluster(entra: Entra) -> None:
    status, body = entra.token(TEST_TENANT_ID, secret_form(scope=f"{ARM_RESOURCE}/.default"))
    assert status == 200
    with pytest.raises(Refused, match="not the cluster's server id"):
        entra.authenticate(body["access_token"])
    assert entra.authenticate("kubesim-entra.never-issued") is None


def test_the_managed_identity_and_github_endpoints_check_their_secrets(entra: Entra) -> None:
    query = {"api-version": "2019-08-01", "resource": AKS_SERVER_ID, "client_id": MSI_CLIENT_ID}
    assert entra.msi(query, "wrong-header")[0] == 401
    assert entra.msi({**query, "client_id": TEST_CLIENT_ID}, IDENTITY_HEADER)[0] == 400
    status, body = entra.msi(query, IDENTITY_HEADER)
    assert status == 200 and int(body["expires_on"]) > time.time()
    assert (entra.authenticate(body["access_token"]) or ("",))[0] == MSI_OBJECT_ID
    assert entra.github({"audience": "api://AzureADTokenExchange"}, "bearer wrong")[0] == 401
    status, body = entra.github({"audience": "api://AzureADTokenExchange"}, f"bearer {GITHUB_REQUEST_TOKEN}")
    assert status == 200 and entra.token(TEST_TENANT_ID, assertion_form(body["value"]))[0] == 200


def test_entra_is_served_on_kubesims_port_beside_the_api_server(cluster: Cluster) -> None:
    base = f"https://127.0.0.1:{cluster.port}"
    with httpx.Client(verify=ssl.create_default_context(cafile=str(cluster.ca_path))) as http:
        document = http.get(f"{base}/{TEST_TENANT_ID}/v2.0/.well-known/openid-configuration").json()
        assert document["token_endpoint"] == f"{base}/{TEST_TENANT_ID}/oauth2/v2.0/token"
        assert http.get(f"{base}/common/v2.0/.well-known/openid-configuration").status_code == 400
        good = http.post(document["token_endpoint"], data=secret_form()).json()["access_token"]
        arm = http.post(document["token_endpoint"], data=secret_form(scope=f"{ARM_RESOURCE}/.default"))
        bad = http.post(document["token_endpoint"], data=secret_form("wrong-secret-0000000001"))
        assert bad.status_code == 401 and bad.json()["error"] == "invalid_client"
        assert cluster.requests.total() == 0  # Entra's requests are not the API server's
        namespaces = f"{base}/api/v1/namespaces"
        assert http.get(namespaces, headers={"Authorization": f"Bearer {good}"}).status_code == 200
        other = arm.json()["access_token"]
        assert http.get(namespaces, headers={"Authorization": f"Bearer {other}"}).status_code == 401
    assert any("not the cluster's server id" in r for r in cluster.call(lambda: list(cluster.auth.refused)))
    assert cluster.auth.entra is not None and cluster.auth.entra.served == {"openid": 2, "token": 3}
