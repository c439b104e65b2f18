"""kubesim as a GKE cluster and the Google endpoints its credentials go through, on one loopback
HTTPS port of its own (the apiserver's certificate, so REQUESTS_CA_BUNDLE=<kubesim's CA> makes
google-auth trust it). kubesim never calls Google: it plays

- Security Token Service's token exchange (sts.googleapis.com/v1/token: RFC 8693 form fields
  grant_type, audience, scope, requested_token_type, subject_token, subject_token_type; the
  audience is a workload identity pool provider's full resource name; reference: the STS v1
  ExchangeTokenRequest, googleapis.dev Google.Apis.CloudSecurityToken.v1), checking a GitHub
  Actions OIDC token as a GitHub provider does (issuer, the provider's default allowed audience
  https://iam.googleapis.com/<provider>, expiry, the attribute condition on `repository`);
- IAM Credentials' generateAccessToken (iamcredentials.googleapis.com/v1/projects/-/
  serviceAccounts/<email>:generateAccessToken, JSON {scope, lifetime}), for a caller the service
  account lets impersonate it (roles/iam.workloadIdentityUser to the repository's principalSet);
- OAuth2's token endpoint (oauth2.googleapis.com/token): the JWT-bearer grant of a service-account
  key (RFC 7523; google-auth's service_account.py signs {iss, scope, aud:
  https://oauth2.googleapis.com/token, iat, exp} with RS256, header kid = private_key_id) and the
  refresh_token grant of an authorized_user file;
- GitHub's OIDC token request URL (ACTIONS_ID_TOKEN_REQUEST_URL &audience=..., Bearer
  ACTIONS_ID_TOKEN_REQUEST_TOKEN; answer {"value": <JWT>}), which the credential file of
  google-github-actions/auth names (src/client/workload_identity_federation.ts).

Signatures are made and checked with `cryptography` only (the client signs with google-auth, so
checking with google-auth would prove nothing). Every access token issued is opaque (`ya29.`...);
the apiserver authenticates it as GKE does: as the identity's email when the token carries the
userinfo.email scope (gke-gcloud-auth-plugin asks for it so that a service account is its email,
not its numeric id), else as that numeric id; a federated token as its principal:// name."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import json
import re
import secrets
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from .responses import json_response

TEST_PROJECT = "kubesim-shop"
TEST_PROJECT_NUMBER = "123456789012"
TEST_USER = "dev@example.com"  # the authorized_user file's Google account
TEST_REPOSITORY = "shop/app"  # the GitHub repository the workload identity provider accepts
POOL, PROVIDER = "github", "kubesim"
PROVIDER_NAME = (
    f"projects/{TEST_PROJECT_NUMBER}/locations/global/workloadIdentityPools/{POOL}/providers/{PROVIDER}"
)
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
OAUTH2_AUDIENCE = "https://oauth2.googleapis.com/token"  # what every service-account assertion names
SCOPE_CLOUD = "https://www.googleapis.com/auth/cloud-platform"
SCOPE_EMAIL = "https://www.googleapis.com/auth/userinfo.email"
USER_SCOPES = frozenset({"openid", SCOPE_EMAIL, SCOPE_CLOUD})  # what application-default login grants
PREFIX = "ya29."
LIFETIME = 3600
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
SUBJECT_TYPES = ("urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token")
STS_PATH, OAUTH2_PATH, GITHUB_PATH = "/v1/token", "/token", "/_apis/distributedtask/idtoken"
_IAM_PATH = re.compile(r"^/v1/projects/-/serviceAccounts/(?P<email>[^/:]+):generateAccessToken$")


class Refused(Exception):
    """An endpoint's refusal: its HTTP status and JSON body (an OAuth error, RFC 6749 5.2, or a
    Google API error {"error": {code, message, status}})."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(json.dumps(body))
        self.status = status
        self.body = body


def oauth_error(code: str, description: str, status: int = 400) -> Refused:
    return Refused(status, {"error": code, "error_description": description})


def api_error(status: int, state: str, message: str) -> Refused:
    return Refused(status, {"error": {"code": status, "message": message, "status": state}})


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_jwt(key: rsa.RSAPrivateKey, claims: Mapping[str, Any], *, kid: str) -> str:
    """An RS256 JWS (RFC 7515 compact form) of `claims`."""
    head = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": kid}).encode())
    body = b64url(json.dumps(dict(claims)).encode())
    signature = key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{head}.{body}.{b64url(signature)}"


def verify_jwt(token: str, keys: Mapping[str, rsa.RSAPublicKey], *, what: str) -> dict[str, Any]:
    """The claims of an RS256 JWT signed by one of `keys` (by its kid); Refused (invalid_grant)."""
    try:
        head, body, signature = token.split(".")
        header = json.loads(_unb64url(head))
        claims = json.loads(_unb64url(body))
        raw_signature = _unb64url(signature)
    except (ValueError, binascii.Error):
        raise oauth_error("invalid_grant", f"Invalid JWT: the {what} is not a JWT.") from None
    if not isinstance(header, dict) or not isinstance(claims, dict) or header.get("alg") != "RS256":
        raise oauth_error("invalid_grant", f"Invalid JWT: the {what} is not an RS256 JWT.")
    key = keys.get(str(header.get("kid")))
    if key is None:
        raise oauth_error("invalid_grant", "Invalid JWT Signature.")
    try:
        key.verify(raw_signature, f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        raise oauth_error("invalid_grant", "Invalid JWT Signature.") from None
    return claims


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def unique_id(identity: str) -> str:
    """A stable 21-digit numeric id, as Google gives every account."""
    return "1" + str(int(hashlib.sha256(identity.encode()).hexdigest(), 16))[:20]


@dataclass
class Issued:
    identity: str  # an email (service account, user) or a federated principal://
    scopes: frozenset[str]
    expires: float  # time.time()
    email: bool = True
    attributes: dict[str, str] = field(default_factory=dict)  # a federated token's mapped attributes


class GoogleSim:
    """The Google side of one GKE cluster: its project's test identities, what it issued, and the
    apiserver's mapping of Google identities to cluster groups."""

    def __init__(self, project: str = TEST_PROJECT) -> None:
        self.project = project
        self.service_account = f"deployer@{project}.iam.gserviceaccount.com"
        self.sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.sa_key_id = secrets.token_hex(20)
        self.issuer_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.issuer_kid = secrets.token_hex(8)
        self.github_request_token = secrets.token_urlsafe(32)
        self.client_id = "32555940559.apps.googleusercontent.com"
        self.client_secret = secrets.token_urlsafe(18)
        self.refresh_token = "1//" + secrets.token_urlsafe(48)
        self.audience = f"//iam.googleapis.com/{PROVIDER_NAME}"
        # roles/iam.workloadIdentityUser on the service account, granted to the repository's identities
        self.impersonators = {
            self.service_account: {
                f"principalSet://iam.googleapis.com/projects/{TEST_PROJECT_NUMBER}/locations/global/"
                f"workloadIdentityPools/{POOL}/attribute.repository/{TEST_REPOSITORY}"
            }
        }
        # Google identities bound to cluster-admin (an RBAC binding or IAM roles/container.admin)
        self.mapped: dict[str, list[str]] = {
            self.service_account: ["system:masters"],
            TEST_USER: ["system:masters"],
        }
        self.issued: dict[str, Issued] = {}
        self.calls: Counter[str] = Counter()  # requests by endpoint: sts, iam, oauth2, github
        self.refused: list[str] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    # -- the endpoints -----------------------------------------------------------------------
    def exchange(self, form: Mapping[str, str]) -> dict[str, Any]:
        """STS: a GitHub OIDC token for a federated access token of its principal."""
        if form.get("grant_type") != TOKEN_EXCHANGE:
            raise oauth_error("unsupported_grant_type", "The grant type is not supported.")
        if form.get("requested_token_type") != ACCESS_TOKEN_TYPE:
            raise oauth_error("invalid_request", "The requested token type is not supported.")
        if form.get("subject_token_type") not in SUBJECT_TYPES:
            raise oauth_error("invalid_request", "The subject token type is not supported.")
        if form.get("audience") != self.audience:
            raise oauth_error("invalid_target", "The target service indicated by the audience is invalid.")
        scopes = frozenset((form.get("scope") or "").split())
        if not scopes:
            raise oauth_error("invalid_scope", "A scope is required.")
        claims = verify_jwt(
            form.get("subject_token") or "", {self.issuer_kid: self.issuer_key.public_key()}, what="ID Token"
        )
        if claims.get("iss") != GITHUB_ISSUER:
            raise oauth_error("invalid_grant", "The issuer in ID Token does not match the expected ones.")
        audiences = claims.get("aud") if isinstance(claims.get("aud"), list) else [claims.get("aud")]
        if f"https://iam.googleapis.com/{PROVIDER_NAME}" not in audiences:
            raise oauth_error(
                "invalid_grant", "The audience in ID Token does not match the expected audience."
            )
        if not isinstance(claims.get("exp"), int) or claims["exp"] <= time.time():
            raise oauth_error("invalid_grant", "ID Token has expired.")
        if claims.get("repository") != TEST_REPOSITORY:
            raise oauth_error(
                "unauthorized_client", "The given credential is rejected by the attribute condition."
            )
        principal = (
            f"principal://iam.googleapis.com/projects/{TEST_PROJECT_NUMBER}/locations/global/"
            f"workloadIdentityPools/{POOL}/subject/{claims.get('sub')}"
        )
        token = self._issue(principal, scopes, email=False, attributes={"repository": claims["repository"]})
        return {
            "access_token": token,
            "issued_token_type": ACCESS_TOKEN_TYPE,
            "token_type": "Bearer",
            "expires_in": LIFETIME,
        }

    def generate_access_token(self, email: str, *, authorization: str, body: Any) -> dict[str, Any]:
        """IAM Credentials: the service account's access token for a caller allowed to impersonate it."""
        caller = self.issued_to(authorization.removeprefix("Bearer ").strip())
        if caller is None:
            raise api_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        if email not in self.impersonators:
            raise api_error(404, "NOT_FOUND", "Requested entity was not found.")
        principals = {caller.identity}
        if "repository" in caller.attributes:
            principals.add(
                f"principalSet://iam.googleapis.com/projects/{TEST_PROJECT_NUMBER}/locations/global/"
                f"workloadIdentityPools/{POOL}/attribute.repository/{caller.attributes['repository']}"
            )
        if not principals & self.impersonators[email]:
            raise api_error(
                403,
                "PERMISSION_DENIED",
                "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).",
            )
        scopes = frozenset(body.get("scope") or []) if isinstance(body, dict) else frozenset()
        if not scopes:
            raise api_error(400, "INVALID_ARGUMENT", "Scope required.")
        lifetime = int(str(body.get("lifetime") or f"{LIFETIME}s").rstrip("s"))
        if not 0 < lifetime <= LIFETIME:
            raise api_error(400, "INVALID_ARGUMENT", "The lifetime must be at most 3600s.")
        token = self._issue(email, scopes, lifetime=lifetime)
        expire = dt.datetime.fromtimestamp(self.issued[token].expires, dt.UTC)
        return {"accessToken": token, "expireTime": expire.strftime("%Y-%m-%dT%H:%M:%SZ")}

    def oauth2_token(self, form: Mapping[str, str]) -> dict[str, Any]:
        """OAuth2: a service-account key's signed assertion, or a user's refresh token."""
        grant = form.get("grant_type")
        if grant == JWT_BEARER:
            claims = verify_jwt(
                form.get("assertion") or "", {self.sa_key_id: self.sa_key.public_key()}, what="assertion"
            )
            now = time.time()
            if claims.get("iss") != self.service_account:
                raise oauth_error(
                    "invalid_grant", "Invalid JWT: the issuer is not the key's service account."
                )
            if claims.get("aud") != OAUTH2_AUDIENCE:
                raise oauth_error("invalid_grant", "Invalid JWT: Failed audience check.")
            iat, exp = claims.get("iat"), claims.get("exp")
            if (
                not isinstance(iat, int)
                or not isinstance(exp, int)
                or not iat - 300 <= now < exp <= iat + 3600
            ):
                raise oauth_error(
                    "invalid_grant",
                    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.",
                )
            scopes = frozenset(str(claims.get("scope") or "").split())
            if not scopes:
                raise oauth_error("invalid_scope", "Invalid OAuth scope or ID token audience provided.")
            return {
                "access_token": self._issue(self.service_account, scopes),
                "expires_in": LIFETIME,
                "token_type": "Bearer",
            }
        if grant == "refresh_token":
            if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
                raise oauth_error("invalid_client", "Unauthorized", status=401)
            if form.get("refresh_token") != self.refresh_token:
                raise oauth_error("invalid_grant", "Token has been expired or revoked.")
            scopes = frozenset((form.get("scope") or "").split()) or USER_SCOPES
            if not scopes <= USER_SCOPES:
                raise oauth_error("invalid_scope", "Some requested scopes were invalid.")
            token = self._issue(TEST_USER, scopes)
            return {
                "access_token": token,
                "expires_in": LIFETIME,
                "scope": " ".join(sorted(scopes)),
                "token_type": "Bearer",
            }
        raise oauth_error("unsupported_grant_type", "Invalid grant_type.")

    def github_token(self, *, audience: str, authorization: str) -> dict[str, Any]:
        """GitHub's OIDC token request URL: the job's ID token for `audience`."""
        if authorization != f"Bearer {self.github_request_token}":
            raise Refused(401, {"message": "Bad credentials"})
        return {"count": 1, "value": self.oidc_token(audience=audience)}

    def oidc_token(
        self,
        *,
        audience: str = f"https://iam.googleapis.com/{PROVIDER_NAME}",
        repository: str = TEST_REPOSITORY,
        key: rsa.RSAPrivateKey | None = None,
        lifetime: int = 300,
    ) -> str:
        """A GitHub Actions ID token (its claims as GitHub documents them, the ones STS reads)."""
        now = int(time.time())
        claims = {
            "iss": GITHUB_ISSUER,
            "aud": audience,
            "sub": f"repo:{repository}:ref:refs/heads/main",
            "repository": repository,
            "repository_owner": repository.partition("/")[0],
            "ref": "refs/heads/main",
            "jti": secrets.token_hex(8),
            "iat": now,
            "nbf": now,
            "exp": now + lifetime,
        }
        return sign_jwt(key or self.issuer_key, claims, kid=self.issuer_kid)

    # -- the apiserver's side ----------------------------------------------------------------
    def issued_to(self, token: str) -> Issued | None:
        issued = self.issued.get(token)
        return issued if issued is not None and time.time() < issued.expires else None

    def user(self, token: str) -> tuple[str, list[str], float] | None:
        """(username, groups, expires) GKE authenticates an access token as; None if unknown."""
        issued = self.issued_to(token)
        if issued is None:
            return None
        name = issued.identity
        if issued.email and SCOPE_EMAIL not in issued.scopes:
            name = unique_id(issued.identity)
        return name, list(self.mapped.get(name, [])), issued.expires

    def _issue(
        self,
        identity: str,
        scopes: frozenset[str],
        *,
        email: bool = True,
        lifetime: int = LIFETIME,
        **kw: Any,
    ) -> str:
        token = PREFIX + "kubesim-" + secrets.token_urlsafe(48)
        self.issued[token] = Issued(identity, scopes, time.time() + lifetime, email, **kw)
        return token

    # -- HTTP --------------------------------------------------------------------------------
    async def start(self, ssl_context: Any) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._serve)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=ssl_context)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _serve(self, request: web.Request) -> web.Response:
        path, method = request.path, request.method
        authorization = request.headers.get("Authorization", "")
        try:
            if method == "POST" and path in (STS_PATH, OAUTH2_PATH):
                form = {k: str(v) for k, v in (await request.post()).items()}
                self.calls["sts" if path == STS_PATH else "oauth2"] += 1
                answer = self.exchange(form) if path == STS_PATH else self.oauth2_token(form)
                return json_response(answer)
            iam = _IAM_PATH.match(path)
            if method == "POST" and iam is not None:
                self.calls["iam"] += 1
                try:
                    body = await request.json()
                except ValueError:
                    raise api_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.") from None
                return json_response(
                    self.generate_access_token(iam["email"], authorization=authorization, body=body)
                )
            if method == "GET" and path == GITHUB_PATH:
                self.calls["github"] += 1
                audience = request.query.get("audience", "")
                return json_response(self.github_token(audience=audience, authorization=authorization))
        except Refused as e:
            self.refused.append(f"{method} {path}: HTTP {e.status} {e}")
            return json_response(e.body, e.status)
        return json_response({"error": {"code": 404, "message": "Not Found", "status": "NOT_FOUND"}}, 404)

    # -- credential files, as the tools that write them write them (URLs on loopback) -----------
    def service_account_info(self) -> dict[str, Any]:
        """A key file as `gcloud iam service-accounts keys create` writes it."""
        pem = self.sa_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        return {
            "type": "service_account",
            "project_id": self.project,
            "private_key_id": self.sa_key_id,
            "private_key": pem,
            "client_email": self.service_account,
            "client_id": unique_id(self.service_account),
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": f"{self.url}{OAUTH2_PATH}",
            "universe_domain": "googleapis.com",
        }

    def authorized_user_info(self) -> dict[str, Any]:
        """application_default_credentials.json as `gcloud auth application-default login`
        writes it. It names no token endpoint: google-auth always refreshes at
        oauth2.googleapis.com (oauth2/credentials.py from_authorized_user_info), so a test points
        that constant at `oauth2_url` to reach kubesim."""
        return {
            "type": "authorized_user",
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "refresh_token": self.refresh_token,
            "quota_project_id": self.project,
        }

    @property
    def oauth2_url(self) -> str:
        return f"{self.url}{OAUTH2_PATH}"

    def external_account_info(
        self, *, impersonate: bool = True, token_file: str | None = None
    ) -> dict[str, Any]:
        """The file google-github-actions/auth writes for Workload Identity Federation: the
        subject token from GitHub's OIDC request URL (or, `token_file`, from a file)."""
        source: dict[str, Any] = (
            {"file": token_file}
            if token_file
            else {
                "url": f"{self.url}{GITHUB_PATH}?api-version=2.0&audience=https%3A%2F%2Fiam.googleapis.com%2F"
                + PROVIDER_NAME.replace("/", "%2F"),
                "headers": {"Authorization": f"Bearer {self.github_request_token}"},
                "format": {"type": "json", "subject_token_field_name": "value"},
            }
        )
        info: dict[str, Any] = {
            "type": "external_account",
            "audience": self.audience,
            "subject_token_type": SUBJECT_TYPES[0],
            "token_url": f"{self.url}{STS_PATH}",
            "credential_source": source,
        }
        if impersonate:
            info["service_account_impersonation_url"] = (
                f"{self.url}/v1/projects/-/serviceAccounts/{self.service_account}:generateAccessToken"
            )
        return info

    def secret_values(self) -> list[str]:
        """Every secret of these identities and every token issued, for the suite's leak guard."""
        info = self.service_account_info()
        return [
            info["private_key"],
            self.github_request_token,
            self.client_secret,
            self.refresh_token,
            *self.issued,
        ]
