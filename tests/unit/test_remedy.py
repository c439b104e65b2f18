"""The one judgment of a failing check: can one restart make it pass, and why. The decision and
the diagnosis both read it; a restart happens only when every failing check can be fixed."""

from __future__ import annotations

import pytest

from verify.diagnose.checks import diagnose
from verify.diagnose.remedy import Facts, assess
from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerVerdict,
    Expectations,
    ExpectedEnv,
    ExpectedFile,
    PodVerdict,
    Source,
)
from verify.flow.decide import decide

LIVE = "a" * 64
OLD = "b" * 64
CM = Source(kind="configmap", name="web-config")
FROZEN = Source(kind="configmap", name="testcm", immutable=True, uid="3f0c2a1b99")
SECRET = Source(kind="secret", name="web-secrets")


def verdict(
    *checks: CheckResult, pods: tuple[tuple[str, str], ...] = (("web-1", "node-1"),)
) -> AttemptVerdict:
    return AttemptVerdict(
        revision="2",
        pods=tuple(PodVerdict(name, node, (ContainerVerdict("app", checks),)) for name, node in pods),
    )


def missing(key: str) -> CheckResult:
    return CheckResult("env", key, CheckStatus.MISSING, "not set in the container")


def differs(path: str) -> CheckResult:
    return CheckResult("file", path, CheckStatus.MISMATCH, "content differs")


def facts(**kw: object) -> Facts:
    base: dict[str, object] = {"workload": "deployment checkout", "kind": "deployment"}
    return Facts(**{**base, **kw})  # type: ignore[arg-type]


def judged(v: AttemptVerdict, exp: Expectations, f: Facts) -> CheckResult:
    return assess(verdict=v, expectations={"app": exp}, facts=f).pods[0].containers[0].checks[0]


def test_a_key_no_source_provides_cannot_be_added_by_a_restart() -> None:
    v = verdict(missing("PAYMENT_APIKEY"))
    exp = Expectations(env=("PAYMENT_APIKEY",))
    check = judged(v, exp, facts(provided_env={"app": frozenset({"PAYMENT_API_KEY"})}))
    assert check.restart_can_fix is False
    # a close name the sources do provide is offered (names only, never a value)
    assert check.why == (
        "no source in deployment checkout's template provides PAYMENT_APIKEY: a restart cannot add it; "
        "did you mean PAYMENT_API_KEY?"
    )
    far = judged(v, exp, facts(provided_env={"app": frozenset({"DB_URL", "PAYMENT_REGION"})}))
    assert far.why == "no source in deployment checkout's template provides PAYMENT_APIKEY: a restart cannot add it"
    decision = decide(
        verdict=assess(verdict=v, expectations={"app": exp}, facts=facts()),
        restarts_done=0,
        restart_mode="once",
    )
    assert decision.action == "fail" and "PAYMENT_APIKEY" in decision.reason


def test_a_short_key_with_two_letters_swapped_or_another_case_is_offered_its_likely_name() -> None:
    provided = facts(provided_env={"app": frozenset({"DB_URL", "DB_USER", "LOG_LEVEL", "TOKEN"})})
    why = "no source in deployment checkout's template provides {}: a restart cannot add it"
    for typed, meant in (("DB_ULR", "DB_URL"), ("TOKNE", "TOKEN"), ("db_url", "DB_URL"), ("Log_Level", "LOG_LEVEL")):
        check = judged(verdict(missing(typed)), Expectations(env=(typed,)), provided)
        assert check.why == why.format(typed) + f"; did you mean {meant}?", typed
    # another key of the same family is no typo of it
    check = judged(verdict(missing("DB_HOST")), Expectations(env=("DB_HOST",)), provided)
    assert check.why == why.format("DB_HOST")


def test_a_key_the_template_now_provides_is_fixed_by_a_restart() -> None:
    v = verdict(missing("FEATURE_CREDENTIAL"))
    exp = Expectations(env=("FEATURE_CREDENTIAL",), env_sources=(("FEATURE_CREDENTIAL", SECRET),))
    f = facts(provided_env={"app": frozenset({"FEATURE_CREDENTIAL"})})
    check = judged(v, exp, f)
    assert check.restart_can_fix is True and "env is read when a container starts" in check.why
    assert (
        decide(
            verdict=assess(verdict=v, expectations={"app": exp}, facts=f),
            restarts_done=0,
            restart_mode="once",
        ).action
        == "restart"
    )


def test_an_expected_key_the_sources_now_provide_has_a_diagnosis_though_no_source_is_named() -> None:
    # --expect-env FEATURE_CREDENTIAL with envFrom: the expectations name no source for the key
    v = verdict(missing("FEATURE_CREDENTIAL"), pods=(("web-1", "node-1"), ("web-2", "node-2")))
    exp = Expectations(env=("FEATURE_CREDENTIAL",))
    f = facts(provided_env={"app": frozenset({"FEATURE_CREDENTIAL"})})
    lines = diagnose(
        workload="deployment checkout",
        verdict=assess(verdict=v, expectations={"app": exp}, facts=f),
        expectations={"app": exp},
    )
    assert lines == [
        "deployment checkout: 2 pods on node-1 (1), node-2 (1) (FEATURE_CREDENTIAL): env is read when a "
        "container starts, and the template's sources now provide FEATURE_CREDENTIAL; a restart fixes it"
    ]


def test_when_a_source_cannot_be_read_the_doubt_means_no_restart() -> None:
    check = judged(
        verdict(missing("DB_URL")), Expectations(env=("DB_URL",)), facts(unreadable=("secret db",))
    )
    assert check.restart_can_fix is False
    assert check.why == "cannot tell whether a restart can add DB_URL: secret db cannot be read"


def test_an_env_value_differing_from_its_live_source_is_fixed_by_a_restart() -> None:
    value = ExpectedEnv("MODE", "d" * 64, "configmap web-config/MODE", source=CM)
    v = verdict(CheckResult("env", "MODE", CheckStatus.MISMATCH, "value differs"))
    check = judged(v, Expectations(env=("MODE",), env_values=(value,)), facts())
    assert check.restart_can_fix is True


@pytest.mark.parametrize(
    ("live_files", "fixable", "why"),
    [
        ({"/etc/app.conf": LIVE}, True, "a new container mounts the live content"),
        (
            {"/etc/app.conf": OLD},
            False,
            "what the template mounts at /etc/app.conf does not have the expected",
        ),
        ({}, False, "/etc/app.conf is not mounted from a ConfigMap/Secret in the template"),
    ],
)
def test_an_explicit_sha256_is_fixable_only_when_the_live_mount_has_it(
    live_files: dict[str, str], fixable: bool, why: str
) -> None:
    f = ExpectedFile(path="/etc/app.conf", sha256=LIVE, origin="sha256")
    check = judged(
        verdict(differs("/etc/app.conf")),
        Expectations(files=(f,)),
        facts(live_files={"app": mounted(live_files)}),
    )
    assert check.restart_can_fix is fixable and check.why.startswith(why)


def mounted(digests: dict[str, str], source: Source = CM) -> dict[str, ExpectedFile]:
    """What the template mounts: path -> the live file a new container would get."""
    return {
        path: ExpectedFile(
            path=path, sha256=sha, origin=f"{source.kind} {source.name}/x", source=source, volume=True
        )
        for path, sha in digests.items()
    }


def test_an_explicit_spec_on_a_recreated_immutable_mount_follows_the_cache_rule() -> None:
    # --expect-file /cm/script.py=configmap:testcm/script.py: the live object has the content, but
    # the kubelet keeps serving its cached copy under a rolling restart
    f = ExpectedFile(path="/cm/script.py", sha256=LIVE, origin="configmap testcm/script.py")
    lf = {"app": mounted({"/cm/script.py": LIVE}, FROZEN)}
    check = judged(verdict(differs("/cm/script.py")), Expectations(files=(f,)), facts(live_files=lf))
    assert check.restart_can_fix is False and "a rolling restart starts new pods" in check.why


def frozen_file() -> ExpectedFile:
    return ExpectedFile(
        path="/cm/script.py", sha256=LIVE, origin="configmap testcm/script.py", source=FROZEN, volume=True
    )


def test_a_recreated_immutable_source_under_a_rolling_update_cannot_be_fixed() -> None:
    v = verdict(differs("/cm/script.py"))
    exp = Expectations(files=(frozen_file(),))
    check = judged(v, exp, facts(strategy="RollingUpdate", surge=True))
    assert check.restart_can_fix is False and "a rolling restart starts new pods while old pods" in check.why
    lines = diagnose(
        workload="deployment checkout",
        verdict=assess(verdict=v, expectations={"app": exp}, facts=facts()),
        expectations={"app": exp},
    )
    assert len(lines) == 1 and "a restart will not help" in lines[0]


def test_a_recreated_immutable_source_under_recreate_is_released_by_the_kubelet() -> None:
    v = verdict(differs("/cm/script.py"))
    exp = Expectations(files=(frozen_file(),))
    f = facts(strategy="Recreate", surge=False)
    check = judged(v, exp, f)
    assert check.restart_can_fix is True and "strategy Recreate stops every old pod" in check.why
    lines = diagnose(
        workload="deployment checkout",
        verdict=assess(verdict=v, expectations={"app": exp}, facts=f),
        expectations={"app": exp},
    )
    assert len(lines) == 1 and "a restart delivers the new content" in lines[0]


def test_under_recreate_another_workloads_pod_on_the_node_keeps_the_cache() -> None:
    f = facts(
        strategy="Recreate", surge=False, holders={("configmap", "testcm"): {"node-1": frozenset({"cron-1"})}}
    )
    check = judged(verdict(differs("/cm/script.py")), Expectations(files=(frozen_file(),)), f)
    assert check.restart_can_fix is False and "pod cron-1 on node-1 also use it" in check.why


def test_a_statefulset_pod_sharing_its_node_with_a_sibling_keeps_the_cache() -> None:
    v = verdict(differs("/cm/script.py"), pods=(("db-0", "node-1"), ("db-1", "node-1")))
    f = facts(kind="statefulset", surge=False)
    check = judged(v, Expectations(files=(frozen_file(),)), f)
    assert check.restart_can_fix is False and "pod db-1 on node-1 also use it" in check.why
    alone = verdict(differs("/cm/script.py"), pods=(("db-0", "node-1"), ("db-1", "node-2")))
    assert judged(alone, Expectations(files=(frozen_file(),)), f).restart_can_fix is True


def test_a_daemonset_with_surge_keeps_the_cache() -> None:
    check = judged(
        verdict(differs("/cm/script.py")),
        Expectations(files=(frozen_file(),)),
        facts(kind="daemonset", surge=True),
    )
    assert check.restart_can_fix is False


def test_an_http_mismatch_is_fixable_only_beside_stale_configuration() -> None:
    http = CheckResult("http", "8080/config", CheckStatus.MISMATCH, "answered HTTP 503, expected 200")

    def pod_with(*checks: CheckResult) -> AttemptVerdict:
        return AttemptVerdict(
            revision="2",
            pods=(PodVerdict("web-1", "node-1", (ContainerVerdict("app", checks),), checks=(http,)),),
        )

    exp = {"app": Expectations(env=("FEATURE_CREDENTIAL",))}
    f = facts(provided_env={"app": frozenset({"FEATURE_CREDENTIAL"})})
    stale = assess(verdict=pod_with(missing("FEATURE_CREDENTIAL")), expectations=exp, facts=f)
    assert stale.pods[0].checks[0].restart_can_fix is True
    fine = assess(
        verdict=pod_with(CheckResult("env", "FEATURE_CREDENTIAL", CheckStatus.OK)), expectations=exp, facts=f
    )
    assert fine.pods[0].checks[0].restart_can_fix is False
    assert "a restart gives it the same configuration" in fine.pods[0].checks[0].why
    blind = assess(verdict=pod_with(), expectations={}, facts=f)
    assert blind.pods[0].checks[0].restart_can_fix is False


def test_a_passing_check_is_not_judged() -> None:
    ok = CheckResult("env", "A", CheckStatus.OK)
    v = AttemptVerdict(revision="2", pods=(PodVerdict("web-1", "node-1", (ContainerVerdict("app", (ok,)),)),))
    out = assess(verdict=v, expectations={"app": Expectations(env=("A",))}, facts=facts())
    assert out.pods[0].containers[0].checks[0].restart_can_fix is None
    assert decide(verdict=out, restarts_done=0, restart_mode="once").action == "pass"


def test_one_unfixable_check_among_fixable_ones_means_no_restart() -> None:
    v = verdict(missing("FEATURE_CREDENTIAL"), missing("PAYMENT_APIKEY"))
    exp = Expectations(env=("FEATURE_CREDENTIAL", "PAYMENT_APIKEY"))
    out = assess(
        verdict=v,
        expectations={"app": exp},
        facts=facts(provided_env={"app": frozenset({"FEATURE_CREDENTIAL"})}),
    )
    assert [c.restart_can_fix for c in out.pods[0].containers[0].checks] == [True, False]
    decision = decide(verdict=out, restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    assert decision.reason == (
        "a restart cannot fix this: no source in deployment checkout's template provides PAYMENT_APIKEY: "
        "a restart cannot add it"
    )


def test_an_expected_key_its_source_no_longer_has_is_stale_and_a_restart_cannot_help() -> None:
    """The pods still carry API_TOKEN, but secret web-env lost it: the check passed, yet the next
    restart or scale-up removes the key, so the run fails with that line and restarts nothing."""
    v = verdict(CheckResult("env", "API_TOKEN", CheckStatus.OK), pods=(("web-1", "node-1"), ("web-2", "node-2")))
    exp = Expectations(env=("API_TOKEN",))
    stale = {"app": {"API_TOKEN": (("secret", "web-env"),)}}
    judged_v = assess(verdict=v, expectations={"app": exp}, facts=facts(stale_env=stale))
    check = judged_v.pods[0].containers[0].checks[0]
    line = "secret web-env no longer has API_TOKEN; pods keep it until their next restart"
    assert (check.status, check.restart_can_fix) == (CheckStatus.MISMATCH, False)
    assert check.detail == f"is stale: {line}" and check.why.startswith(f"{line}: a restart removes it")
    decision = decide(verdict=judged_v, restarts_done=0, restart_mode="once")
    assert decision.action == "fail" and decision.reason.startswith(f"a restart cannot fix this: {line}")
    # without the stale fact (the source still has it) the passing check stays a pass
    assert judged(v, exp, facts()).status is CheckStatus.OK


def test_the_sources_a_key_could_have_come_from() -> None:
    from verify.flow.derive import env_origins

    spec = {
        "containers": [
            {
                "name": "app",
                "envFrom": [{"secretRef": {"name": "web-env"}}, {"configMapRef": {"name": "flags"}, "prefix": "F_"}],
                "env": [
                    {"name": "DB", "valueFrom": {"secretKeyRef": {"name": "db", "key": "url", "optional": True}}},
                    {"name": "MODE", "value": "prod"},
                ],
            }
        ]
    }
    assert env_origins(pod_spec=spec, container="app", key="API_TOKEN") == [("secret", "web-env")]
    assert env_origins(pod_spec=spec, container="app", key="F_NEW") == [("secret", "web-env"), ("configmap", "flags")]
    assert env_origins(pod_spec=spec, container="app", key="DB") == [("secret", "db")]
    assert env_origins(pod_spec=spec, container="app", key="MODE") == []  # a literal: no source
    assert env_origins(pod_spec=spec, container="other", key="API_TOKEN") == []
