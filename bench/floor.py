"""(c), the floor: the least client that does rollout-verify's reads, run by `make bench` beside it.

It lists the Deployment's pods once and opens one WebSocket exec per pod, `--concurrency` at a
time, sending the product's probe command and input (given by the bench in a JSON file), and counts
the execs that ended with a Success status. Nothing else: no settings model, no kubeconfig merging,
no waiting for the rollout, no selection of a revision, no judging, no report. It uses the same
transport libraries as the product (httpx for REST, websocket-client for the exec WebSocket) and
one TLS context for every connection, so the difference (b)/(c) is what the product's own work
costs. It imports nothing of `verify` or `tests`: its start-up is the interpreter, those two
libraries and PyYAML.

    python -m bench.floor KUBECONFIG SPEC.json
"""

from __future__ import annotations

import base64
import json
import ssl
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import websocket
import yaml

_CLOSE = 8  # websocket.ABNF.OPCODE_CLOSE


def _tls(cluster: dict[str, Any]) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if cluster.get("certificate-authority-data"):
        pem = base64.b64decode(cluster["certificate-authority-data"]).decode()
        ctx.load_verify_locations(cadata=pem)
    elif cluster.get("certificate-authority"):
        ctx.load_verify_locations(cafile=cluster["certificate-authority"])
    return ctx


def _exec(server: str, ctx: ssl.SSLContext, token: str, path: str, query: str, stdin: bytes) -> bool:
    ws = websocket.WebSocket(sslopt={"context": ctx}, skip_utf8_validation=True)
    ws.connect(
        f"wss://{server.split('://', 1)[1]}{path}?{query}",
        header=[f"authorization: Bearer {token}", "sec-websocket-protocol: v4.channel.k8s.io"],
    )
    try:
        ws.send_binary(b"\x00" + stdin)
        status = b""
        while True:
            opcode, data = ws.recv_data(control_frame=True)
            if opcode == _CLOSE:
                break
            if data[:1] == b"\x03":
                status += data[1:]
        return json.loads(status or b"{}").get("status") == "Success"
    finally:
        ws.shutdown()  # the server has closed the stream: no closing handshake to wait for


def main(argv: list[str]) -> int:
    kubeconfig, spec_file = argv
    with open(kubeconfig, encoding="utf-8") as fh:
        kc = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    with open(spec_file, encoding="utf-8") as fh:
        spec = json.load(fh)
    cluster = kc["clusters"][0]["cluster"]
    token = kc["users"][0]["user"]["token"]
    server = cluster["server"]
    ctx = _tls(cluster)
    ns = spec["namespace"]
    with httpx.Client(base_url=server, verify=ctx, headers={"Authorization": f"Bearer {token}"}) as http:
        pods = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": spec["selector"]}).json()
    names = [p["metadata"]["name"] for p in pods["items"]]
    query = urlencode(
        [("command", a) for a in spec["argv"]]
        + [("container", spec["container"]), ("stderr", "true"), ("stdin", "true"), ("stdout", "true")]
    )
    stdin = spec["stdin"].encode()

    def one(pod: str) -> bool:
        path = f"/api/v1/namespaces/{quote(ns)}/pods/{quote(pod)}/exec"
        return _exec(server, ctx, token, path, query, stdin)

    with ThreadPoolExecutor(max_workers=int(spec["concurrency"])) as pool:
        ok = sum(pool.map(one, names))
    print(f"{ok}/{len(names)} execs succeeded")
    return 0 if ok == len(names) else 1


def write_spec(*, argv: list[str], stdin: str, concurrency: int, selector: str, container: str) -> str:
    """The floor's SPEC.json (in a temp file the caller removes): what to exec, as the product does."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(
            {
                "argv": argv,
                "stdin": stdin,
                "concurrency": concurrency,
                "selector": selector,
                "container": container,
                "namespace": "default",
            },
            fh,
        )
        return fh.name


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
