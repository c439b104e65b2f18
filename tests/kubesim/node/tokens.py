"""The kubelet's token manager (kubernetes/kubernetes pkg/kubelet/token/token_manager.go) for
projected `serviceAccountToken` sources: one TokenRequest per pod, ServiceAccount, audience and
lifetime, bound to the pod (pkg/volume/projected/projected.go collectData), kept until 80% of its
life has passed (requiresRefresh) and forgotten with the pod. The token is the API server's own
(apiserver/tokenrequest.py): it authenticates as `system:serviceaccount:NS:SA` until it expires or
the pod is gone."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..apiserver.tokenrequest import token_request
from ..storage.errors import ApiError
from ..storage.store import Obj

if TYPE_CHECKING:
    from ..cluster import Cluster

Key = tuple[str, str, str, int]  # pod uid, service account, audience, expirationSeconds


class TokenError(Exception):
    """The token could not be fetched: the volume cannot be set up (projected.go's text)."""


class TokenManager:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.tokens: dict[Key, tuple[bytes, float, float]] = {}  # token, issued, expires (time.time)

    def token(self, pod: Obj, source: Obj) -> bytes:
        """The token file's content for `source` (a ServiceAccountTokenProjection) in `pod`."""
        meta, spec = pod["metadata"], pod.get("spec") or {}
        sa = spec.get("serviceAccountName") or "default"
        audience = str(source.get("audience") or "")
        seconds = int(source.get("expirationSeconds") or 3600)
        key = (meta["uid"], sa, audience, seconds)
        now = time.time()
        held = self.tokens.get(key)
        if held is not None and now < held[1] + 0.8 * (held[2] - held[1]):
            return held[0]
        body = {
            "spec": {
                "audiences": [audience] if audience else None,
                "expirationSeconds": seconds,
                "boundObjectRef": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
            }
        }
        try:
            out = token_request(self.cluster.auth, self.cluster.store, meta["namespace"], sa, body)
        except ApiError as e:
            raise TokenError(f"failed to fetch token: {e.message}") from None
        token = str(out["status"]["token"]).encode()
        self.tokens[key] = (token, now, now + seconds)
        return token

    def forget(self, uid: str) -> None:
        """DeleteServiceAccountToken: the pod is gone from this node."""
        for key in [k for k in self.tokens if k[0] == uid]:
            del self.tokens[key]
