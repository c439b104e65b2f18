"""What the exec probe is sent and what its answer means: argv in, one line per check out.

Values never leave the pod: the probe reports whether a key is set, the inner hash of an HMAC of
its value under the run's random key, and the sha256 of each file."""

from __future__ import annotations

import hashlib
import re
import secrets
from importlib import resources

from verify.findings import ContainerObservation, Expectations, Uninspectable


def script(name: str) -> str:
    """A probe as sent, whole: the shared input reader (probe_input.sh), then the probe itself."""
    here = resources.files("verify.flow.probe")
    return "".join(here.joinpath(n).read_text(encoding="utf-8") for n in ("probe_input.sh", name))


def _wire(name: str) -> str:
    """What is sent: every exec carries the script URL-encoded in its query, so comments and
    indentation would cost each exec's encoding, request and parse (and the pod's sh) for nothing."""
    lines = script(name).splitlines()
    return "\n".join(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


PROBE = script("probe.sh")
WIRE_PROBE = _wire("probe.sh")
# run in rollout-verify's ephemeral debug container: reads the target's /proc/1 (debug_probe.sh)
WIRE_DEBUG_PROBE = _wire("debug_probe.sh")


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


PROBE_ARGV = ("sh", "-c", WIRE_PROBE, "rollout-verify")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def probe_argv() -> list[str]:
    """The exec's command: the same for every container and every run, whatever is expected."""
    return list(PROBE_ARGV)


def debug_probe_argv() -> list[str]:
    """The exec's command in a debug container: the same input and answer lines as probe_argv's."""
    return ["sh", "-c", WIRE_DEBUG_PROBE, "rollout-verify"]


def _line(arg: str) -> str:
    if "\n" not in arg:
        return f"l{arg}\n"
    return "o" + "".join(f"\\{b:03o}" for b in arg.encode()) + "\n"


def probe_input(expectations: Expectations, run_key: RunKey | None = None) -> str:
    """What the probe reads on stdin: the keys, the pad and the paths, so that none of them is in
    the exec's URL (the same length for 1 key or 1,000, and nothing of the run key in audit logs)."""
    args: list[str] = []
    if expectations.env:
        args += ["=rv-env", *expectations.env]
    if expectations.env_values and run_key is not None:
        args += ["=rv-ipad", run_key.ipad_format(), "=rv-val", *(v.key for v in expectations.env_values)]
    if expectations.files:
        args += ["=rv-file", *(f.path for f in expectations.files)]
    if expectations.env_from:
        args.append("=rv-names")
    return "".join(_line(a) for a in args) + "e\n"


def parse_probe(
    *, container: str, stdout: str, expectations: Expectations, run_key: RunKey | None = None
) -> ContainerObservation:
    """Turn the probe's lines into an observation; anything unexpected is uninspectable."""
    present: set[str] = set()
    hashes: dict[str, str | None] = {}
    unreadable: set[str] = set()
    digests: dict[str, str] = {}
    resolved: dict[str, str] = {}
    names: set[str] = set()
    paths = [f.path for f in expectations.files]
    ended = False
    # lines end with "\n" only: str.splitlines would also cut at \r, \x85, \u2028, ...
    for line in stdout.split("\n"):
        kind, _, rest = line.partition(" ")
        if kind == "env":
            flag, _, key = rest.partition(" ")
            if flag == "1":
                present.add(key)
        elif kind == "name" and _NAME.fullmatch(rest):
            names.add(rest)
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
        elif kind == "real":
            position, _, real = rest.partition(" ")
            if position.isdigit() and 1 <= int(position) <= len(paths) and real.startswith("/"):
                resolved[paths[int(position) - 1]] = real
        elif kind == "notool":
            return ContainerObservation(
                container=container,
                error=Uninspectable(
                    "tool_missing",
                    f"tool missing: {rest[:40]} (the probe needs it in the image; a restart cannot add it; "
                    "--debug-image brings it in an ephemeral debug container)",
                    permanent=True,
                ),
            )
        elif kind == "notarget":
            why = (
                "the debug container cannot read the target's process (/proc/1): it runs as another "
                "user; give the container a runAsUser (the debug container takes the same) or use a "
                "debug image running as the image's user (e.g. gcr.io/distroless/static:debug-nonroot)"
                if rest == "denied"
                else "the debug container does not share the target's process namespace"
            )
            return ContainerObservation(
                container=container, error=Uninspectable("debug_failed", why, permanent=True)
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
        resolved_files=resolved,
        unreadable_files=frozenset(unreadable),
        env_digests=digests,
        env_names=frozenset(names) if expectations.env_from else None,
    )
