"""Kubeconfig *content* from a CI secret: decoded, its secrets found for masking, put in a 0600 file.

CI systems hold credentials as secret strings, not files. The content never reaches a log: errors
name only the line and column, and every token-like value can be masked before anything prints.
"""

from __future__ import annotations

import base64
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import yaml

from verify.config.yamlsafe import YamlRefused, load_kubeconfig

# keys whose string values are credentials (users[].user.token, client-key-data, auth-provider
# config access-token/id-token/refresh-token/client-secret, exec env values named *TOKEN*, ...)
_SECRET_KEY = re.compile(r"token|password|secret|key-data|credential", re.IGNORECASE)
# exec args that carry a secret as the next argument or after `=` (`kubelogin get-token
# --client-secret S`, as `kubelogin convert-kubeconfig --client-secret` writes it)
_SECRET_FLAG = re.compile(r"^--?[\w-]*(secret|password|token)$", re.IGNORECASE)
_MIN_MASK = 6  # shorter values would mask ordinary words in the log


class KubeconfigDataError(ValueError):
    """The content is not a kubeconfig; the message never quotes the content."""


_NOT_KUBECONFIG = (
    "is neither a kubeconfig nor base64 of one; give the kubeconfig file's YAML or JSON, or base64 of it"
)


def _parse(text: str) -> dict[str, Any] | None:
    try:
        doc = load_kubeconfig(text)
    except YamlRefused as e:
        raise KubeconfigDataError(f"at line {e.line}: {e}; fix the content") from None
    except RecursionError:
        raise KubeconfigDataError("is nested too deeply") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise KubeconfigDataError(f"is not valid YAML or JSON{where}") from None
    return doc if isinstance(doc, dict) else None


def decode(*, data: str) -> str:
    """The kubeconfig text from `data`: YAML/JSON as is, or base64 of it (as many CI docs store it)."""
    text = data.strip()
    if not text:
        raise KubeconfigDataError("is empty")
    doc = None
    try:
        doc = _parse(text)
    except KubeconfigDataError:
        if "\n" in text:
            raise
    if doc is not None and ("clusters" in doc or "users" in doc or "contexts" in doc):
        return text + "\n"
    try:
        decoded = base64.b64decode("".join(text.split()), validate=True).decode()
    except ValueError:  # binascii.Error, UnicodeDecodeError, and non-ASCII input
        raise KubeconfigDataError(_NOT_KUBECONFIG) from None
    inner = _parse(decoded)
    if inner is None or not ("clusters" in inner or "users" in inner or "contexts" in inner):
        raise KubeconfigDataError(_NOT_KUBECONFIG)
    return decoded


def _walk(node: Any, key: str = "") -> Iterator[str]:
    if isinstance(node, dict):
        if {"name", "value"} <= node.keys() and _SECRET_KEY.search(str(node["name"])):
            yield from _walk(node["value"], "token")  # exec env entries: {name: X_TOKEN, value: ...}
        for k, v in node.items():
            yield from _walk(v, str(k))
    elif isinstance(node, list):
        if key == "args":
            yield from _secret_args([str(item) for item in node])
        for item in node:
            yield from _walk(item, key)
    elif isinstance(node, str) and _SECRET_KEY.search(key):
        yield node


def _secret_args(args: list[str]) -> Iterator[str]:
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if _SECRET_FLAG.search(name):
            if eq:
                yield value
            elif i + 1 < len(args):
                yield args[i + 1]


def secret_values(*, text: str) -> list[str]:
    """Token-like values in a kubeconfig (tokens, passwords, private keys), longest first."""
    try:
        doc = _parse(text)
    except KubeconfigDataError:
        return []
    found = {v.strip() for v in _walk(doc) if len(v.strip()) >= _MIN_MASK}
    return sorted(found, key=lambda v: (-len(v), v))


def mask_values(*, data: str) -> list[str]:
    """Everything to mask for kubeconfig content `data`: its secrets, and `data` itself if base64."""
    try:
        text = decode(data=data)
    except KubeconfigDataError:
        return []
    values = secret_values(text=text)
    raw = data.strip()
    if text.strip() != raw and "\n" not in raw:
        values.insert(0, raw)
    return values


@contextmanager
def materialized(*, text: str) -> Iterator[str]:
    """A 0600 temp file holding `text` for the duration of the block, then removed."""
    fd, path = tempfile.mkstemp(prefix="rollout-verify-", suffix=".kubeconfig")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        yield path
    finally:
        with suppress(FileNotFoundError):
            os.unlink(path)
