"""A static web server standing in for an image's own (nginx, httpd): it serves the image's
document root (written there from the image's layer: node/images.py), `index.html` for a
directory, and the server's own error pages: 404 for a missing file, 403 for a directory without
an index (no listing: nothing of the host is ever shown), with the server's `Server` header.
Stdlib only: it runs on the container's python (the host's)."""

from __future__ import annotations

import argparse
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_TYPES = {
    ".html": "text/html",
    ".css": "text/css",
    ".js": "application/javascript",
    ".json": "application/json",
}


def error_page(code: int, reason: str, server: str) -> bytes:
    """nginx's error page (the other servers' are close enough for a client that reads a status)."""
    title = f"{code} {reason}"
    name = server.split()[0]
    return (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n"
        f"<hr><center>{name}</center>\r\n</body>\r\n</html>\r\n"
    ).encode()


def handler(root: Path, server: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = server
        sys_version = ""
        protocol_version = "HTTP/1.1"

        def version_string(self) -> str:
            return server

        def log_message(self, format: str, *args: object) -> None:
            sys.stdout.write(
                f'{self.client_address[0]} - - "{self.requestline}" {args[1] if len(args) > 1 else ""}\n'
            )
            sys.stdout.flush()

        def _answer(self, head: bool) -> None:
            path = self.path.split("?", 1)[0].split("#", 1)[0]
            target = (root / path.lstrip("/")).resolve()
            if root.resolve() not in (target, *target.parents):
                return self._error(404, "Not Found", head)
            if target.is_dir():
                if not path.endswith("/"):
                    self.send_response(301)
                    self.send_header("Location", path + "/")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                target = target / "index.html"
                if not target.is_file():
                    return self._error(403, "Forbidden", head)
            if not target.is_file():
                return self._error(404, "Not Found", head)
            body = target.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", _TYPES.get(target.suffix, "application/octet-stream"))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            return None

        def _error(self, code: int, reason: str, head: bool) -> None:
            body = error_page(code, reason, server)
            self.send_response(code)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer(head=False)

        def do_HEAD(self) -> None:
            self._answer(head=True)

    return Handler


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port", type=int, default=80)
    p.add_argument("--server", default="nginx")
    args = p.parse_args()
    os.makedirs(args.root, exist_ok=True)
    ThreadingHTTPServer(("0.0.0.0", args.port), handler(Path(args.root), args.server)).serve_forever()


if __name__ == "__main__":
    main()
