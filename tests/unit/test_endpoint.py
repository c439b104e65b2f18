"""kube.loading, kube.endpoint and kube.credentials read a kubeconfig as the official client's
loader does (judged here by that loader itself, kubernetes/config/kube_config.py
`load_kube_config_from_dict`), without importing it."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from verify.kube import credentials, endpoint, loading

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _kubeconfig(cluster: dict[str, Any], user: dict[str, Any], **ctx: Any) -> dict[str, Any]:
    return {
        "clusters": [
            {"name": "c", "cluster": cluster},
            {"name": "other", "cluster": {"server": "https://o"}},
        ],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", **ctx}}],
        "current-context": "x",
    }


def _official(doc: dict[str, Any], context: str | None = None) -> Any:
    cfg = client.Configuration()
    config.load_kube_config_from_dict(doc, context=context, client_configuration=cfg, persist_config=False)
    return cfg


def _read(path: str | None) -> str | None:
    return Path(path).read_text() if path else None


class Ours:
    """What the connection path reads from a merged kubeconfig: the endpoint and the credential."""

    def __init__(self, doc: dict[str, Any], context: str | None = None) -> None:
        selection = loading.select_context(doc, context=context)
        self.endpoint = endpoint.resolve(selection, environ={})
        self.credentials = credentials.resolve(selection, endpoint=self.endpoint, timeout=5, environ={})


def _same(ours: Ours, theirs: Any) -> None:
    assert ours.endpoint.host == theirs.host
    assert ours.endpoint.verify_ssl == theirs.verify_ssl
    assert ours.endpoint.tls_server_name == theirs.tls_server_name
    assert ours.credentials.authorization() == theirs.get_api_key_with_prefix(
        "BearerToken", alias="authorization"
    )
    assert _read(ours.endpoint.ssl_ca_cert) == _read(theirs.ssl_ca_cert)
    assert _read(ours.credentials.cert_file) == _read(theirs.cert_file)
    assert _read(ours.credentials.key_file) == _read(theirs.key_file)


@pytest.mark.parametrize(
    ("cluster", "user"),
    [
        ({"server": "https://k.example:6443/", "certificate-authority-data": _b64(PEM)}, {"token": "t0k"}),
        (
            {
                "server": "https://k.example",
                "insecure-skip-tls-verify": True,
                "tls-server-name": "api.internal",
            },
            {"username": "ann", "password": "pw:x"},
        ),
        (
            {"server": "https://k.example", "certificate-authority-data": _b64(PEM)},
            {"client-certificate-data": _b64("CERT\n"), "client-key-data": _b64("KEY\n")},
        ),
        ({"server": "http://plain.example:8080"}, {"client-certificate-data": _b64("CERT\n")}),
        ({"server": "https://k.example"}, {}),
    ],
    ids=[
        "token-and-ca-data",
        "basic-insecure-server-name",
        "client-cert-data",
        "http-ignores-certs",
        "no-auth",
    ],
)
def test_endpoint_reads_what_the_official_loader_reads(cluster: dict[str, Any], user: dict[str, Any]) -> None:
    doc = _kubeconfig(cluster, user)
    _same(Ours(doc), _official(doc))


def test_file_references_and_token_file_are_read_as_the_official_loader_reads_them(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text(PEM)
    (tmp_path / "tok").write_text("from-a-file")
    (tmp_path / "c.crt").write_text("CERT\n")
    (tmp_path / "c.key").write_text("KEY\n")
    user = {"tokenFile": str(tmp_path / "tok"), "client-certificate": str(tmp_path / "c.crt")}
    user["client-key"] = str(tmp_path / "c.key")
    doc = _kubeconfig({"server": "https://k", "certificate-authority": str(tmp_path / "ca.crt")}, user)
    ours = Ours(doc)
    _same(ours, _official(doc))
    assert ours.endpoint.ssl_ca_cert == str(tmp_path / "ca.crt")  # the file itself, not a copy


def test_a_named_context_is_used_over_the_current_one() -> None:
    doc = _kubeconfig({"server": "https://k"}, {"token": "a"})
    doc["contexts"].append({"name": "y", "context": {"cluster": "other", "user": "nobody"}})
    ours = Ours(doc, context="y")
    _same(ours, _official(doc, context="y"))
    assert ours.endpoint.host == "https://o" and ours.credentials.authorization() is None


@pytest.mark.parametrize(
    "broken",
    [
        lambda d: d.pop("current-context"),
        lambda d: d.__setitem__("current-context", "missing"),
        lambda d: d["contexts"][0]["context"].__setitem__("cluster", "gone"),
        lambda d: d["contexts"][0]["context"].pop("cluster"),
        lambda d: d["contexts"].append({"name": "x", "context": {"cluster": "c"}}),
        lambda d: d["clusters"][0]["cluster"].__setitem__("certificate-authority", "/nonexistent/ca.crt"),
    ],
    ids=[
        "no-current-context",
        "unknown-context",
        "unknown-cluster",
        "context-without-cluster",
        "twice",
        "no-ca",
    ],
)
def test_a_broken_kubeconfig_gets_the_official_loaders_words(broken: Any) -> None:
    doc = _kubeconfig({"server": "https://k"}, {"token": "a"})
    broken(doc)
    with pytest.raises(ConfigException) as theirs:
        _official(doc)
    with pytest.raises(loading.KubeconfigInvalid) as ours:
        Ours(doc)
    assert str(ours.value) == str(theirs.value)
