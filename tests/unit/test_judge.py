"""Judging observations against expectations, with secret digests never echoed."""

from __future__ import annotations

import pytest

from verify.findings import (
    CheckResult,
    CheckStatus,
    ContainerObservation,
    Expectations,
    ExpectedFile,
    PodObservation,
    PodTarget,
    Uninspectable,
)
from verify.flow.judge import judge_attempt, judge_pod

GOOD = "1a2b3c4d5e6f" + "0" * 52
BAD = "9f8e7d6c5b4a" + "1" * 52
TARGET = PodTarget(name="web-1", node="node-1", containers=("app",))
CM = ExpectedFile(path="/cm/script.py", sha256=GOOD, origin="configmap testcm/script.py")
SECRET = ExpectedFile(path="/run/token", sha256=GOOD, origin="secret app/token", secret=True)
RAW = ExpectedFile(path="/etc/raw/raw", sha256=GOOD, origin="sha256")
# the container's mounts: ConfigMap volumes at /cm and /etc/raw, a Secret one at /run
MOUNTS = (("/cm", "configmap"), ("/etc/raw", "configmap"), ("/run", "secret"))
# where the probe found each path leads (a kubelet-projected key is a link into ..data)
RESOLVED = {
    "/cm/script.py": "/cm/..2025_01_01/script.py",
    "/etc/raw/raw": "/etc/raw/..2025_01_01/raw",
    "/run/token": "/run/..2025_01_01/token",
}


def observe(**kwargs: object) -> PodObservation:
    return PodObservation(pod=TARGET, containers=(ContainerObservation("app", **kwargs),))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("present", "status", "detail"),
    [
        (frozenset({"FEATURE"}), CheckStatus.OK, ""),
        (frozenset(), CheckStatus.MISSING, "not set in the container"),
    ],
)
def test_env_key_is_ok_when_present_else_missing(
    present: frozenset[str], status: CheckStatus, detail: str
) -> None:
    verdict = judge_pod(observation=observe(env_present=present), expectations=Expectations(env=("FEATURE",)))
    assert verdict.containers[0].checks == (CheckResult("env", "FEATURE", status, detail),)


@pytest.mark.parametrize(
    ("expected", "actual", "status", "detail"),
    [
        (CM, GOOD, CheckStatus.OK, ""),
        (CM, GOOD.upper(), CheckStatus.OK, ""),
        (CM, None, CheckStatus.MISSING, "not found or unreadable"),
        (
            CM,
            BAD,
            CheckStatus.MISMATCH,
            "content differs from configmap testcm/script.py (expected 1a2b3c4d5e6f, found 9f8e7d6c5b4a)",
        ),
        (
            RAW,
            BAD,
            CheckStatus.MISMATCH,
            "content differs from the expected sha256 (expected 1a2b3c4d5e6f, found 9f8e7d6c5b4a)",
        ),
        (SECRET, BAD, CheckStatus.MISMATCH, "content differs from secret app/token"),
    ],
    ids=["ok", "ok-case-insensitive", "missing", "configmap-mismatch", "sha-mismatch", "secret"],
)
def test_file_check_compares_digests(
    expected: ExpectedFile, actual: str | None, status: CheckStatus, detail: str
) -> None:
    obs = observe(file_hashes={expected.path: actual}, resolved_files=RESOLVED)
    verdict = judge_pod(observation=obs, expectations=Expectations(files=(expected,), mounts=MOUNTS))
    assert verdict.containers[0].checks == (CheckResult("file", expected.path, status, detail),)
    assert verdict.status is status


@pytest.mark.parametrize(
    ("resolved", "mounts"),
    [
        (None, MOUNTS),  # the probe could not resolve it (no readlink): no proof
        ("/var/run/pin/..2025/pin", (*MOUNTS, ("/var/run/pin", "secret"))),  # /cm/script.py links there
        ("/data/pin", (*MOUNTS, ("/data", "other"))),  # an emptyDir the app copied a secret into
        ("/cm/tmp/pin", (*MOUNTS, ("/cm/tmp", "other"))),  # a deeper emptyDir inside the ConfigMap's
        ("/cm/sec/pin", (*MOUNTS, ("/cm/sec", "secret"))),  # a Secret mounted inside the ConfigMap's
        ("/srv/app/pin", MOUNTS),  # the image's own file
    ],
    ids=["unresolved", "link-into-secret", "emptydir", "deeper-emptydir", "nested-secret", "image"],
)
def test_a_mismatched_file_shows_no_digest_unless_it_resolves_into_a_configmap_volume(
    resolved: str | None, mounts: tuple[tuple[str, str], ...]
) -> None:
    obs = observe(file_hashes={CM.path: BAD}, resolved_files={CM.path: resolved} if resolved else {})
    verdict = judge_pod(observation=obs, expectations=Expectations(files=(CM,), mounts=mounts))
    check = verdict.containers[0].checks[0]
    assert check.status is CheckStatus.MISMATCH
    assert check.detail == "content differs from configmap testcm/script.py"


def test_file_absent_from_observation_counts_as_missing() -> None:
    verdict = judge_pod(observation=observe(), expectations=Expectations(files=(CM,)))
    assert verdict.containers[0].checks[0].status is CheckStatus.MISSING


def test_an_unreadable_file_is_uninspectable_and_no_restart_fixes_it() -> None:
    obs = observe(file_hashes={CM.path: None}, unreadable_files=frozenset({CM.path}))
    verdict = judge_pod(observation=obs, expectations=Expectations(files=(CM,)))
    check = verdict.containers[0].checks[0]
    assert (check.status, check.permanent) == (CheckStatus.UNINSPECTABLE, True)
    assert check.detail == "exists but the exec's user cannot read it (file mode or ownership)"
    assert verdict.status is CheckStatus.UNINSPECTABLE


def test_secret_mounts_are_recognised_however_the_path_is_spelled() -> None:
    from verify.flow.derive import mark_secret_files

    pod_spec = {
        "volumes": [{"name": "s", "secret": {"secretName": "app"}}],
        "containers": [{"name": "app", "volumeMounts": [{"name": "s", "mountPath": "/etc/secret/"}]}],
    }
    files = tuple(
        ExpectedFile(path=p, sha256=GOOD, origin="sha256")
        for p in (
            "/etc//secret/pw",
            "//etc/secret/pw",
            "/etc/./secret/pw",
            "/etc/secret/../secret/pw",
            "/etc/secretive",
        )
    )
    marked = mark_secret_files(expectations=Expectations(files=files), pod_spec=pod_spec, container="app")
    assert [f.secret for f in marked.files] == [True, True, True, True, False]


def test_checks_follow_expectation_order_env_then_files() -> None:
    exp = Expectations(env=("B", "A"), files=(CM, RAW))
    obs = observe(env_present=frozenset({"A", "B"}), file_hashes={CM.path: GOOD, RAW.path: GOOD})
    checks = judge_pod(observation=obs, expectations=exp).containers[0].checks
    assert [(c.type, c.subject) for c in checks] == [
        ("env", "B"),
        ("env", "A"),
        ("file", "/cm/script.py"),
        ("file", "/etc/raw/raw"),
    ]


def test_container_error_makes_the_container_uninspectable() -> None:
    err = Uninspectable("no_shell", "no /bin/sh in the image", permanent=True)
    verdict = judge_pod(observation=observe(error=err), expectations=Expectations(env=("A",)))
    assert verdict.containers[0].error == err
    assert verdict.containers[0].checks == ()
    assert verdict.status is CheckStatus.UNINSPECTABLE


def test_pod_error_makes_the_pod_uninspectable() -> None:
    err = Uninspectable("pod_gone", "pod was deleted", permanent=False)
    verdict = judge_pod(observation=PodObservation(pod=TARGET, error=err), expectations=Expectations())
    assert (verdict.name, verdict.node, verdict.error) == ("web-1", "node-1", err)
    assert verdict.status is CheckStatus.UNINSPECTABLE


def test_target_container_without_observation_is_uninspectable() -> None:
    verdict = judge_pod(observation=PodObservation(pod=TARGET), expectations=Expectations())
    assert verdict.containers[0].name == "app"
    assert verdict.containers[0].status is CheckStatus.UNINSPECTABLE
    assert verdict.containers[0].error is not None
    assert not verdict.containers[0].error.permanent


def test_judge_attempt_is_ok_only_when_every_pod_passes_and_no_problems() -> None:
    exp = Expectations(env=("A",))
    good = observe(env_present=frozenset({"A"}))
    ok = judge_attempt(selection_revision="2", observations=[good], expectations=exp, problems=[])
    assert ok.ok and ok.revision == "2" and len(ok.pods) == 1
    short = judge_attempt(
        selection_revision="2", observations=[good], expectations=exp, problems=["1 pod short"]
    )
    assert not short.ok and short.problems == ("1 pod short",)
    bad = judge_attempt(selection_revision="2", observations=[observe()], expectations=exp, problems=[])
    assert not bad.ok
    perm = judge_attempt(
        selection_revision="2",
        observations=[good],
        expectations=exp,
        problems=[],
        permanent_problems=["no such container"],
    )
    assert not perm.ok and perm.permanent_problems == ("no such container",)


def test_zero_config_a_name_one_pod_still_carries_that_its_source_lost_is_stale() -> None:
    """The pod started before secret web-env lost API_TOKEN still has it; the one started after
    does not. A name every pod carries may be the image's own, a Service's link is the kubelet's."""
    from verify.findings import ContainerObservation, PodObservation, PodTarget
    from verify.flow.judge import judge_attempt

    exp = {"app": Expectations(env=("DB_URL",), env_from=(("secret", "web-env", ""), ("configmap", "flags", "F_")))}

    def pod(name: str, *names: str) -> PodObservation:
        seen = frozenset({"DB_URL", "PATH", *names})
        return PodObservation(PodTarget(name, "node-1", ("app",)), (ContainerObservation("app", seen & {"DB_URL"}, env_names=seen),))

    older = pod("web-old", "API_TOKEN", "F_BETA", "SHOP_SERVICE_HOST", "SHOP_PORT_80_TCP_ADDR", "JAVA_HOME")
    newer = pod("web-new", "JAVA_HOME")
    verdict = judge_attempt(selection_revision="1", observations=[older, newer], expectations=exp, problems=())
    stale = {p.name: [(c.subject, c.status, c.detail) for c in p.containers[0].checks if c.subject != "DB_URL"] for p in verdict.pods}
    assert stale == {
        "web-old": [
            ("API_TOKEN", CheckStatus.MISMATCH, "is stale: secret web-env no longer has API_TOKEN; pods keep it until their next restart"),
            ("F_BETA", CheckStatus.MISMATCH, "is stale: none of secret web-env, configmap flags has F_BETA any more; pods keep it until their next restart"),
        ],
        "web-new": [],
    }
    # one pod alone tells nothing: its extra names may be the image's
    alone = judge_attempt(selection_revision="1", observations=[older], expectations=exp, problems=())
    assert alone.ok
