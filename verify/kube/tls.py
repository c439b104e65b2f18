"""The TLS context of every connection to the API server, from the kubeconfig's settings:
its CA (else the system's), `insecure-skip-tls-verify`, the client certificate, and
`tls-server-name`, the name sent in the handshake and checked against the certificate (client-go's
`TLSClientConfig.ServerName`)."""

from __future__ import annotations

import ssl
from typing import Any


class _NamedContext(ssl.SSLContext):
    """Every handshake names `server_name`, whatever host the connection was opened to: through a
    CONNECT tunnel too, where httpcore does not pass its `sni_hostname` on (http_proxy.py)."""

    server_name = ""

    def wrap_socket(self, *args: Any, **kw: Any) -> Any:
        kw["server_hostname"] = self.server_name
        return super().wrap_socket(*args, **kw)

    def wrap_bio(self, *args: Any, **kw: Any) -> Any:
        kw["server_hostname"] = self.server_name
        return super().wrap_bio(*args, **kw)


def client_context(
    *, verify: bool, cafile: str | None, cert_file: str | None, key_file: str | None, server_name: str | None
) -> ssl.SSLContext:
    """As ssl.create_default_context builds it (OSError/ValueError for an unreadable CA or key)."""
    context: ssl.SSLContext
    if server_name:
        context = _NamedContext(ssl.PROTOCOL_TLS_CLIENT)
        context.server_name = server_name
    else:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif cafile:
        context.load_verify_locations(cafile=cafile)
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if cert_file:
        context.load_cert_chain(cert_file, key_file)
    return context
