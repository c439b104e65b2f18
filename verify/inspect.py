"""The exec probe: one exec per container reports which expected env keys are set and the
sha256 of each expected file. Values never leave the pod; only key names and digests do."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import hashlib
import json
import queue
import re
import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import quote, urlencode

from verify import retry
from verify.kube import UNTRUSTED_MARKER, UNTRUSTED_REASON, BearerToken
from verify.model import (
    ContainerObservation,
    Expectations,
    PodObservation,
    PodTarget,
    Uninspectable,
)
from verify.redact import one_line
from verify.retry import Deadline

if TYPE_CHECKING:
    from verify.kube import Api

# POSIX sh only: busybox, dash and bash images all run it. Arguments are data, never code:
# only shell identifiers ever reach `eval`, paths are passed as argv. The section markers start
# with `=`, which no env name (`-` and `.` are allowed) and no absolute path can.
PROBE = r"""
__rv_m=
__rv_ipad=
__rv_i=0
for __rv_a in "$@"; do
  case "$__rv_a" in
    =rv-env) __rv_m=env; continue;; =rv-file) __rv_m=file; continue;;
    =rv-val) __rv_m=val; continue;; =rv-ipad) __rv_m=ipad; continue;;
  esac
  if [ "$__rv_m" = ipad ]; then
    __rv_ipad=$__rv_a
  elif [ "$__rv_m" = env ]; then
    case "$__rv_a" in
      *[!A-Za-z0-9_]*|[0-9]*|IFS|OPTIND|OPTARG|OPTERR|PPID|PS1|PS2|PS3|PS4|PWD|OLDPWD|PATH|LINENO|RANDOM|SRANDOM|SECONDS|SHLVL|SHELL|SHELLOPTS|TERM|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|UID|EUID|GROUPS|DIRSTACK|PIPESTATUS|FUNCNAME|EPOCHSECONDS|EPOCHREALTIME|MAIL|MAILCHECK|HISTFILE|HISTSIZE|HISTFILESIZE|HISTCMD|COLUMNS|LINES|BASH*|_|__rv_*)
        # not a shell identifier (allowed by the kubelet; dash does not export it), or a name the
        # shell sets itself: read the shell's own initial environment, one entry per line (a
        # newline inside a value becomes \001, so a value cannot fake another entry)
        if { tr '\000\n' '\n\001' < /proc/$$/environ 2>/dev/null || env; } |
          { while IFS= read -r __rv_l; do case "$__rv_l" in "$__rv_a="*) exit 0;; esac; done; exit 1; }
        then printf 'env 1 %s\n' "$__rv_a"; else printf 'env 0 %s\n' "$__rv_a"; fi;;
      *)
        if eval "[ -n \"\${$__rv_a+x}\" ]"; then printf 'env 1 %s\n' "$__rv_a"
        else printf 'env 0 %s\n' "$__rv_a"; fi;;
    esac
  elif [ "$__rv_m" = val ]; then
    case "$__rv_a" in *[!A-Za-z0-9_]*|[0-9]*|'') printf 'val - %s\n' "$__rv_a"; continue;; esac
    if eval "[ -n \"\${$__rv_a+x}\" ]"; then
      command -v sha256sum >/dev/null 2>&1 || { printf 'notool sha256sum\n'; exit 0; }
      eval "__rv_v=\${$__rv_a}"
      __rv_h=$({ printf "$__rv_ipad"; printf '%s' "$__rv_v"; } | sha256sum)
      __rv_v=
      printf 'val %s %s\n' "${__rv_h%% *}" "$__rv_a"
    else
      printf 'val - %s\n' "$__rv_a"
    fi
  else
    # files are reported by position: a path may hold a newline
    __rv_i=$((__rv_i + 1))
    if [ ! -f "$__rv_a" ]; then
      printf 'file - %s\n' "$__rv_i"
    elif [ ! -r "$__rv_a" ]; then
      printf 'file ! %s\n' "$__rv_i"
    else
      command -v sha256sum >/dev/null 2>&1 || { printf 'notool sha256sum\n'; exit 0; }
      __rv_h=$(sha256sum < "$__rv_a") || { printf 'file ! %s\n' "$__rv_i"; continue; }
      printf 'file %s %s\n' "${__rv_h%% *}" "$__rv_i"
    fi
  fi
done
printf 'end\n'
"""
# What is sent: every exec carries the script URL-encoded in its query, so comments and
# indentation would cost each exec's encoding, request and parse (and the pod's sh) for nothing.
WIRE_PROBE = "\n".join(
    line.strip() for line in PROBE.splitlines() if line.strip() and not line.lstrip().startswith("#")
)

_HANDSHAKE = re.compile(r"Handshake status (\d{3})")
_MESSAGE = re.compile(r'"message":\s*"((?:[^"\\]|\\.)*)"')
# websocket-client folds the response headers (keys lower-cased) into its handshake error text
_RETRY_AFTER = re.compile(r"""['"]retry-after['"]:\s*['"](\d{1,3}(?:\.\d+)?)['"]""", re.IGNORECASE)
# how long past its budget an exec's thread is waited for before it is given up (its own reads
# end at the budget; this only catches a call that has no timeout at all)
_GIVE_UP_GRACE = 1.0
# what the apiserver or the kubelet says of a container that is not running (yet)
_NOT_RUNNING = ("container not found", "is waiting to start", "does not have a host assigned")
# exec failures after which the pod itself may be gone (deleted while it was being inspected)
_MAYBE_GONE = ("exec_failed", "not_running", "pod_gone")


class RunKey:
    """The run's random HMAC key. The pod computes the inner hash of HMAC-SHA256 (its printf
    writes the ipad bytes as octal escapes) and we finish the outer one, so values never leave
    the pod and digests are useless outside this run."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key or secrets.token_bytes(32)
        padded = self.key.ljust(64, b"\0")
        self.ipad = bytes(b ^ 0x36 for b in padded)
        self.opad = bytes(b ^ 0x5C for b in padded)

    def ipad_format(self) -> str:
        return "".join(f"\\{b:03o}" for b in self.ipad)

    def finish(self, inner_hex: str) -> str:
        return hashlib.sha256(self.opad + bytes.fromhex(inner_hex)).hexdigest()


def probe_argv(expectations: Expectations, run_key: RunKey | None = None) -> list[str]:
    argv = ["sh", "-c", WIRE_PROBE, "rollout-verify"]
    if expectations.env:
        argv += ["=rv-env", *expectations.env]
    if expectations.env_values and run_key is not None:
        argv += ["=rv-ipad", run_key.ipad_format(), "=rv-val", *(v.key for v in expectations.env_values)]
    if expectations.files:
        argv += ["=rv-file", *(f.path for f in expectations.files)]
    return argv


def parse_probe(
    *, container: str, stdout: str, expectations: Expectations, run_key: RunKey | None = None
) -> ContainerObservation:
    """Turn the probe's lines into an observation; anything unexpected is uninspectable."""
    present: set[str] = set()
    hashes: dict[str, str | None] = {}
    unreadable: set[str] = set()
    digests: dict[str, str] = {}
    paths = [f.path for f in expectations.files]
    ended = False
    # lines end with "\n" only: str.splitlines would also cut at \r, \x85, \u2028, ...
    for line in stdout.split("\n"):
        kind, _, rest = line.partition(" ")
        if kind == "env":
            flag, _, key = rest.partition(" ")
            if flag == "1":
                present.add(key)
        elif kind == "val" and run_key is not None:
            inner, _, key = rest.partition(" ")
            if inner != "-" and re.fullmatch(r"[0-9a-f]{64}", inner):
                digests[key] = run_key.finish(inner)
        elif kind == "file":
            digest, _, position = rest.partition(" ")
            if not position.isdigit() or not 1 <= int(position) <= len(paths):
                continue
            path = paths[int(position) - 1]
            hashes[path] = None if digest in ("-", "!") else digest.lower()
            if digest == "!":
                unreadable.add(path)
        elif kind == "notool":
            return ContainerObservation(
                container=container,
                error=Uninspectable("tool_missing", f"the image has no {rest} to hash files", permanent=True),
            )
        elif kind == "end":
            ended = True
    if not ended:
        return ContainerObservation(
            container=container,
            error=Uninspectable("exec_failed", "the probe's output was cut short", permanent=False),
        )
    return ContainerObservation(
        container=container,
        env_present=frozenset(present & set(expectations.env)),
        file_hashes=hashes,
        unreadable_files=frozenset(unreadable),
        env_digests=digests,
    )


def _status_error(status: dict[str, Any], *, container: str) -> Uninspectable | None:
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
            "no_shell", "the image has no shell (sh): exec cannot run the probe", permanent=True
        )
    if status.get("reason") == "NonZeroExitCode":
        causes = (status.get("details") or {}).get("causes") or [{}]
        return Uninspectable(
            "exec_failed",
            f"the probe exited with code {causes[0].get('message', '?')}",
            permanent=False,
        )
    return Uninspectable("exec_failed", f"exec failed: {msg[:200]}", permanent=False)


def _handshake_parts(text: str) -> tuple[int, str]:
    """(HTTP status or 0, Status message) of a refused exec upgrade; never the headers or body.
    The message is one printable line: it is the server's text, and it reaches logs."""
    m = _HANDSHAKE.search(text)
    code = int(m.group(1)) if m else 0
    if not code:
        return 0, ""
    # websocket-client ends the text with the body: its text (1.9), or its bytes as Python
    # writes them, b'...' (older releases)
    body = text.rpartition(" -+-+- ")[2].strip()
    if body.startswith(("b'", 'b"')):
        try:
            raw = ast.literal_eval(body)
            body = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            body = ""
    msg = ""
    try:
        status = json.loads(body) if body.startswith("{") else None
        if isinstance(status, dict):
            msg = str(status.get("message", ""))
    except (ValueError, RecursionError):
        mm = _MESSAGE.search(body)
        if mm:
            try:
                msg = json.loads(f'"{mm.group(1)}"')
            except ValueError:
                msg = mm.group(1)
    if not msg and body != "None" and not body.startswith("{"):  # None: no body at all
        # the kubelet's own refusals are plain text, which the apiserver's proxy passes on (v4):
        # `container not found ("app")`
        msg = body[:300]
    return code, one_line(msg)


def handshake_retry(text: str) -> tuple[bool, float | None]:
    """Whether a refused exec upgrade is a fault worth asking again, and the server's Retry-After.

    The same policy as every REST call (`retry.retryable`): connection failures, 5xx, 429 and the
    warming-up 403; but not the apiserver's 500 for a container that is not running, which is the
    pod's state rather than a fault."""
    code, msg = _handshake_parts(text)
    m = _RETRY_AFTER.search(text)
    hint = float(m.group(1)) if m else None
    if code == 0:
        return UNTRUSTED_MARKER not in text, None
    if any(marker in msg for marker in _NOT_RUNNING):
        return False, None
    return retry.retryable(code, msg), hint


class _Refused(retry.Transient):
    """A refused exec upgrade being retried; `error` is the verdict if it never succeeds."""

    def __init__(self, error: Uninspectable, retry_after: float | None) -> None:
        super().__init__(error.reason, retry_after=retry_after)
        self.error = error


def classify_handshake(text: str, *, namespace: str, pod: str, container: str) -> Uninspectable:
    """Map a refused exec upgrade (the client folds status and body into one string) to a reason."""
    code, msg = _handshake_parts(text)
    if code == 0 and UNTRUSTED_MARKER in text:
        # asking again cannot make the certificate trusted, and neither can a restart
        return Uninspectable("exec_failed", UNTRUSTED_REASON, permanent=True)
    if code == 403 and retry.transient_forbidden(msg):
        return Uninspectable(
            "exec_failed",
            "exec refused: the API server was not ready to handle requests (403)",
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
    if code == 403:
        # an admission webhook or policy engine denying exec: its own words are the reason
        return Uninspectable("forbidden", f"exec refused (HTTP 403): {msg[:200]}", permanent=True)
    if code == 404 and msg == f'pods "{pod}" not found':
        return Uninspectable("pod_gone", f"pod {pod} no longer exists", permanent=False)
    if any(marker in msg for marker in _NOT_RUNNING):
        return Uninspectable("not_running", f"container {container} is not running", permanent=False)
    if code == 400 and "is not valid for pod" in msg:
        return Uninspectable("not_running", f"container {container} is not in the pod", permanent=False)
    if code == 0:
        return Uninspectable("exec_failed", "exec connection failed before the upgrade", permanent=False)
    return Uninspectable(
        "exec_failed", f"exec refused (HTTP {code})" + (f": {msg[:200]}" if msg else ""), permanent=False
    )


class _Final(Exception):
    """A refused exec upgrade that asking again cannot change."""

    def __init__(self, error: Uninspectable) -> None:
        super().__init__(error.reason)
        self.error = error


def pod_gone(*, api: Api, namespace: str, pod: PodTarget) -> Uninspectable | None:
    """Why the pod is gone, if it is: deleted (or being deleted) while it was inspected."""
    from verify.kube import KubeError

    try:
        live = api.get(f"/api/v1/namespaces/{namespace}/pods/{pod.name}")
    except KubeError as e:
        if e.status != 404:
            return None
        return Uninspectable("pod_gone", f"pod {pod.name} was deleted during inspection", permanent=False)
    meta = live.get("metadata") or {}
    if pod.uid and meta.get("uid") not in (None, pod.uid):
        return Uninspectable(
            "pod_gone", f"pod {pod.name} was deleted and recreated during inspection", permanent=False
        )
    if meta.get("deletionTimestamp"):
        return Uninspectable(
            "pod_gone", f"pod {pod.name} is terminating (deleted during inspection)", permanent=False
        )
    return None


@functools.lru_cache(maxsize=16)
def _command_query(argv: tuple[str, ...]) -> str:
    """`command=` parameters as `ws_client.get_websocket_url` encodes them, once per probe: every
    container with the same expectations sends the same (kilobytes long) command."""
    return urlencode([("command", a) for a in argv])


def _exec_query(argv: tuple[str, ...], container: str) -> str:
    rest = [
        ("container", container),
        ("stderr", "true"),
        ("stdin", "false"),
        ("stdout", "true"),
        ("tty", "false"),
    ]
    return f"{_command_query(argv)}&{urlencode(rest)}"


T = TypeVar("T")


class _Box(Generic[T]):
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


class Daemons:
    """Daemon threads for calls that may never return (the official client's exec has no socket
    timeout): the caller waits with a limit and gives up. A given-up call keeps its thread and a
    new one is started when none is idle, so the pool never shrinks, and exit never waits for a
    stuck thread. Threads are reused: starting one per call costs ~0.3 ms of CPU."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], _Box[Any]]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def run(self, fn: Callable[[], T], *, timeout: float) -> T | None:
        """`fn()`, or None once `timeout` seconds have passed; its exceptions are raised here."""
        box: _Box[T] = _Box()
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        if spawn:
            threading.Thread(target=self._work, name="rollout-verify exec", daemon=True).start()
        self._queue.put((fn, box))
        if not box.done.wait(timeout):
            return None
        if box.error is not None:
            raise box.error
        return box.value

    def _work(self) -> None:
        while True:
            fn, box = self._queue.get()
            try:
                box.value = fn()
            except BaseException as e:  # handed to the caller, raised there
                box.error = e
            with self._lock:
                self._idle += 1
            box.done.set()


class Inspector:
    """Runs the probe in every selected container with bounded parallelism."""

    def __init__(
        self,
        *,
        configuration: Any,
        exec_timeout: float,
        concurrency: int,
        run_key: RunKey | None = None,
        deadline: Deadline | None = None,
        api: Api | None = None,
        token: BearerToken | None = None,
        slots: threading.BoundedSemaphore | None = None,
    ) -> None:
        self.run_key = run_key or RunKey()
        self.token = token or BearerToken(configuration)
        self.deadline = deadline
        # to tell "the pod was deleted under us" from other exec failures (optional)
        self.api = api
        # (websocket-client's setdefaulttimeout never reaches the official client's exec
        # socket: each exec is bounded by running it on `Daemons`, see `_exec`)
        self.configuration = configuration
        self.exec_timeout = exec_timeout
        self.concurrency = concurrency
        # one budget of parallel execs for the whole run, however many workloads inspect at once
        self.slots = slots or threading.BoundedSemaphore(concurrency)
        self._daemons = Daemons()

    def _open(self, *, namespace: str, pod: str, container: str, argv: list[str]) -> Any:
        """The official client's WebSocket exec (`kubernetes.stream.ws_client`), called directly:
        the generated CoreV1Api costs ~0.4 s to import and is not thread-safe under `stream()`."""
        from kubernetes.stream import ws_client

        cfg = self.configuration
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}/exec"
        url = ws_client.get_websocket_url(f"{cfg.host}{path}?{_exec_query(tuple(argv), container)}")
        headers = {}
        token = self.token.get()
        if token:
            headers["authorization"] = token
        try:
            return ws_client.WSClient(cfg, url, headers, True)
        except Exception as e:
            # the same shape `stream()` raises: ApiException(status=0, reason=<handshake text>)
            from kubernetes.client.exceptions import ApiException

            raise ApiException(status=0, reason=str(e)) from None

    def inspect_container(
        self, *, namespace: str, pod: PodTarget, container: str, expectations: Expectations
    ) -> ContainerObservation:
        with self.slots:
            obs = self._exec(namespace=namespace, pod=pod, container=container, expectations=expectations)
        if obs.error is not None and obs.error.code in _MAYBE_GONE:
            gone = None if self.api is None else pod_gone(api=self.api, namespace=namespace, pod=pod)
            if gone is not None:
                return ContainerObservation(container=container, error=gone)
        return obs

    def _exec(
        self, *, namespace: str, pod: PodTarget, container: str, expectations: Expectations
    ) -> ContainerObservation:
        # One budget per exec, retries of a refused upgrade included: --exec-timeout, and never
        # past the run's --timeout.
        limit = self.exec_timeout
        if self.deadline is not None:
            limit = min(limit, self.deadline.remaining())
            if limit <= 0:
                return ContainerObservation(
                    container=container,
                    error=Uninspectable(
                        "timeout", "the run's --timeout ran out before this exec", permanent=False
                    ),
                )
        budget = Deadline(limit)
        # The official client's WebSocket has no socket timeout (websocket-client's default one
        # only reaches create_connection): an API server that never answers the upgrade would
        # block this thread for good. The exec runs in a daemon thread and is given up at its
        # budget; reads after the upgrade get the budget as their socket timeout, so a stalled
        # stream ends its thread too.
        try:
            obs = self._daemons.run(
                lambda: self._exec_within(
                    budget,
                    namespace=namespace,
                    pod=pod,
                    container=container,
                    expectations=expectations,
                    limit=limit,
                ),
                timeout=limit + _GIVE_UP_GRACE,
            )
        except Exception as e:  # a bug here is this container's verdict, never a hung run
            return ContainerObservation(
                container=container,
                error=Uninspectable("exec_failed", f"exec failed: {type(e).__name__}", permanent=False),
            )
        if obs is not None:
            return obs
        return ContainerObservation(
            container=container,
            error=Uninspectable(
                "timeout",
                f"exec did not finish within {limit:g}s (timed out: the API server never answered)",
                permanent=False,
            ),
        )

    def _exec_within(
        self,
        budget: Deadline,
        *,
        namespace: str,
        pod: PodTarget,
        container: str,
        expectations: Expectations,
        limit: float,
    ) -> ContainerObservation:
        argv = probe_argv(expectations, self.run_key)

        def open_once() -> Any:
            from kubernetes.client.exceptions import ApiException

            try:
                return self._open(namespace=namespace, pod=pod.name, container=container, argv=argv)
            except ApiException as e:
                text = str(e.reason)
                error = classify_handshake(text, namespace=namespace, pod=pod.name, container=container)
                again, hint = handshake_retry(text)
                if again:
                    raise _Refused(error, hint) from None
                raise _Final(error) from None

        try:
            ws = retry.call(open_once, deadline=budget, base=0.1, cap=2.0)
        except _Refused as e:  # still refused when the exec's budget ran out
            return ContainerObservation(container=container, error=e.error)
        except _Final as e:
            return ContainerObservation(container=container, error=e.error)
        except Exception as e:
            return ContainerObservation(
                container=container,
                error=Uninspectable("exec_failed", f"exec failed: {type(e).__name__}", permanent=False),
            )
        try:
            left = budget.remaining()
            if left > 0:
                # every read, not only the wait for the first byte, ends with the budget
                ws.sock.settimeout(left)
                # run_forever(timeout=0) would wait without limit: only ever give it a positive one
                ws.run_forever(timeout=left)
            if ws.is_open():
                return ContainerObservation(
                    container=container,
                    error=Uninspectable(
                        "timeout",
                        f"exec did not finish within {limit:g}s (timed out)",
                        permanent=False,
                    ),
                )
            out = ws.read_stdout() or ""
            err_text = ws.read_stderr() or ""
            raw_status = ws.read_channel(3) or ""
        except Exception as e:
            # a dropped or reset stream mid-exec is this container's verdict, not the run's crash
            return ContainerObservation(
                container=container,
                error=Uninspectable("exec_failed", f"exec stream broke: {type(e).__name__}", permanent=False),
            )
        finally:
            with contextlib.suppress(Exception):
                ws.close()
        try:
            status = (
                json.loads(raw_status) if raw_status else {"status": "Failure", "message": "no exec status"}
            )
        except ValueError:
            status = {"status": "Failure", "message": "unreadable exec status"}
        err = _status_error(status, container=container)
        if err is not None:
            if err.code == "exec_failed" and err_text.strip():
                # the probe's own shell errors (never env values: it prints none)
                first = "".join(c if c.isprintable() else "?" for c in err_text.strip().splitlines()[0][:160])
                err = dataclasses.replace(err, reason=f"{err.reason}: {first}")
            return ContainerObservation(container=container, error=err)
        return parse_probe(container=container, stdout=out, expectations=expectations, run_key=self.run_key)

    def inspect(
        self,
        *,
        namespace: str,
        pods: Sequence[PodTarget],
        expectations_for: Callable[[str], Expectations],
        only: Callable[[tuple[str, str]], bool] | None = None,
    ) -> list[PodObservation]:
        """One exec per (pod, container), `concurrency` at a time; `only` narrows a re-check."""
        jobs = [(p, c) for p in pods for c in p.containers if only is None or only((p.name, c))]

        def one(pc: tuple[PodTarget, str]) -> ContainerObservation:
            expected = expectations_for(pc[1])
            if not (expected.env or expected.files or expected.env_values):
                # nothing to read in this container (e.g. only HTTP checks): no exec at all
                return ContainerObservation(container=pc[1])
            return self.inspect_container(
                namespace=namespace, pod=pc[0], container=pc[1], expectations=expected
            )

        with ThreadPoolExecutor(max_workers=max(1, min(self.concurrency, len(jobs) or 1))) as pool:
            results = list(pool.map(one, jobs))
        by_pod: dict[str, list[ContainerObservation]] = {}
        for (p, _), obs in zip(jobs, results, strict=True):
            by_pod.setdefault(p.name, []).append(obs)
        return [
            PodObservation(pod=p, containers=tuple(by_pod.get(p.name, [])))
            for p in pods
            if only is None or p.name in by_pod
        ]
