"""Pydantic's validation errors as one-line messages: the validators' own text where they raised,
a plain phrase otherwise, and never a repr() of something that may be a secret."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from verify.config.values import what
from verify.redact import one_line as _one_line
from verify.redact import short


def error_message(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    """(location, one-line message) of the first pydantic error, for any model here."""
    return _message(exc.errors()[0])


def error_messages(exc: ValidationError) -> list[tuple[tuple[Any, ...], str]]:
    """(location, one-line message) of every pydantic error, one per field and position."""
    out: dict[tuple[Any, ...], str] = {}
    for err in exc.errors():
        loc, message = _message(err)
        out.setdefault(loc, message)
    return list(out.items())


def _message(err: Any) -> tuple[tuple[Any, ...], str]:
    loc = tuple(err.get("loc", ()))
    field = str(loc[0]) if loc else ""
    ctx = err.get("ctx") or {}
    if err["type"] == "missing":
        return loc, "is required"
    if isinstance(ctx.get("error"), ValueError):
        return loc, _one_line(str(ctx["error"]))
    value = err.get("input")
    shown = f'"{short(value)}"' if isinstance(value, str) else what(value)
    if err["type"] == "bool_parsing":
        return loc, f"{shown} is not a boolean; use true or false"
    if err["type"] == "literal_error" and field == "restart":
        return loc, f'{shown} is not a restart mode; use "once" or "never"'
    if err["type"] == "literal_error":  # --color blue: the words it takes, as the other lines say
        return loc, f"{shown} is not one of {ctx.get('expected', 'the allowed values')}"
    if err["type"] == "extra_forbidden":
        return loc, "is not a known setting"
    return loc, _one_line(f"{shown}: {err['msg']}")
