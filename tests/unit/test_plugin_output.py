"""What an exec credential plugin prints: its stderr masked in linear time on any input (a 5 KB
unbroken word took 3 s, 20 MB never ended, and held the signal handlers meanwhile), and its
ExecCredential checked as client-go checks it, with client-go's words
(staging/src/k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go `refreshCredsLocked`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from verify.errors import KubeConfigError
from verify.kube import plugins

MB = 1_000_000
ADVERSARIAL = {
    "one-word": "a" * (20 * MB),
    "non-ascii-word": "é" * (20 * MB),
    "jwt-starts": "eyJ" * (7 * MB),
    "keywords": "password" * (2_500_000),
    "keys-without-values": "password= " * (2 * MB),
    "bearer-words": "bearer " * (3 * MB),
    "open-quotes": '"password"="' * MB,
    "short-words": "x " * (10 * MB),
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_masking_a_20_mb_adversarial_stderr_takes_under_a_second(text: str) -> None:
    started = time.process_time()
    line = plugins.shown(text)
    assert time.process_time() - started < 1.0  # CPU seconds: a loaded machine stretches only wall time
    assert len(line) <= 200


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_the_masking_patterns_themselves_are_linear(text: str) -> None:
    """On 1 MB (past the 64 KiB masking reads) the patterns alone: quadratic ones took minutes."""
    started = time.process_time()
    plugins._masked(text[:MB])
    assert time.process_time() - started < 1.0


def test_masking_still_hides_tokens_and_named_secrets() -> None:
    said = plugins.shown(
        'user=password=s3cr3tvalue token: abc Authorization: Bearer xyz.abc "client_secret": "v4lue" '
        "eyJhbGciOiJ.eyJzdWIi.c2ln k8s-aws-v1.aHR0cHM6Ly9zdHM " + "Q" * 40
    )
    for secret in ("s3cr3tvalue", "abc", "xyz.abc", "v4lue", "eyJzdWIi", "aHR0cHM6", "Q" * 40):
        assert secret not in said, said
    assert "user=password=***" in said


def test_a_token_cut_by_the_64_kib_masking_read_is_dropped_whole_never_half_shown() -> None:
    token = "T0k3n" * 20  # 100 characters, a word of its own
    text = "word " * (64 * 1024 // 5 - 10) + token + " after"
    assert "T0k3n" not in plugins.shown(text)


def plugin(tmp_path: Path, printed: str) -> dict[str, Any]:
    path = tmp_path / "get-token"
    path.write_text(f"#!{sys.executable}\nimport sys\nsys.stdout.write({printed!r})\n")
    path.chmod(0o755)
    return {"apiVersion": "client.authentication.k8s.io/v1", "command": str(path)}


V1 = "client.authentication.k8s.io/v1"


@pytest.mark.parametrize(
    ("printed", "field", "words"),
    [
        ("{not json", "stdout", "decoding stdout: not a JSON ExecCredential at line 1 column 2"),
        ("[1, 2]", "stdout", "decoding stdout: a JSON list, not an ExecCredential object"),
        (
            json.dumps({"apiVersion": V1, "status": {"token": "t"}}),
            "kind",
            "decoding stdout: Object 'Kind' is missing",
        ),
        (
            json.dumps({"apiVersion": V1, "kind": "Secret", "status": {"token": "t"}}),
            "kind",
            'decoding stdout: no kind "Secret" is registered',
        ),
        (
            json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential"}),
            "apiVersion",
            f"exec plugin is configured to use API version {V1}, plugin returned version "
            "client.authentication.k8s.io/v1beta1",
        ),
        (
            json.dumps({"kind": "ExecCredential", "status": {"token": "t"}}),
            "apiVersion",
            f"exec plugin is configured to use API version {V1}, plugin returned version (none)",
        ),
        (
            json.dumps({"apiVersion": V1, "kind": "ExecCredential"}),
            "status",
            "exec plugin didn't return a status field",
        ),
        (
            json.dumps({"apiVersion": V1, "kind": "ExecCredential", "status": {}}),
            "status",
            "exec plugin didn't return a token or cert/key pair",
        ),
        (
            json.dumps(
                {"apiVersion": V1, "kind": "ExecCredential", "status": {"clientCertificateData": "C"}}
            ),
            "status",
            "exec plugin returned only certificate or key, not both",
        ),
        (
            json.dumps({"apiVersion": V1, "kind": "ExecCredential", "status": {"token": 42}}),
            "status.token",
            "decoding stdout: a int, not a string",
        ),
        (
            json.dumps(
                {
                    "apiVersion": V1,
                    "kind": "ExecCredential",
                    "status": {"token": "t", "expirationTimestamp": "soon"},
                }
            ),
            "status.expirationTimestamp",
            "decoding stdout: not an RFC 3339 time",
        ),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "no-kind",
        "wrong-kind",
        "wrong-apiversion",
        "no-apiversion",
        "no-status",
        "empty-status",
        "cert-without-key",
        "token-not-a-string",
        "bad-expiry",
    ],
)
def test_a_wrong_exec_credential_is_named_by_its_field_in_client_gos_words(
    tmp_path: Path, printed: str, field: str, words: str
) -> None:
    with pytest.raises(KubeConfigError) as e:
        plugins.run(plugin(tmp_path, printed), cluster={}, timeout=10, environ={"PATH": "/usr/bin:/bin"})
    assert str(e.value).startswith(
        f"kubeconfig exec plugin 'get-token' printed a wrong ExecCredential ({field}): {words}"
    )
    assert str(e.value).endswith(plugins.HINT)


def test_a_good_exec_credential_gives_its_token_and_expiry(tmp_path: Path) -> None:
    printed = json.dumps(
        {
            "apiVersion": V1,
            "kind": "ExecCredential",
            "status": {"token": "t0k", "expirationTimestamp": "2030-01-01T00:00:00Z"},
        }
    )
    given = plugins.run(plugin(tmp_path, printed), cluster={}, timeout=10, environ={"PATH": "/usr/bin:/bin"})
    assert given.token == "t0k" and given.expires is not None and given.expires.year == 2030


def test_an_exec_apiversion_client_go_does_not_know_is_refused_in_its_words() -> None:
    with pytest.raises(KubeConfigError) as e:
        plugins.configured_version({"apiVersion": "client.authentication.k8s.io/v1alpha1"}, user="ci")
    assert 'exec plugin: invalid apiVersion "client.authentication.k8s.io/v1alpha1"' in str(e.value)
    assert plugins.configured_version({}, user="ci") == V1
