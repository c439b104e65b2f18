"""JSON and Status responses, and the apiserver's reading of a boolean query parameter."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..storage.errors import ApiError


def status_response(err: ApiError) -> web.Response:
    body = json.dumps(err.status()).encode()
    headers = {}
    if err.code == 429 and err.details:
        headers["Retry-After"] = str(err.details.get("retryAfterSeconds", 1))
    return web.Response(status=err.code, body=body, content_type="application/json", headers=headers)


def json_response(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=json.dumps(obj).encode(), content_type="application/json")


def flag(v: str | None) -> bool:
    return v is not None and v.lower() not in ("0", "false")
