"""TokenRequest: POST /api/v1/namespaces/NS/serviceaccounts/NAME/token (`kubectl create token`).

As kubernetes/kubernetes pkg/registry/core/serviceaccount/storage/token.go (TokenREST.Create):
validated by pkg/apis/authentication/validation/validation.go (ValidateTokenRequest: at least 10
minutes, at most 2^32 s; expirationSeconds defaults to 3600 in pkg/apis/authentication/v1/
defaults.go), the ServiceAccount read first (a missing one is the registry's 404), an optional
Pod or Secret binding checked, audiences defaulting to the API server's own.

The token is JWT-shaped with the claims a real one carries (iss, sub, aud, exp, iat, nbf, jti,
kubernetes.io) but is not signed by any key a client could check: kubesim authenticates it by
lookup (auth.Authorizer.add_serviceaccount, the mechanism Cluster.serviceaccount_token uses), as
`system:serviceaccount:NS:NAME` in system:serviceaccounts and system:serviceaccounts:NS, until it
expires or its bound object is deleted. A token for other audiences only is minted but never
authenticates here (the apiserver's authenticator rejects a token not meant for it)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import secrets
import time
import uuid
from typing import Any

from ..storage.errors import ApiError
from ..storage.resources import BY_PATH
from ..storage.store import Obj, Store
from .auth import Authorizer

# kubeadm's and kind's --service-account-issuer, and so the API server's audience
API_AUDIENCES = ("https://kubernetes.default.svc.cluster.local",)
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 10 * 60
_GROUP, _KIND = "authentication.k8s.io", "TokenRequest"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _rfc3339(t: float) -> str:
    return dt.datetime.fromtimestamp(int(t), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def token_request(auth: Authorizer, store: Store, namespace: str, name: str, body: Obj) -> Obj:
    """The answered TokenRequest (HTTP 201); the token authenticates from now on."""
    if body.get("kind") not in (None, _KIND):
        raise ApiError.bad_request(
            f"the API version in the data ({body.get('apiVersion')}) does not match the expected "
            f"API version ({_GROUP}/v1)"
        )
    spec = body.get("spec") or {}
    expiration = spec.get("expirationSeconds")
    if expiration is None:
        expiration = DEFAULT_EXPIRATION
    if not isinstance(expiration, int) or isinstance(expiration, bool):
        raise ApiError.bad_request("spec.expirationSeconds: expected an integer")
    if expiration < MIN_EXPIRATION:
        raise ApiError.field_invalid(
            _GROUP,
            _KIND,
            "spec.expirationSeconds",
            expiration,
            "may not specify a duration less than 10 minutes",
        )
    if expiration > 1 << 32:
        raise ApiError.field_invalid(
            _GROUP,
            _KIND,
            "spec.expirationSeconds",
            expiration,
            "may not specify a duration larger than 2^32 seconds",
        )
    sa = store.get(BY_PATH[("", "serviceaccounts")], namespace, name)  # 404: serviceaccounts "NAME" not found
    ref = spec.get("boundObjectRef")
    claims_k8s: dict[str, Any] = {
        "namespace": namespace,
        "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]},
    }
    extra: dict[str, list[str]] = {}
    bound: tuple[str, str, str, str] | None = None
    if ref:
        bound = _bind(store, namespace, name, ref, claims_k8s, extra)
    audiences = list(spec.get("audiences") or API_AUDIENCES)
    now = time.time()
    expires = now + expiration
    jti = str(uuid.uuid4())
    claims = {
        "aud": audiences,
        "exp": int(expires),
        "iat": int(now),
        "iss": API_AUDIENCES[0],
        "jti": jti,
        "kubernetes.io": claims_k8s,
        "nbf": int(now),
        "sub": f"system:serviceaccount:{namespace}:{name}",
    }
    header = {"alg": "RS256", "kid": "kubesim"}
    token = (
        ".".join(_b64(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims))
        + "."
        + _b64(secrets.token_bytes(256))
    )
    extra["authentication.kubernetes.io/credential-id"] = [f"JTI={jti}"]
    if set(audiences) & set(API_AUDIENCES):
        auth.add_serviceaccount(
            namespace,
            name,
            token=token,
            uid=sa["metadata"]["uid"],
            extra=dict(sorted(extra.items())),
            expires=expires,
            bound=bound,
        )
    return {
        "kind": _KIND,
        "apiVersion": f"{_GROUP}/v1",
        "metadata": {"namespace": namespace, "creationTimestamp": None},
        "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": ref or None},
        "status": {"token": token, "expirationTimestamp": _rfc3339(expires)},
    }


def _bind(
    store: Store,
    namespace: str,
    sa_name: str,
    ref: dict[str, Any],
    claims: dict[str, Any],
    extra: dict[str, list[str]],
) -> tuple[str, str, str, str]:
    """Check a Pod or Secret binding as TokenREST.Create does; the token then lives only as long
    as that object (by uid). Returns (plural, namespace, name, uid)."""
    kind, api_version, obj_name = ref.get("kind", ""), ref.get("apiVersion", ""), ref.get("name", "")
    group, _, version = api_version.rpartition("/")
    if group or kind not in ("Pod", "Secret"):
        raise ApiError.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    plural = "pods" if kind == "Pod" else "secrets"
    obj = store.get(BY_PATH[("", plural)], namespace, obj_name)
    uid = obj["metadata"]["uid"]
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName", "default") != sa_name:
        raise ApiError.bad_request(
            f'cannot bind token for serviceaccount "{sa_name}" to pod running with different '
            "serviceaccount name."
        )
    if ref.get("uid") and ref["uid"] != uid:
        raise ApiError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {kind} "{obj_name}": the UID in the bound object reference '
            f"({ref['uid']}) does not match the UID in record. The object might have been deleted and then "
            "recreated",
            {"name": obj_name, "kind": kind},
        )
    claims[kind.lower()] = {"name": obj_name, "uid": uid}
    if kind == "Pod":
        extra["authentication.kubernetes.io/pod-name"] = [obj_name]
        extra["authentication.kubernetes.io/pod-uid"] = [uid]
        node = (obj.get("spec") or {}).get("nodeName")
        found = store.find(BY_PATH[("", "nodes")], "", node) if node else None
        if found is not None:
            claims["node"] = {"name": node, "uid": found["metadata"]["uid"]}
            extra["authentication.kubernetes.io/node-name"] = [node]
            extra["authentication.kubernetes.io/node-uid"] = [found["metadata"]["uid"]]
    return plural, namespace, obj_name, uid
