"""The suite's leak guard (tests/conftest.py) catches what it is for."""

from __future__ import annotations

import base64
import hashlib

from tests.support.helpers import kubeconfig_tokens, leaks

SECRET = "planted-guard-value-0b1e"


def test_a_secret_in_any_form_is_caught_and_never_quoted() -> None:
    for form in (
        SECRET,
        base64.b64encode(SECRET.encode()).decode(),
        hashlib.sha256(SECRET.encode()).hexdigest()[:12],
    ):
        problems = leaks(f"rollout-verify: pod p {form}\n", {SECRET})
        assert problems and all(SECRET not in p for p in problems)


def test_masking_lines_are_exempt_and_clean_output_passes() -> None:
    assert leaks(f"::add-mask::{SECRET}\nrollout-verify: PASSED\n", {SECRET}) == []


def test_a_traceback_is_caught() -> None:
    assert leaks("Traceback (most recent call last):\n  File x\n", set()) == [
        "rollout-verify printed a traceback"
    ]


def test_kubeconfig_credentials_are_found() -> None:
    text = '{"users": [{"name": "u", "user": {"token": "tok-123456789", "client-key-data": "a2V5LWRhdGE="}}]}'
    assert sorted(kubeconfig_tokens(text)) == ["a2V5LWRhdGE=", "tok-123456789"]
