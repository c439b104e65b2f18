"""What a refused or failed exec means: who refused it (the API server, a proxy in front of it,
the kubelet, the container), with which status, and whether asking again can help. Pure: it
reads the text the WebSocket client folds a refused upgrade into, or the Status an exec ended
with, and does no I/O."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from verify.findings import Uninspectable
from verify.kube import retry
from verify.kube.api import UNTRUSTED_MARKER, tls_reason
from verify.redact import one_line

_HANDSHAKE = re.compile(r"Handshake status (\d{3})")
_MESSAGE = re.compile(r'"message":\s*"((?:[^"\\]|\\.)*)"')
# websocket-client folds the response headers (keys lower-cased) into its handshake error text
_RETRY_AFTER = re.compile(r"""['"]retry-after['"]:\s*['"](\d{1,3}(?:\.\d+)?)['"]""", re.IGNORECASE)
# what the apiserver or the kubelet says of a container that is not running (yet)
_NOT_RUNNING = ("container not found", "is waiting to start", "does not have a host assigned")
# client-error statuses that say "not now" rather than "not this request"
_TRANSIENT_4XX = (408, 425, 429)


# Who refuses an exec, and how: the API server with a JSON `Status` (429/5xx, 408/504, the 403
# `not yet ready to handle request` of admission plugins whose caches have not synced,
# apiserver pkg/admission/plugin/webhook/generic/webhook.go; 500 `error dialing backend` when it
# cannot reach the kubelet, apimachinery pkg/util/proxy/upgradeaware.go). The kubelet in plain
# text (404, 429 with Retry-After, 500: kubernetes pkg/kubelet/cri/streaming/errors.go), passed
# through on v4, or on v5 as `unable to upgrade connection: <its text>` on the error channel
# (apimachinery pkg/util/proxy/streamtranslator.go). A proxy in front of the API server with an
# HTML page, no body or its own text, or a 200 when it does not pass WebSocket upgrades at all.
API_SERVER = "the API server"
KUBELET = "the kubelet"
PROXY = "a proxy in front of the API server"
_UPGRADE_FAILED = "unable to upgrade connection: "
_DIALING = "error dialing backend"


def status_error(status: dict[str, Any], *, container: str) -> Uninspectable | None:
    """Classify the error-channel Status of a finished exec (None: success)."""
    if status.get("status") == "Success":
        return None
    msg = one_line(str(status.get("message", "")))
    if any(marker in msg for marker in _NOT_RUNNING):
        # an apiserver >= 1.30 speaking v5 upgrades first, then reports the kubelet's refusal
        # here: "Internal error occurred: unable to upgrade connection: container not found"
        return Uninspectable("not_running", f"container {container} is not running", permanent=False)
    if "executable file not found" in msg or "no such file or directory" in msg:
        return Uninspectable(
            "no_shell",
            "the image has no shell (sh): exec cannot run the probe; --debug-image IMAGE "
            "(VERIFY_DEBUG_IMAGE) inspects it through an ephemeral debug container",
            permanent=True,
        )
    if status.get("reason") == "NonZeroExitCode":
        causes = (status.get("details") or {}).get("causes") or [{}]
        return Uninspectable(
            "exec_failed",
            f"the container's probe exited with code {causes[0].get('message', '?')}",
            permanent=False,
        )
    code = status.get("code")
    shown = f" (HTTP {code})" if isinstance(code, int) else ""
    if _UPGRADE_FAILED in msg:
        # the stream translator's word for the kubelet refusing the stream it asked for
        said = msg.partition(_UPGRADE_FAILED)[2]
        return Uninspectable(
            "exec_failed", f"exec refused by {KUBELET}{shown}: {said[:200]}", permanent=False
        )
    return Uninspectable("exec_failed", f"exec failed{shown}: {msg[:200]}", permanent=False)


def _handshake_parts(text: str) -> tuple[int, str, str]:
    """(HTTP status or 0, message, body shape) of a refused exec upgrade; never the headers or
    the body itself. The shape is "status" (the API server's JSON Status), "html", "text" or
    "none". The message is one printable line: it is the server's text, and it reaches logs."""
    m = _HANDSHAKE.search(text)
    code = int(m.group(1)) if m else 0
    if not code:
        return 0, "", "none"
    # websocket-client ends the text with the body: its text (1.9), or its bytes as Python
    # writes them, b'...' (older releases)
    body = text.rpartition(" -+-+- ")[2].strip()
    if body.startswith(("b'", 'b"')):
        try:
            raw = ast.literal_eval(body)
            body = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            body = ""
    msg, shape = "", "none"
    try:
        status = json.loads(body) if body.startswith("{") else None
        if isinstance(status, dict):
            msg, shape = str(status.get("message", "")), "status"
    except (ValueError, RecursionError):
        mm = _MESSAGE.search(body)
        if mm:
            shape = "status"
            try:
                msg = json.loads(f'"{mm.group(1)}"')
            except ValueError:
                msg = mm.group(1)
    if shape == "none" and body not in ("", "None"):  # None: no body at all
        if body.lstrip()[:1] == "<":
            shape = "html"  # a proxy's error page: its markup says nothing worth a log line
        else:
            # the kubelet's own refusals are plain text, which the apiserver's proxy passes on (v4):
            # `container not found ("app")`
            msg, shape = body[:300], "text"
    return code, one_line(msg), shape


def _refuser(code: int, msg: str, shape: str) -> str:
    """Who answered the exec's upgrade with `code` (see the notes above `API_SERVER`)."""
    if shape == "status":
        return API_SERVER
    if shape == "text" and code in (404, 429, 500):
        return KUBELET
    return PROXY


def handshake_retry(text: str) -> tuple[bool, float | None]:
    """Whether a refused exec upgrade is a fault worth asking again, and the server's Retry-After.

    The same policy as every REST call (`retry.retryable`): connection failures, 5xx, 429 and the
    warming-up 403; but not the apiserver's 500 for a container that is not running, which is the
    pod's state rather than a fault."""
    code, msg, _ = _handshake_parts(text)
    m = _RETRY_AFTER.search(text)
    hint = float(m.group(1)) if m else None
    if code == 0:
        return UNTRUSTED_MARKER not in text, None
    if any(marker in msg for marker in _NOT_RUNNING):
        return False, None
    return retry.retryable(code, msg), hint


def classify_handshake(text: str, *, namespace: str, pod: str, container: str) -> Uninspectable:
    """Map a refused exec upgrade (the client folds status and body into one string) to a reason
    that names who refused it and with which status."""
    code, msg, shape = _handshake_parts(text)
    if code == 0 and UNTRUSTED_MARKER in text:
        # asking again cannot make the certificate trusted, and neither can a restart
        return Uninspectable("exec_failed", tls_reason(text), permanent=True)
    if code == 403 and retry.transient_forbidden(msg):
        return Uninspectable(
            "exec_failed",
            f"exec refused by {API_SERVER} (HTTP 403): it was not ready to handle requests yet ({msg[:200]})",
            permanent=False,
        )
    if code == 403 and retry.rbac_denial(msg):
        user = re.search(r'User "([^"]*)"', msg)
        who = f" for {user.group(1)}" if user else ""
        # a WebSocket exec is authorised as `get` (and, from 1.35, `create` too): name the one denied
        verb = re.search(r'\bcannot ([a-z]+) resource "pods/exec"', msg)
        return Uninspectable(
            "forbidden",
            f"exec forbidden{who}: missing RBAC rule `{verb.group(1) if verb else 'create'} pods/exec` "
            f"in namespace {namespace}",
            permanent=True,
        )
    refuser = _refuser(code, msg, shape)
    if code == 403 and shape == "status":
        # an admission webhook or policy engine denying exec: its own words are the reason
        return Uninspectable(
            "forbidden", f"exec refused by {refuser} (HTTP 403): {msg[:200]}", permanent=True
        )
    if code == 404 and msg == f'pods "{pod}" not found':
        return Uninspectable("pod_gone", f"pod {pod} no longer exists", permanent=False)
    if any(marker in msg for marker in _NOT_RUNNING):
        return Uninspectable("not_running", f"container {container} is not running", permanent=False)
    if code == 400 and "is not valid for pod" in msg:
        return Uninspectable("not_running", f"container {container} is not in the pod", permanent=False)
    if code == 0:
        # no HTTP answer to read: what came back was no WebSocket handshake (websocket-client's
        # "Invalid WebSocket Header": a 101 without a valid Sec-WebSocket-Accept or subprotocol),
        # or the connection failed. Its own text is not shown: it is a library's, not a server's
        what = (
            "the answer to the upgrade was no valid WebSocket handshake"
            if "Invalid WebSocket Header" in text
            else "the connection failed before the upgrade"
        )
        return Uninspectable("exec_failed", f"the exec's WebSocket upgrade failed: {what}", permanent=False)
    if code < 400:
        # no WebSocket came back, though nothing refused: asking again gets the same answer
        return Uninspectable(
            "exec_failed",
            f"the exec's WebSocket upgrade failed: {refuser} answered HTTP {code} instead of 101 "
            "Switching Protocols (it does not pass WebSocket upgrades)",
            permanent=True,
        )
    status = f"HTTP {code}, an HTML page" if shape == "html" else f"HTTP {code}"
    said = f": {msg[:200]}" if msg else ""
    reason = f"exec refused by {refuser} ({status}){said}"
    if shape == "status" and msg.startswith(_DIALING):
        reason = f"exec failed: {API_SERVER} could not reach {KUBELET} ({status}){said}"
    # the request itself is refused (an expired token 401, a URL or headers too large for a proxy
    # 414/431, a method a proxy does not pass 405, a malformed request 400): the pods are not the
    # cause, so neither asking again nor restarting them can change it
    permanent = 400 <= code < 500 and code not in _TRANSIENT_4XX
    return Uninspectable("exec_failed", reason, permanent=permanent)
