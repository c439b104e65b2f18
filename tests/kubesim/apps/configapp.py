"""A tiny HTTP app for kubesim containers: pure stdlib, run with the host's `python3`, which a
container sees through its overlay of the host root.

    python3 tests/kubesim/apps/configapp.py [PORT]

Endpoints:
  GET /health   200 "ok" always: the shallow check a Service's load balancer sees.
  GET /config   JSON {"pod", "config_version", "feature_credential", "required", "missing"}:
                200, or 503 when a key named in REQUIRED_ENV is absent. It reports only whether
                env keys are present, never a value.
  GET /trickle  200, then one byte every 200 ms for a minute: an app that never finishes answering.
  *   /echo     JSON of the request as received (method, path, query, headers, body), for proxy tests.

It stops at once on SIGTERM, as a well-behaved server does (its handler exits 143, as the
signal's default action would): as a container's PID 1 a process without a handler would ignore
the kubelet's SIGTERM and be killed only when its grace period is over.

Env (argv[1] overrides PORT):
  PORT                 listening port (default 8080)
  BIND_ADDRESS         address to bind (default 0.0.0.0; 127.0.0.1 listens on the pod's localhost only)
  CONFIG_VERSION       reported as config_version ...
  CONFIG_VERSION_FILE  ... unless this file exists: its stripped content wins
  CREDENTIAL_ENV       the env key reported as feature_credential (default FEATURE_CREDENTIAL)
  REQUIRED_ENV         comma-separated env keys /config requires
  HEALTH_STATUS        status of /health (default 200)

Each request is logged to stdout as `METHOD PATH STATUS`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def config_report() -> tuple[int, dict[str, object]]:
    version = os.environ.get("CONFIG_VERSION", "")
    path = os.environ.get("CONFIG_VERSION_FILE", "")
    if path:
        try:
            with open(path) as f:
                version = f.read().strip()
        except OSError:
            pass
    cred = os.environ.get("CREDENTIAL_ENV", "FEATURE_CREDENTIAL")
    required = [k.strip() for k in os.environ.get("REQUIRED_ENV", "").split(",") if k.strip()]
    missing = [k for k in required if k not in os.environ]
    body: dict[str, object] = {
        "pod": os.environ.get("HOSTNAME", ""),
        "config_version": version,
        "feature_credential": cred in os.environ,
        "required": required,
        "missing": missing,
    }
    return (503 if missing else 200), body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "configapp/1"

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: object) -> None:
        self._send(status, json.dumps(obj, sort_keys=True).encode() + b"\n", "application/json")

    def _handle(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        if url.path == "/echo":
            self._json(
                200,
                {
                    "pod": os.environ.get("HOSTNAME", ""),
                    "method": self.command,
                    "path": url.path,
                    "raw_query": url.query,
                    "query": parse_qs(url.query),
                    "headers": {k: v for k, v in self.headers.items()},
                    "body": data.decode(errors="replace"),
                },
            )
        elif url.path == "/health" and self.command in ("GET", "HEAD"):
            self._send(int(os.environ.get("HEALTH_STATUS", "200")), b"ok\n", "text/plain; charset=utf-8")
        elif url.path == "/config" and self.command in ("GET", "HEAD"):
            status, body = config_report()
            self._json(status, body)
        elif url.path == "/trickle":
            # a stuck app: the headers, then a byte every 200 ms for a minute
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            for _ in range(300):
                try:
                    self.wfile.write(b".")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.2)
        else:
            self._send(404, b"404 page not found\n", "text/plain; charset=utf-8")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = _handle

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        print(f"{self.command} {self.path} {code}", flush=True)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main(argv: list[str]) -> int:
    port = int(argv[1] if len(argv) > 1 else os.environ.get("PORT", "8080"))
    server = ThreadingHTTPServer((os.environ.get("BIND_ADDRESS", "0.0.0.0"), port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: os._exit(128 + signal.SIGTERM))
    print(f"configapp listening on {server.server_address[0]}:{port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
