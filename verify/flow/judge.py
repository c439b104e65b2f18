"""Turn observations into verdicts: pure comparison, so every rule is unit-testable.

A file's digest is shown only when the file provably comes from a ConfigMap (its path, resolved in
the pod, lies in a ConfigMap volume and in no Secret one); anything else "differs" without one: a
digest of a short secret is as good as the secret to anyone who can brute-force it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence

from verify.diagnose.remedy import stale_line
from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerObservation,
    ContainerVerdict,
    Expectations,
    ExpectedEnv,
    ExpectedFile,
    HttpObservation,
    PodObservation,
    PodVerdict,
    Uninspectable,
    expectations_for,
)
from verify.flow.derive import provably_configmap

SHORT_DIGEST = 12
MAX_VALUE = 64  # characters of a compared JSON value shown in a detail
ENV_MISSING_DETAIL = "not set in the container"
FILE_MISSING_DETAIL = "not found or unreadable"


def _origin_phrase(expected: ExpectedFile) -> str:
    return "the expected sha256" if expected.origin == "sha256" else expected.origin


def _file_check(
    expected: ExpectedFile, actual: str | None, *, resolved: str | None, mounts: Sequence[tuple[str, str]]
) -> CheckResult:
    if actual is None:
        return CheckResult("file", expected.path, CheckStatus.MISSING, FILE_MISSING_DETAIL)
    if not expected.sha256 or actual.lower() == expected.sha256.lower():  # "": presence only
        return CheckResult("file", expected.path, CheckStatus.OK)
    detail = f"content differs from {_origin_phrase(expected)}"
    # a digest only for a file that provably comes from a ConfigMap: resolved in the pod, it lies
    # in a ConfigMap volume and in no Secret one (a link, `/run` -> `/var/run`, can lead anywhere)
    if not expected.secret and provably_configmap(resolved, mounts):
        detail += (
            f" (expected {expected.sha256.lower()[:SHORT_DIGEST]}, found {actual.lower()[:SHORT_DIGEST]})"
        )
    return CheckResult("file", expected.path, CheckStatus.MISMATCH, detail)


def _unreadable(expected: ExpectedFile) -> CheckResult:
    return CheckResult(
        "file",
        expected.path,
        CheckStatus.UNINSPECTABLE,
        "exists but the exec's user cannot read it (file mode or ownership)",
        permanent=True,
        code="exec_failed",
    )


def _env_check(key: str, observation: ContainerObservation, expected: ExpectedEnv | None) -> CheckResult:
    if key not in observation.env_present:
        return CheckResult("env", key, CheckStatus.MISSING, ENV_MISSING_DETAIL)
    if expected is not None and observation.env_digests.get(key) != expected.digest:
        return CheckResult("env", key, CheckStatus.MISMATCH, f"value differs from {expected.origin}")
    return CheckResult("env", key, CheckStatus.OK)


def same_value(*, expected: str, actual: str) -> bool:
    """JSON values equal, or a scalar equal to an expected string (a ConfigMap holds strings:
    `42` matches "42", `true` matches "true")."""
    want, got = json.loads(expected), json.loads(actual)
    if type(want) is type(got) and want == got:
        return True
    if isinstance(want, str) and not isinstance(got, dict | list | str):
        return want == json.dumps(got)
    return False


def _shown(text: str) -> str:
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "..."


def judge_http(observation: HttpObservation) -> CheckResult:
    """One pod's answer to one HTTP check: status first, then the JSON field."""
    check = observation.check
    if observation.error is not None:
        err = observation.error
        return CheckResult(
            "http", check.label, CheckStatus.UNINSPECTABLE, err.reason, err.permanent, err.code
        )
    if observation.status != check.status:
        return CheckResult(
            "http",
            check.label,
            CheckStatus.MISMATCH,
            f"answered HTTP {observation.status}, expected {check.status}",
        )
    if check.field:
        if observation.value is None:
            return CheckResult(
                "http", check.label, CheckStatus.MISMATCH, f"has no JSON field {check.field} in its answer"
            )
        if not same_value(expected=check.equals, actual=observation.value):
            origin = f" ({check.origin})" if check.origin else ""
            return CheckResult(
                "http",
                check.label,
                CheckStatus.MISMATCH,
                f"JSON field {check.field} is {_shown(observation.value)}, "
                f"expected {_shown(check.equals)}{origin}",
            )
    return CheckResult("http", check.label, CheckStatus.OK)


def _judge_container(observation: ContainerObservation, expectations: Expectations) -> ContainerVerdict:
    if observation.error is not None:
        return ContainerVerdict(observation.container, (), observation.error)
    values = {v.key: v for v in expectations.env_values}
    checks = [_env_check(key, observation, values.get(key)) for key in expectations.env]
    checks.extend(
        _unreadable(f)
        if f.path in observation.unreadable_files
        else _file_check(
            f,
            observation.file_hashes.get(f.path),
            resolved=observation.resolved_files.get(f.path),
            mounts=expectations.mounts,
        )
        for f in expectations.files
    )
    return ContainerVerdict(observation.container, tuple(checks))


def judge_pod(
    *, observation: PodObservation, expectations: Expectations | Mapping[str, Expectations]
) -> PodVerdict:
    """One pod's verdict; a selected container without an observation counts as uninspectable.

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
    return PodVerdict(
        pod.name, pod.node, tuple(verdicts), checks=tuple(judge_http(h) for h in observation.http)
    )


# the names the kubelet itself sets from the Services it knows at a container's start
# (pkg/kubelet/envvars/envvars.go FromServices): they differ between pods started before and after
# a Service came or went, and no ConfigMap or Secret holds them
SERVICE_LINK = re.compile(
    r"[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)"
)


def stale_names(
    *, observations: Sequence[PodObservation], expectations: Expectations | Mapping[str, Expectations]
) -> dict[tuple[str, str], list[CheckResult]]:
    """(pod, container) -> a mismatch per env name it carries that the template's envFrom sources
    no longer provide (zero-config: the probe listed every name). A name counts only when another
    pod of the revision lacks it: the same name in every pod may be the image's own, which only
    the image could tell. A restart drops it: a new container reads the sources as they are."""
    seen: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for o in observations:
        for c in o.containers:
            if o.error is None and c.error is None and c.env_names is not None:
                seen.setdefault(c.container, []).append((o.pod.name, c.env_names))
    out: dict[tuple[str, str], list[CheckResult]] = {}
    for container, pods in seen.items():
        exp = expectations_for(expectations, container)
        provided = set(exp.env)
        for pod, names in pods:
            for name in sorted(names - provided):
                sources = tuple((kind, src) for kind, src, prefix in exp.env_from if name.startswith(prefix))
                everywhere = all(name in other for p, other in pods if p != pod)
                if not sources or everywhere or SERVICE_LINK.fullmatch(name):
                    continue
                said = f"is stale: {stale_line(name, sources)}"
                found = out.setdefault((pod, container), [])
                found.append(CheckResult("env", name, CheckStatus.MISMATCH, said))
    return out


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
    stale = stale_names(observations=observations, expectations=expectations)
    pods = [judge_pod(observation=o, expectations=expectations) for o in observations]
    pods = [
        dataclasses.replace(
            pod,
            containers=tuple(
                dataclasses.replace(c, checks=(*c.checks, *stale.get((pod.name, c.name), ())))
                for c in pod.containers
            ),
        )
        if any(p == pod.name for p, _ in stale)
        else pod
        for pod in pods
    ]
    return AttemptVerdict(
        revision=selection_revision,
        pods=tuple(pods),
        problems=tuple(problems),
        permanent_problems=tuple(permanent_problems),
        diagnosis=tuple(diagnosis),
    )
