"""JSON and Status responses, and the apiserver's reading of a boolean query parameter."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..storage.errors import ApiError


def encode(obj: Any) -> bytes:
    """The apiserver's JSON serializer: json.Encoder.Encode, compact with a trailing newline."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def status_response(err: ApiError) -> web.Response:
    body = encode(err.status())
    headers = {}
    if err.code == 429 and err.details and err.details.get("retryAfterSeconds"):
        # none without one (an eviction a budget refuses): client-go would retry that one by itself
        headers["Retry-After"] = str(err.details["retryAfterSeconds"])
    return web.Response(status=err.code, body=body, content_type="application/json", headers=headers)


def json_response(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=encode(obj), content_type="application/json")


def flag(v: str | None) -> bool:
    return v is not None and v.lower() not in ("0", "false")
