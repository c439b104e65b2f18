"""What authenticates each request: the kubeconfig's bearer token (re-read as the official client
refreshes it) or its basic credentials, the same for REST calls, watches and execs."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import httpx


class BearerToken:
    """The Configuration's `Authorization` value, asked for at most once per `ttl` seconds.

    Asking runs the client's refresh hook (token files are re-read, exec plugins consulted when
    expired), which costs more than an exec's own work when every one of hundreds of execs asks."""

    def __init__(self, cfg: Any, *, ttl: float = 1.0) -> None:
        self.cfg = cfg
        self.ttl = ttl
        self._lock = threading.Lock()
        self._value: str | None = None
        self._at = -math.inf
        # asks the exec plugin for a new credential now, whatever its expiry says (set by
        # kube.connection when the credential came from a plugin)
        self.renew_hook: Callable[[], None] | None = None
        self._refused: set[str] = set()

    def get(self) -> str | None:
        with self._lock:
            now = time.monotonic()
            if now - self._at >= self.ttl:
                self._value = self.cfg.get_api_key_with_prefix("BearerToken", alias="authorization") or None
                self._at = now
            return self._value

    def renewed(self, *, refused: str) -> str | None:
        """After a 401 for `refused`: the plugin's new credential, asked for once however many
        requests were refused with the same one (client-go's exec authenticator does the same on a
        401); None when there is no plugin or it gave the refused credential again."""
        if self.renew_hook is None:
            return None
        with self._lock:
            if self._value == refused and refused not in self._refused:
                self._refused.add(refused)  # asked once per refused credential, whatever follows
                self.renew_hook()
                self._value = self.cfg.get_api_key_with_prefix("BearerToken", alias="authorization") or None
                self._at = time.monotonic()
            return self._value if self._value and self._value != refused else None


class ConfigAuth(httpx.Auth):
    """The bearer token (or basic credentials), looked up per request (through the shared
    `BearerToken`, so a token the refresh hook renews is picked up within a second)."""

    def __init__(self, cfg: Any, token: BearerToken) -> None:
        self.cfg = cfg
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.token.get()
        if token:
            request.headers["Authorization"] = token
        elif self.cfg.username and self.cfg.password:
            request.headers["Authorization"] = self.cfg.get_basic_auth_token()
        response = yield request
        if response.status_code == 401 and token:
            # once, and only with a credential the plugin has just given anew: not a retry of
            # the refused one (verify.kube.retry never retries a 401)
            fresh = self.token.renewed(refused=token)
            if fresh:
                request.headers["Authorization"] = fresh
                yield request
