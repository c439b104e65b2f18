"""What a run resolves, observes and judges, as plain data passed between the layers: the
expectations resolved from the cluster, each container's observation (key names and digests only),
each check's verdict (no I/O, no client objects, no secret values)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal

from verify.model import HttpExpectation


class CheckStatus(StrEnum):
    """Outcome of one check; order of severity is ok < missing < mismatch < uninspectable."""

    OK = "ok"
    MISSING = "missing"
    MISMATCH = "mismatch"
    UNINSPECTABLE = "uninspectable"


SEVERITY: dict[CheckStatus, int] = {
    CheckStatus.OK: 0,
    CheckStatus.MISSING: 1,
    CheckStatus.MISMATCH: 2,
    CheckStatus.UNINSPECTABLE: 3,
}

# The only failures a restart may ever be sent for: configuration the run saw to be stale. Anything
# else (a check that could not be made, and any status added later) never leads to a restart.
STALE = frozenset({CheckStatus.MISSING, CheckStatus.MISMATCH})


@dataclass(frozen=True)
class Source:
    """The live ConfigMap/Secret an expectation was read from (metadata only, never data)."""

    kind: Literal["configmap", "secret"]
    name: str
    immutable: bool = False
    uid: str = ""
    created: str = ""


@dataclass(frozen=True)
class ExpectedFile:
    """A file whose content must hash to `sha256`; `secret` marks digests never to print."""

    path: str
    sha256: str
    origin: str  # e.g. "sha256", "configmap testcm/script.py", "secret app/token"
    secret: bool = False
    source: Source | None = None
    subpath: bool = False  # a subPath mount: never refreshed by the kubelet
    volume: bool = False  # projected by a configMap/secret volume (refreshes every sync period)
    # mounted by the Secrets Store CSI driver from this SecretProviderClass (flow/csi.py); an
    # empty sha256 then asks only that the file exists
    provider_class: str = ""


@dataclass(frozen=True)
class ExpectedEnv:
    """An env value known from the spec, as an HMAC under the run's random key (never the value)."""

    key: str
    digest: str
    origin: str  # e.g. "secret web/FEATURE_CREDENTIAL", "the pod spec"
    secret: bool = False
    source: Source | None = None


@dataclass(frozen=True)
class Expectations:
    env: tuple[str, ...] = ()
    files: tuple[ExpectedFile, ...] = ()
    env_values: tuple[ExpectedEnv, ...] = ()
    # where each expected env key comes from (for diagnosis), e.g. {"FEATURE_CREDENTIAL": Source(...)}
    env_sources: tuple[tuple[str, Source], ...] = ()
    # the container's volume mounts as (normalized mountPath, "configmap" | "secret" | "other"):
    # a file's digest is shown only when its resolved path provably lies in a ConfigMap volume
    mounts: tuple[tuple[str, str], ...] = ()

    def merged(self, other: Expectations) -> Expectations:
        """Union, `other` winning on the same key/path."""
        env = tuple(dict.fromkeys((*self.env, *other.env)))
        files: dict[str, ExpectedFile] = {}
        for f in (*self.files, *other.files):
            prev = files.get(f.path)
            # a path known to be Secret-backed stays secret whichever expectation wins
            files[f.path] = replace(f, secret=True) if prev is not None and prev.secret else f
        values = {v.key: v for v in (*self.env_values, *other.env_values)}
        sources = dict((*self.env_sources, *other.env_sources))
        mounts = other.mounts or self.mounts
        files_, values_ = tuple(files.values()), tuple(values.values())
        return Expectations(env, files_, values_, tuple(sources.items()), mounts)


@dataclass(frozen=True)
class Uninspectable:
    """Why a container (or a whole pod) could not be inspected.

    `permanent` causes (no shell, exec forbidden) cannot be fixed by a restart.
    """

    code: Literal[
        "no_shell",
        "tool_missing",
        "debug_failed",
        "forbidden",
        "not_running",
        "pod_gone",
        "timeout",
        "exec_failed",
        "unreachable",
        # running and ready, unrestarted, from before the settle window to the exec's end: not so
        # (a crash loop, a readiness probe that failed); verified means stable (flow/stability.py)
        "unstable",
    ]
    reason: str
    permanent: bool


@dataclass(frozen=True)
class ContainerObservation:
    """What one exec into one container reported: key names and digests only."""

    container: str
    env_present: frozenset[str] = frozenset()
    # path -> sha256 hex, or None when the file is absent or unreadable
    file_hashes: dict[str, str | None] = field(default_factory=dict)
    # path -> where it leads in the pod once every link is followed (absent: not known)
    resolved_files: dict[str, str] = field(default_factory=dict)
    # files that exist but the exec's user cannot read: not "missing", and no restart fixes them
    unreadable_files: frozenset[str] = frozenset()
    # key -> HMAC of the value under the run key (only for keys with an ExpectedEnv)
    env_digests: dict[str, str] = field(default_factory=dict)
    error: Uninspectable | None = None


@dataclass(frozen=True)
class HttpObservation:
    """What one pod answered through the API server's pod proxy (never the body itself)."""

    check: HttpExpectation
    status: int | None = None
    value: str | None = None  # JSON text of the field's value; None when absent or not JSON
    error: Uninspectable | None = None


@dataclass(frozen=True)
class PodTarget:
    name: str
    node: str
    containers: tuple[str, ...]
    uid: str = ""


@dataclass(frozen=True)
class PodObservation:
    pod: PodTarget
    containers: tuple[ContainerObservation, ...] = ()
    error: Uninspectable | None = None  # set when the whole pod could not be inspected
    http: tuple[HttpObservation, ...] = ()


@dataclass(frozen=True)
class CheckResult:
    type: Literal["env", "file", "http"]
    subject: str  # what the check is about: an env key, a file path, an HTTP check's label
    status: CheckStatus
    detail: str = ""
    permanent: bool = False  # an uninspectable check a restart cannot fix (e.g. proxy forbidden)
    code: str = ""  # an uninspectable check's Uninspectable.code (e.g. "pod_gone")
    # the judgment of a failing check (see diagnose.remedy): whether one restart can make it pass
    # (None: not judged, as for a passing check) and why, in words a log line can carry
    restart_can_fix: bool | None = None
    why: str = ""


def restart_fixes(check: CheckResult) -> bool:
    """Whether one restart may be sent for this failing check: the one rule that the decision and
    the report's `restart_can_fix` both read, so they cannot disagree. Default deny: only
    configuration seen to be stale (missing/mismatch) that the judgment says a restart fixes."""
    return check.status in STALE and check.restart_can_fix is True


@dataclass(frozen=True)
class ContainerVerdict:
    name: str
    checks: tuple[CheckResult, ...]
    error: Uninspectable | None = None

    @property
    def status(self) -> CheckStatus:
        if self.error is not None:
            return CheckStatus.UNINSPECTABLE
        return max((c.status for c in self.checks), key=SEVERITY.__getitem__, default=CheckStatus.OK)


@dataclass(frozen=True)
class PodVerdict:
    name: str
    node: str
    containers: tuple[ContainerVerdict, ...]
    error: Uninspectable | None = None
    checks: tuple[CheckResult, ...] = ()  # pod-level checks (HTTP through the pod proxy)

    @property
    def status(self) -> CheckStatus:
        if self.error is not None:
            return CheckStatus.UNINSPECTABLE
        statuses = [*(c.status for c in self.containers), *(c.status for c in self.checks)]
        return max(statuses, key=SEVERITY.__getitem__, default=CheckStatus.OK)


@dataclass(frozen=True)
class AttemptVerdict:
    """One inspect-and-judge pass over the pods of one revision."""

    revision: str
    pods: tuple[PodVerdict, ...]
    # workload-level problems, e.g. "expected 3 pods of revision 2, found 2"
    problems: tuple[str, ...] = ()
    # workload-level problems a restart cannot fix, e.g. a requested container not in the template
    permanent_problems: tuple[str, ...] = ()
    diagnosis: tuple[str, ...] = ()  # why it failed and what to do, grouped by node and source

    @property
    def ok(self) -> bool:
        return (
            not self.problems
            and not self.permanent_problems
            and all(p.status is CheckStatus.OK for p in self.pods)
        )


def expectations_for(expectations: Expectations | Mapping[str, Expectations], container: str) -> Expectations:
    """One set for every container (explicit flags) or a set per container name (from the spec)."""
    if isinstance(expectations, Expectations):
        return expectations
    return expectations.get(container, Expectations())
