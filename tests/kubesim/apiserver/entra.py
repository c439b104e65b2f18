"""kubesim as an AKS cluster's Microsoft Entra ID, served on kubesim's own HTTPS port (so
`AZURE_AUTHORITY_HOST=https://127.0.0.1:<port>/`, or kubelogin's `--authority-host`, points at it):

- `GET /{tenant}/v2.0/.well-known/openid-configuration`: the tenant's OpenID discovery document,
  which MSAL reads before its first token request (msal/authority.py, tenant discovery). MSAL's
  instance discovery (login.microsoftonline.com/common/discovery/instance) is never asked for: the
  kubeconfigs of the tests say `--disable-instance-discovery`, as kubelogin needs for any authority
  Microsoft's instance discovery does not know.
- `POST /{tenant}/oauth2/v2.0/token`: the v2.0 client credentials grant ("Microsoft identity
  platform and the OAuth 2.0 client credentials flow" on learn.microsoft.com) with a `client_secret`
  or a `client_assertion` (urn:ietf:params:oauth:client-assertion-type:jwt-bearer) that is a
  federated token ("Workload identity federation": its issuer, subject and audience must match one
  of the app's federated identity credentials). The errors are Entra's: `error`, an
  `error_description` starting with its AADSTS code, `error_codes`.
- `GET /msi/token`: App Service's managed identity endpoint (api-version 2019-08-01, header
  X-IDENTITY-HEADER; msal/managed_identity.py _obtain_token_on_app_service), for IDENTITY_ENDPOINT.
- `GET /github/oidc/token`: GitHub Actions' ID token endpoint (ACTIONS_ID_TOKEN_REQUEST_URL, bearer
  ACTIONS_ID_TOKEN_REQUEST_TOKEN, `audience` query; "About security hardening with OpenID Connect").

The federated tokens (GitHub's, or an AKS projected service account token) are JWTs kubesim
signs itself (RS256 with a key of its own, `cryptography` only) and checks itself: real Entra
fetches the issuer's keys through its OpenID discovery; the client side uses azure-identity, so
checking with it would prove nothing. Access tokens are opaque; the API server accepts one (as
the cluster's Entra authentication does) only if it was issued for the cluster's server id, as
the mapped user of the identity's object id."""

from __future__ import annotations

import base64
import hmac
import json
import re
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

# AKS-managed Entra integration's server application: the audience of every AKS cluster's tokens
AKS_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
ARM_RESOURCE = "https://management.azure.com"  # another resource: its tokens are not the cluster's
TEST_TENANT_ID = "72f9a0c1-5b3e-4d6a-9e8f-0a1b2c3d4e5f"
# the test app registration (its service principal): a client secret and two federated credentials
TEST_CLIENT_ID = "3c1a9f0e-2b4d-4e6f-8a1b-c2d3e4f5a6b7"
TEST_CLIENT_SECRET = "kubesim~Entra.Test-Secret_0000000000000001"
TEST_OBJECT_ID = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
GITHUB_SUBJECT = "repo:acme/shop:environment:production"
GITHUB_REQUEST_TOKEN = "kubesim-actions-id-token-request-0001"
AKS_OIDC_ISSUER = (
    f"https://westeurope.oic.prod-aks.azure.com/{TEST_TENANT_ID}/0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/"
)
AKS_SUBJECT = "system:serviceaccount:ci:deployer"
# the managed identity behind /msi/token: user-assigned (by client id or resource id) or the
# system-assigned one when none is named
MSI_CLIENT_ID = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"
MSI_RESOURCE_ID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/ci/providers/Microsoft.ManagedIdentity/userAssignedIdentities/deployer"
MSI_OBJECT_ID = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
SYSTEM_MSI_OBJECT_ID = "6f5e4d3c-2b1a-4f0e-9d8c-7b6a5f4e3d2c"
IDENTITY_HEADER = "kubesim-identity-header-0001"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
EXPIRES_IN = 3599  # what Entra answers for an app token
CLOCK_SKEW = 300

_OPENID = re.compile(r"^/(?P<tenant>[^/]+)/v2\.0/\.well-known/openid-configuration$")
_TOKEN = re.compile(r"^/(?P<tenant>[^/]+)/oauth2/v2\.0/token$")


class Refused(Exception):
    """Entra's answer to a refused request: the OAuth error, its AADSTS code and description."""

    def __init__(self, error: str, code: int, description: str, *, status: int = 400) -> None:
        super().__init__(f"AADSTS{code}: {description}")
        self.error, self.code, self.description, self.status = error, code, description, status

    def body(self) -> dict[str, Any]:
        return {
            "error": self.error,
            "error_description": f"AADSTS{self.code}: {self.description}\r\nTrace ID: {secrets.token_hex(16)}",
            "error_codes": [self.code],
            "timestamp": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()),
        }


@dataclass(frozen=True)
class Federated:
    issuer: str
    subject: str
    audience: str = EXCHANGE_AUDIENCE


@dataclass
class App:
    client_id: str
    object_id: str
    secrets: list[str] = field(default_factory=list)
    federated: list[Federated] = field(default_factory=list)


@dataclass(frozen=True)
class Issued:
    resource: str
    client_id: str
    object_id: str
    expires: float  # time.time()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Entra:
    """One tenant with the test app, the managed identities, and the resources it issues for."""

    def __init__(self, server_id: str, *, tenant_id: str = TEST_TENANT_ID) -> None:
        self.server_id = server_id
        self.tenant_id = tenant_id
        self.apps = {
            TEST_CLIENT_ID: App(
                TEST_CLIENT_ID,
                TEST_OBJECT_ID,
                [TEST_CLIENT_SECRET],
                [Federated(GITHUB_ISSUER, GITHUB_SUBJECT), Federated(AKS_OIDC_ISSUER, AKS_SUBJECT)],
            )
        }
        self.resources = {server_id, ARM_RESOURCE}
        # the cluster's mapping of object ids to (username, groups): cluster-admins here
        self.users: dict[str, tuple[str, list[str]]] = {
            oid: (oid, ["system:masters"]) for oid in (TEST_OBJECT_ID, MSI_OBJECT_ID, SYSTEM_MSI_OBJECT_ID)
        }
        self.issued: dict[str, Issued] = {}
        self.served: Counter[str] = Counter()  # requests by endpoint: openid, token, msi, github
        self.refused: list[str] = []  # each refused token request's AADSTS line
        self.kid = secrets.token_hex(8)
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    # -- the federated tokens kubesim issues (GitHub's OIDC token, an AKS projected token) ----------
    def federated_token(
        self,
        *,
        issuer: str = GITHUB_ISSUER,
        subject: str = GITHUB_SUBJECT,
        audience: str = EXCHANGE_AUDIENCE,
        lifetime: float = 600,
        key: rsa.RSAPrivateKey | None = None,
    ) -> str:
        """An RS256 JWT as the issuer signs it (with another `key`: a forgery)."""
        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": self.kid}
        claims = {
            "iss": issuer,
            "sub": subject,
            "aud": audience,
            "iat": now,
            "nbf": now,
            "exp": int(now + lifetime),
        }
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        signature = (key or self._key).sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{_b64(signature)}"

    def _verified_claims(self, assertion: str) -> dict[str, Any]:
        """The claims of a JWT this kubesim signed, checked as Entra checks an external token."""
        try:
            head, body, signature = assertion.split(".")
            header, claims = json.loads(_unb64(head)), json.loads(_unb64(body))
            raw = _unb64(signature)
        except ValueError:
            raise Refused("invalid_client", 50027, "JWT token is invalid or malformed.") from None
        if not isinstance(header, dict) or not isinstance(claims, dict) or header.get("alg") != "RS256":
            raise Refused("invalid_client", 50027, "JWT token is invalid or malformed.")
        try:
            self._key.public_key().verify(raw, f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            raise Refused(
                "invalid_client", 700027, "Client assertion contains an invalid signature."
            ) from None
        now = time.time()
        exp, nbf = claims.get("exp"), claims.get("nbf", claims.get("iat"))
        if (
            not isinstance(exp, int)
            or now > exp + CLOCK_SKEW
            or (isinstance(nbf, int) and nbf > now + CLOCK_SKEW)
        ):
            raise Refused("invalid_client", 700024, "Client assertion is not within its valid time range.")
        return claims

    # -- the token endpoint -------------------------------------------------------------------------
    def token(self, tenant: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) of a token request to /{tenant}/oauth2/v2.0/token."""
        try:
            return 200, self._grant(tenant, form)
        except Refused as e:
            self.refused.append(str(e))
            return e.status, e.body()

    def _grant(self, tenant: str, form: dict[str, str]) -> dict[str, Any]:
        if tenant != self.tenant_id:
            raise Refused("invalid_request", 90002, f"Tenant '{tenant}' not found.")
        for name in ("grant_type", "client_id", "scope"):
            if not form.get(name):
                raise Refused(
                    "invalid_request",
                    900144,
                    f"The request body must contain the following parameter: '{name}'.",
                )
        if form["grant_type"] != "client_credentials":
            raise Refused(
                "unsupported_grant_type",
                70003,
                f"The app requested an unsupported grant type '{form['grant_type']}'.",
            )
        app = self.apps.get(form["client_id"])
        if app is None:
            raise Refused(
                "unauthorized_client",
                700016,
                f"Application with identifier '{form['client_id']}' was not found in the directory '{tenant}'.",
            )
        resource = self._resource(form["scope"])
        if "client_secret" in form:
            if not any(hmac.compare_digest(form["client_secret"].encode(), s.encode()) for s in app.secrets):
                raise Refused("invalid_client", 7000215, "Invalid client secret provided.", status=401)
        elif "client_assertion" in form:
            if form.get("client_assertion_type") != JWT_BEARER:
                raise Refused(
                    "invalid_request",
                    900144,
                    "The request body must contain the following parameter: 'client_assertion_type'.",
                )
            self._federated(app, self._verified_claims(form["client_assertion"]))
        else:
            raise Refused(
                "invalid_client",
                7000218,
                "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
                status=401,
            )
        access = f"kubesim-entra.{secrets.token_urlsafe(32)}"
        self.issued[access] = Issued(resource, app.client_id, app.object_id, time.time() + EXPIRES_IN)
        return {
            "token_type": "Bearer",
            "expires_in": EXPIRES_IN,
            "ext_expires_in": EXPIRES_IN,
            "access_token": access,
        }

    def _resource(self, scope: str) -> str:
        """The client credentials grant takes one scope, `<resource>/.default`."""
        scopes = scope.split()
        if len(scopes) != 1 or not scopes[0].endswith("/.default"):
            raise Refused(
                "invalid_scope",
                1002012,
                f"The provided value for scope {scope} is not valid. Client credential flows must have a "
                "scope value with /.default suffixed to the resource identifier (application ID URI).",
            )
        resource = scopes[0][: -len("/.default")]
        if resource not in self.resources:
            raise Refused(
                "invalid_resource",
                500011,
                f"The resource principal named {resource} was not found in the tenant named {self.tenant_id}.",
            )
        return resource

    @staticmethod
    def _federated(app: App, claims: dict[str, Any]) -> None:
        """One of the app's federated identity credentials must match issuer, audience, subject."""
        audiences = claims.get("aud") if isinstance(claims.get("aud"), list) else [claims.get("aud")]
        by_issuer = [f for f in app.federated if f.issuer == claims.get("iss")]
        if not by_issuer:
            raise Refused(
                "invalid_client",
                700211,
                f"No matching federated identity record found for presented assertion issuer '{claims.get('iss')}'.",
            )
        by_audience = [f for f in by_issuer if f.audience in audiences]
        if not by_audience:
            raise Refused(
                "invalid_client",
                700212,
                f"No matching federated identity record found for presented assertion audience '{claims.get('aud')}'.",
            )
        if not any(f.subject == claims.get("sub") for f in by_audience):
            raise Refused(
                "invalid_client",
                700213,
                f"No matching federated identity record found for presented assertion subject '{claims.get('sub')}'.",
            )

    # -- App Service's managed identity endpoint and GitHub's ID token endpoint ---------------------
    def msi(self, query: dict[str, str], header: str | None) -> tuple[int, dict[str, Any]]:
        if header is None or not hmac.compare_digest(header.encode(), IDENTITY_HEADER.encode()):
            return 401, {"statusCode": 401, "message": "X-IDENTITY-HEADER is missing or wrong"}
        if query.get("api-version") != "2019-08-01":
            return 400, {"statusCode": 400, "message": "unsupported api-version"}
        resource = query.get("resource", "").removesuffix("/.default")
        if resource not in self.resources:
            return 400, {"statusCode": 400, "message": f"no resource {resource!r} in the tenant"}
        if query.get("client_id") or query.get("mi_res_id"):
            if (
                query.get("client_id", MSI_CLIENT_ID) != MSI_CLIENT_ID
                or query.get("mi_res_id", MSI_RESOURCE_ID) != MSI_RESOURCE_ID
            ):
                return 400, {"statusCode": 400, "message": "no such user-assigned identity on this resource"}
            client_id, object_id = MSI_CLIENT_ID, MSI_OBJECT_ID
        else:
            client_id, object_id = "", SYSTEM_MSI_OBJECT_ID
        access = f"kubesim-entra.{secrets.token_urlsafe(32)}"
        expires = time.time() + EXPIRES_IN
        self.issued[access] = Issued(resource, client_id, object_id, expires)
        return 200, {
            "access_token": access,
            "expires_on": str(int(expires)),
            "resource": resource,
            "token_type": "Bearer",
            "client_id": client_id,
        }

    def github(self, query: dict[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.encode(), GITHUB_REQUEST_TOKEN.encode()
        ):
            return 401, {"message": "Bad credentials"}
        audience = query.get("audience") or "https://github.com/acme"
        return 200, {"count": 1, "value": self.federated_token(audience=audience)}

    # -- the API server's side --------------------------------------------------------------------------
    def authenticate(self, token: str) -> tuple[str, str, list[str], float] | None:
        """(object id, username, groups, expires) of an access token issued for this cluster's
        server id; None for a token this Entra never issued; Refused for one not for the cluster."""
        issued = self.issued.get(token)
        if issued is None:
            return None
        if issued.resource != self.server_id:
            raise Refused(
                "invalid_audience", 0, f"token audience {issued.resource!r} is not the cluster's server id"
            )
        if time.time() >= issued.expires:
            raise Refused("expired", 0, "token is expired")
        mapped = self.users.get(issued.object_id)
        if mapped is None:
            raise Refused("unmapped", 0, f"object id {issued.object_id} is not mapped to a user")
        return issued.object_id, mapped[0], list(mapped[1]), issued.expires

    async def serve(self, request: web.Request) -> web.Response | None:
        """Entra's answer to a request on its paths; None for any other path (the API server's)."""
        path = request.path
        found = _OPENID.match(path)
        if found and request.method == "GET":
            self.served["openid"] += 1
            document = self.openid_configuration(f"https://{request.host}", found["tenant"])
            return web.json_response(document, status=400 if "error" in document else 200)
        found = _TOKEN.match(path)
        if found and request.method == "POST":
            self.served["token"] += 1
            form = {k: str(v) for k, v in (await request.post()).items()}
            status, body = self.token(found["tenant"], form)
            return web.json_response(body, status=status)
        if path == "/msi/token" and request.method == "GET":
            self.served["msi"] += 1
            status, body = self.msi(dict(request.query), request.headers.get("X-IDENTITY-HEADER"))
            return web.json_response(body, status=status)
        if path == "/github/oidc/token" and request.method == "GET":
            self.served["github"] += 1
            status, body = self.github(dict(request.query), request.headers.get("Authorization"))
            return web.json_response(body, status=status)
        return None

    def openid_configuration(self, base: str, tenant: str) -> dict[str, Any]:
        """The v2.0 discovery document's fields MSAL reads (and the issuer Entra names)."""
        if tenant != self.tenant_id:
            return {
                "error": "invalid_tenant",
                "error_description": f"AADSTS90002: Tenant '{tenant}' not found.",
            }
        root = f"{base}/{tenant}"
        return {
            "issuer": f"{root}/v2.0",
            "authorization_endpoint": f"{root}/oauth2/v2.0/authorize",
            "token_endpoint": f"{root}/oauth2/v2.0/token",
            "device_authorization_endpoint": f"{root}/oauth2/v2.0/devicecode",
            "jwks_uri": f"{base}/{tenant}/discovery/v2.0/keys",
            "token_endpoint_auth_methods_supported": [
                "client_secret_post",
                "private_key_jwt",
                "client_secret_basic",
            ],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "tenant_region_scope": "EU",
        }
