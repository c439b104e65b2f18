"""Turn observations into verdicts: pure comparison, so every rule is unit-testable.

Secret-backed files never get a digest in any detail text: a digest of a short secret is
as good as the secret to anyone who can brute-force it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from verify.model import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerObservation,
    ContainerVerdict,
    Expectations,
    ExpectedEnv,
    ExpectedFile,
    PodObservation,
    PodVerdict,
    Uninspectable,
    expectations_for,
)

SHORT_DIGEST = 12
ENV_MISSING_DETAIL = "not set in the container"
FILE_MISSING_DETAIL = "not found or unreadable"


def _origin_phrase(expected: ExpectedFile) -> str:
    return "the expected sha256" if expected.origin == "sha256" else expected.origin


def _file_check(expected: ExpectedFile, actual: str | None) -> CheckResult:
    if actual is None:
        return CheckResult("file", expected.path, CheckStatus.MISSING, FILE_MISSING_DETAIL)
    if actual.lower() == expected.sha256.lower():
        return CheckResult("file", expected.path, CheckStatus.OK)
    detail = f"content differs from {_origin_phrase(expected)}"
    if not expected.secret:
        detail += (
            f" (expected {expected.sha256.lower()[:SHORT_DIGEST]}, found {actual.lower()[:SHORT_DIGEST]})"
        )
    return CheckResult("file", expected.path, CheckStatus.MISMATCH, detail)


def _env_check(key: str, observation: ContainerObservation, expected: ExpectedEnv | None) -> CheckResult:
    if key not in observation.env_present:
        return CheckResult("env", key, CheckStatus.MISSING, ENV_MISSING_DETAIL)
    if expected is not None and observation.env_digests.get(key) != expected.digest:
        return CheckResult("env", key, CheckStatus.MISMATCH, f"value differs from {expected.origin}")
    return CheckResult("env", key, CheckStatus.OK)


def _judge_container(observation: ContainerObservation, expectations: Expectations) -> ContainerVerdict:
    if observation.error is not None:
        return ContainerVerdict(observation.container, (), observation.error)
    values = {v.key: v for v in expectations.env_values}
    checks = [_env_check(key, observation, values.get(key)) for key in expectations.env]
    checks.extend(_file_check(f, observation.file_hashes.get(f.path)) for f in expectations.files)
    return ContainerVerdict(observation.container, tuple(checks))


def judge_pod(
    *, observation: PodObservation, expectations: Expectations | Mapping[str, Expectations]
) -> PodVerdict:
    """One pod's verdict; a target container without an observation counts as uninspectable.

    `expectations` is one set for every container, or a set per container name (from the spec).
    """
    pod = observation.pod
    if observation.error is not None:
        return PodVerdict(pod.name, pod.node, (), observation.error)
    seen = {c.container: c for c in observation.containers}
    verdicts = [
        _judge_container(c, expectations_for(expectations, c.container)) for c in observation.containers
    ]
    for name in pod.containers:
        if name not in seen:
            verdicts.append(
                ContainerVerdict(
                    name,
                    (),
                    Uninspectable("exec_failed", "no observation was recorded", permanent=False),
                )
            )
    return PodVerdict(pod.name, pod.node, tuple(verdicts))


def judge_attempt(
    *,
    selection_revision: str,
    observations: Sequence[PodObservation],
    expectations: Expectations | Mapping[str, Expectations],
    problems: Sequence[str],
    permanent_problems: Sequence[str] = (),
    diagnosis: Sequence[str] = (),
) -> AttemptVerdict:
    """The verdict of one inspect pass over one revision's pods."""
    return AttemptVerdict(
        revision=selection_revision,
        pods=tuple(judge_pod(observation=o, expectations=expectations) for o in observations),
        problems=tuple(problems),
        permanent_problems=tuple(permanent_problems),
        diagnosis=tuple(diagnosis),
    )
