"""Which proxy carries the requests to the API server, decided as kubectl decides it: the
cluster's `proxy-url` when the kubeconfig has one, else Go's `http.ProxyFromEnvironment`
(golang.org/x/net/http/httpproxy/proxy.go, which client-go's transport uses): `HTTPS_PROXY` for
an https server (never `HTTP_PROXY`), skipped for localhost, loopback addresses and whatever
`NO_PROXY` names. Pure: the environment is passed in."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443, "socks5": 1080}


def normalized(url: str) -> str:
    """`proxy:3128` is `http://proxy:3128` (as httpproxy's parseProxy); a missing port is the
    scheme's default, which the exec client needs spelled out."""
    if "://" not in url:
        url = f"http://{url}"
    parts = urlsplit(url)
    if parts.port is None and parts.hostname:
        port = DEFAULT_PORTS.get(parts.scheme.lower())
        if port is not None:
            url = parts._replace(netloc=f"{parts.netloc}:{port}").geturl()
    return url


def from_environment(server: str, environ: Mapping[str, str]) -> str | None:
    """The proxy for `server` (an API server URL) from the environment, or None."""
    parts = urlsplit(server)
    scheme = (parts.scheme or "https").lower()
    key = "HTTPS_PROXY" if scheme == "https" else "HTTP_PROXY"
    value = environ.get(key) or environ.get(key.lower()) or ""
    if not value or not _use_proxy(parts.hostname or "", parts.port or DEFAULT_PORTS.get(scheme, 0), environ):
        return None
    return normalized(value)


def _use_proxy(host: str, port: int, environ: Mapping[str, str]) -> bool:
    host = host.lower().strip("[]")
    if host == "localhost":
        return False
    ip = _ip(host)
    if ip is not None and ip.is_loopback:
        return False
    for entry in (environ.get("NO_PROXY") or environ.get("no_proxy") or "").split(","):
        if _matches(entry.strip().lower(), host, ip, str(port)):
            return False
    return True


IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def _matches(entry: str, host: str, ip: IP | None, port: str) -> bool:
    """One NO_PROXY entry as httpproxy's config.init reads it: `*`, a CIDR, an IP or a domain
    (`foo.com` also matches its subdomains, `.foo.com` and `*.foo.com` only them), each with an
    optional `:port`."""
    if not entry:
        return False
    if entry == "*":
        return True
    try:
        net = ipaddress.ip_network(entry, strict=False) if "/" in entry else None
    except ValueError:
        net = None
    if net is not None:
        return ip is not None and ip in net
    want_port = ""
    name = entry
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        want_port = rest.lstrip(":")
    elif entry.count(":") == 1:
        name, want_port = entry.split(":")
    if want_port and want_port != port:
        return False
    entry_ip = _ip(name)
    if entry_ip is not None:
        return ip is not None and ip == entry_ip
    if name.startswith("*."):
        name = name[1:]
    if not name:
        return False
    if name.startswith("."):
        return host.endswith(name)
    return host == name or host.endswith("." + name)


def _ip(text: str) -> IP | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None
