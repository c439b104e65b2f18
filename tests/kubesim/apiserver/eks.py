"""kubesim as an EKS cluster's authenticator: a bearer token `k8s-aws-v1.<base64url of a presigned
STS GetCallerIdentity URL>` authenticates as the IAM identity that signed it, mapped to a cluster
user as the aws-auth ConfigMap (or an access entry) maps it.

The real authenticator (kubernetes-sigs/aws-iam-authenticator pkg/token/token.go, Verify) checks
the URL's shape, then sends it to STS with `x-k8s-aws-id: <its cluster>`, and STS checks the
signature. kubesim never calls AWS: it does STS's part itself, recomputing the SigV4 signature
from the published algorithm (canonical request, string to sign, HMAC-SHA256 key derivation)
with the secret keys of its test identities. hashlib and hmac only: the client side signs with
botocore, so checking with botocore too would prove nothing."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, urlsplit

PREFIX = "k8s-aws-v1."
CLUSTER_ID_HEADER = "x-k8s-aws-id"
MAX_TOKEN_LEN = 4 * 1024
TOKEN_LIFETIME = dt.timedelta(minutes=15)  # after X-Amz-Date, whatever X-Amz-Expires says (as STS)
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()  # a GET's payload hash
# the only query parameters a token's URL may carry (the authenticator's parameterWhitelist)
ALLOWED = {
    "action",
    "version",
    "x-amz-algorithm",
    "x-amz-credential",
    "x-amz-date",
    "x-amz-expires",
    "x-amz-security-token",
    "x-amz-signature",
    "x-amz-signedheaders",
}
# sts.amazonaws.com (us-east-1) or a regional endpoint, as the authenticator's partition's hosts
_HOST = re.compile(r"^sts(?:\.(?P<region>[a-z]{2}(?:-gov)?-[a-z]+-\d))?\.amazonaws\.com(?P<cn>\.cn)?$")

# The test identities: an access key (as AWS_ACCESS_KEY_ID) with its secret, and the ARN STS
# would answer GetCallerIdentity with for it.
TEST_ACCESS_KEY_ID = "AKIAKUBESIMTEST00001"
TEST_SECRET_ACCESS_KEY = "kubesim/Test+Secret/Key0000000000000001"
TEST_ARN = "arn:aws:iam::111122223333:user/ci"


class Refused(Exception):
    """Why a token does not authenticate (the authenticator's FormatError or STS's answer)."""


@dataclass(frozen=True)
class Identity:
    access_key_id: str
    secret_access_key: str
    arn: str
    session_token: str | None = None  # temporary credentials: X-Amz-Security-Token must match


@dataclass
class EksAuthenticator:
    """One cluster's authenticator: its name (what `x-k8s-aws-id` must say), the identities STS
    knows, and the aws-auth mapping of ARNs to (username, groups)."""

    cluster_name: str
    identities: list[Identity] = field(
        default_factory=lambda: [Identity(TEST_ACCESS_KEY_ID, TEST_SECRET_ACCESS_KEY, TEST_ARN)]
    )
    map_users: dict[str, tuple[str, list[str]]] = field(
        default_factory=lambda: {TEST_ARN: ("ci", ["system:masters"])}
    )

    def verify(self, token: str, *, now: dt.datetime | None = None) -> tuple[str, str, list[str], float]:
        """(arn, username, groups, expires as time.time()) of a valid token; Refused otherwise."""
        now = now or dt.datetime.now(dt.UTC)
        if len(token) > MAX_TOKEN_LEN:
            raise Refused("token is too large")
        if not token.startswith(PREFIX):
            raise Refused(f"token is missing expected {PREFIX!r} prefix")
        body = token[len(PREFIX) :]
        if "=" in body:
            raise Refused("token is padded (RawURLEncoding has no padding)")
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
            url = raw.decode("ascii")
        except (ValueError, UnicodeDecodeError):
            raise Refused("token is not base64url") from None
        parts = urlsplit(url)
        if parts.scheme != "https":
            raise Refused(f"unexpected scheme {parts.scheme!r} in pre-signed URL")
        host = _HOST.match(parts.netloc)
        if host is None:
            raise Refused(f"unexpected hostname {parts.netloc!r} in pre-signed URL")
        if parts.path != "/":
            raise Refused("unexpected path in pre-signed URL")
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=True)
        lower: dict[str, str] = {}
        for key, value in pairs:
            if key.lower() not in ALLOWED:
                raise Refused(f"non-whitelisted query parameter {key!r}")
            if key.lower() in lower:
                raise Refused("query parameter with multiple values not supported")
            lower[key.lower()] = value
        if lower.get("action") != "GetCallerIdentity":
            raise Refused("unexpected action parameter in pre-signed URL")
        signed = lower.get("x-amz-signedheaders", "").split(";")
        if CLUSTER_ID_HEADER not in [h.lower() for h in signed]:
            raise Refused(f"client did not sign the {CLUSTER_ID_HEADER} header in the pre-signed URL")
        try:
            expires = int(lower.get("x-amz-expires", ""))
        except ValueError:
            raise Refused("invalid X-Amz-Expires parameter in pre-signed URL") from None
        if not 0 <= expires <= 900:
            raise Refused(f"invalid X-Amz-Expires parameter in pre-signed URL: {expires}")
        try:
            date = dt.datetime.strptime(lower.get("x-amz-date", ""), "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
        except ValueError:
            raise Refused("X-Amz-Date parameter must be present and YYYYMMDDTHHMMSSZ") from None
        if now > date + TOKEN_LIFETIME:
            raise Refused("X-Amz-Date parameter is expired (15 minute expiration)")
        if date > now + dt.timedelta(minutes=5):
            raise Refused("X-Amz-Date is in the future")  # STS: "Signature not yet current"
        region = host.group("region") or "us-east-1"
        identity = self._check_signature(parts.netloc, pairs, lower, region=region, date=date)
        mapped = self.map_users.get(identity.arn)
        if mapped is None:
            raise Refused(f"ARN is not mapped: {identity.arn}")
        username, groups = mapped
        return identity.arn, username, list(groups), (date + TOKEN_LIFETIME).timestamp()

    def _check_signature(
        self,
        host: str,
        pairs: list[tuple[str, str]],
        lower: dict[str, str],
        *,
        region: str,
        date: dt.datetime,
    ) -> Identity:
        """STS's side: the SigV4 signature of the URL, as STS would receive it from the
        authenticator (with the header `x-k8s-aws-id: <this cluster's name>`)."""
        if lower.get("x-amz-algorithm") != "AWS4-HMAC-SHA256":
            raise Refused("unsupported X-Amz-Algorithm")
        key_id, *scope = lower.get("x-amz-credential", "").split("/")
        if len(scope) != 4 or scope[1:] != [region, "sts", "aws4_request"]:
            raise Refused("X-Amz-Credential scope does not match the host's region and sts")
        if scope[0] != date.strftime("%Y%m%d"):
            raise Refused("X-Amz-Credential date does not match X-Amz-Date")
        identity = next((i for i in self.identities if i.access_key_id == key_id), None)
        if identity is None:
            raise Refused("InvalidClientTokenId: the security token included in the request is invalid")
        if identity.session_token is not None and lower.get("x-amz-security-token") != identity.session_token:
            raise Refused("InvalidClientTokenId: the security token included in the request is invalid")
        headers = {"host": host, CLUSTER_ID_HEADER: self.cluster_name}
        signed = sorted(h.lower() for h in lower["x-amz-signedheaders"].split(";"))
        if "host" not in signed or any(h not in headers for h in signed):
            raise Refused("SignatureDoesNotMatch: signed headers the request does not carry")
        canonical_query = "&".join(
            f"{k}={v}"
            for k, v in sorted((_uri_encode(k), _uri_encode(v)) for k, v in pairs if k != "X-Amz-Signature")
        )
        canonical_request = "\n".join(
            [
                "GET",
                "/",
                canonical_query,
                "".join(f"{h}:{headers[h].strip()}\n" for h in signed),
                ";".join(signed),
                EMPTY_SHA256,
            ]
        )
        credential_scope = "/".join(scope)
        string_to_sign = "\n".join(
            [
                "AWS4-HMAC-SHA256",
                lower["x-amz-date"],
                credential_scope,
                hashlib.sha256(canonical_request.encode()).hexdigest(),
            ]
        )
        key = signing_key(identity.secret_access_key, date=scope[0], region=region, service="sts")
        expected = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, lower.get("x-amz-signature", "")):
            raise Refused(
                "SignatureDoesNotMatch: the request signature we calculated does not match the "
                "signature you provided"
            )
        return identity


def signing_key(secret: str, *, date: str, region: str, service: str) -> bytes:
    """SigV4's key derivation: HMAC-SHA256 chained over date, region, service, "aws4_request"."""
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def _uri_encode(text: str) -> str:
    """SigV4's URI encoding: every byte but the unreserved characters (A-Z a-z 0-9 - _ . ~)."""
    return quote(text, safe="-_.~")
