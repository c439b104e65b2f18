"""kube.proxies: the proxy for the API server as Go's ProxyFromEnvironment chooses it
(golang.org/x/net/http/httpproxy/proxy.go), which kubectl uses."""

from __future__ import annotations

import pytest

from verify.kube.proxies import from_environment, normalized

P = "http://proxy.corp:3128"


@pytest.mark.parametrize(
    ("server", "env", "wanted"),
    [
        ("https://api.example.com", {"HTTPS_PROXY": P}, P),
        ("https://api.example.com", {"https_proxy": P}, P),
        ("https://api.example.com", {"HTTP_PROXY": P}, None),  # never HTTP_PROXY for https
        ("https://api.example.com:6443", {"HTTPS_PROXY": "proxy.corp:3128"}, P),  # scheme-less
        ("https://api.example.com", {"HTTPS_PROXY": "http://proxy.corp"}, "http://proxy.corp:80"),
        ("https://127.0.0.1:6443", {"HTTPS_PROXY": P}, None),  # loopback never
        ("https://[::1]:6443", {"HTTPS_PROXY": P}, None),
        ("https://localhost:6443", {"HTTPS_PROXY": P}, None),
        ("https://api.example.com", {"HTTPS_PROXY": P, "NO_PROXY": "*"}, None),
        ("https://api.example.com", {"HTTPS_PROXY": P, "NO_PROXY": "example.com"}, None),  # subdomains too
        ("https://example.com", {"HTTPS_PROXY": P, "NO_PROXY": ".example.com"}, P),  # only subdomains
        ("https://api.example.com", {"HTTPS_PROXY": P, "NO_PROXY": "*.example.com"}, None),
        ("https://api.example.com", {"HTTPS_PROXY": P, "NO_PROXY": "xample.com"}, P),
        ("https://api.example.com:6443", {"HTTPS_PROXY": P, "NO_PROXY": "api.example.com:443"}, P),
        ("https://api.example.com:6443", {"HTTPS_PROXY": P, "NO_PROXY": "api.example.com:6443"}, None),
        ("https://10.1.2.3:6443", {"HTTPS_PROXY": P, "NO_PROXY": "10.0.0.0/8"}, None),
        ("https://10.1.2.3:6443", {"HTTPS_PROXY": P, "NO_PROXY": "10.1.2.3"}, None),
        ("https://11.1.2.3:6443", {"HTTPS_PROXY": P, "no_proxy": "10.0.0.0/8, 192.168.0.1"}, P),
        ("https://api.example.com", {}, None),
    ],
)
def test_the_environments_proxy_for_a_server(server: str, env: dict[str, str], wanted: str | None) -> None:
    assert from_environment(server, env) == wanted


def test_a_proxy_url_gets_its_schemes_default_port() -> None:
    assert normalized("https://proxy.corp") == "https://proxy.corp:443"
    assert normalized("http://user:pw@proxy.corp:8080") == "http://user:pw@proxy.corp:8080"
