"""Secrets Store CSI volumes, pure parts: which files a SecretProviderClass yields (presence, or
the synced Secret's digest), how they are judged, whether a restart can help without the class,
and the diagnosis naming the pod, the class and the cause."""

from __future__ import annotations

import base64
import hashlib

from verify.diagnose.remedy import Facts, assess
from verify.diagnose.secretsstore import ClassFacts, CsiFacts, PodMount, explain
from verify.findings import (
    AttemptVerdict,
    CheckResult,
    CheckStatus,
    ContainerObservation,
    ContainerVerdict,
    Expectations,
    ExpectedEnv,
    PodObservation,
    PodTarget,
    PodVerdict,
    Source,
)
from verify.flow.csi import class_objects, classes_of, csi_files
from verify.flow.decide import decide
from verify.flow.derive import derive, mark_secret_files
from verify.flow.judge import judge_pod

OBJECTS = """array:
  - |
    objectName: DB_URL
    objectType: secret
  - |
    objectName: api-token
    objectAlias: token
    objectType: secret
"""
SPC = {
    "metadata": {"name": "web-kv", "creationTimestamp": "2026-12-04T10:00:00Z", "generation": 2},
    "spec": {
        "provider": "azure",
        "parameters": {"keyvaultName": "web-kv", "objects": OBJECTS},
        "secretObjects": [{"secretName": "web-secrets", "data": [{"objectName": "DB_URL", "key": "DB_URL"}]}],
    },
}
POD_SPEC = {
    "containers": [
        {"name": "app", "volumeMounts": [{"name": "kv", "mountPath": "/mnt/secrets-store"}]},
    ],
    "volumes": [
        {
            "name": "kv",
            "csi": {
                "driver": "secrets-store.csi.k8s.io",
                "volumeAttributes": {"secretProviderClass": "web-kv"},
            },
        }
    ],
}
SYNCED = {
    "kind": "Secret",
    "metadata": {"name": "web-secrets", "uid": "u1"},
    "data": {"DB_URL": base64.b64encode(b"postgres://x").decode()},
}


def test_a_class_lists_its_files_by_alias_and_where_each_is_synced() -> None:
    objs = class_objects(SPC)
    assert [(o.file, o.object_name, o.synced) for o in objs] == [
        ("DB_URL", "DB_URL", (("web-secrets", "DB_URL"),)),
        ("token", "api-token", ()),
    ]
    assert classes_of(POD_SPEC) == {"web-kv"}
    assert class_objects({"spec": {"parameters": {"objects": "array: [: bad"}}}) == []


def test_synced_objects_hash_like_the_secret_and_others_need_only_exist() -> None:
    files = csi_files(
        POD_SPEC["containers"][0], POD_SPEC, {"web-kv": SPC}, {("secret", "web-secrets"): SYNCED}
    )
    by_path = {f.path: f for f in files}
    assert by_path["/mnt/secrets-store/DB_URL"].sha256 == hashlib.sha256(b"postgres://x").hexdigest()
    assert by_path["/mnt/secrets-store/token"].sha256 == ""  # presence only
    assert all(f.secret and f.provider_class == "web-kv" for f in files)
    # no synced Secret (yet): presence only for every object
    bare = csi_files(POD_SPEC["containers"][0], POD_SPEC, {"web-kv": SPC}, {})
    assert {f.sha256 for f in bare} == {""}
    # a class that does not exist yields no files (the restart judgment handles it)
    assert csi_files(POD_SPEC["containers"][0], POD_SPEC, {"web-kv": None}, {}) == []


def test_derive_includes_csi_files_and_marks_the_mount_secret_backed() -> None:
    derived = derive(
        pod_spec=POD_SPEC,
        containers=["app"],
        objects={("secret", "web-secrets"): SYNCED},
        hmac_key=b"k",
        classes={"web-kv": SPC},
    )
    marked = mark_secret_files(expectations=derived["app"], pod_spec=POD_SPEC, container="app")
    assert marked.mounts == (("/mnt/secrets-store", "secret"),)
    assert len(marked.files) == 2


def test_a_presence_only_file_passes_when_present_and_is_missing_when_absent() -> None:
    exp = Expectations(files=tuple(csi_files(POD_SPEC["containers"][0], POD_SPEC, {"web-kv": SPC}, {})))
    pod = PodTarget("web-1", "node-1", ("app",))
    seen = ContainerObservation(
        "app", file_hashes={"/mnt/secrets-store/DB_URL": "ab" * 32, "/mnt/secrets-store/token": None}
    )
    verdict = judge_pod(observation=PodObservation(pod, (seen,)), expectations=exp)
    statuses = {c.subject: c.status for c in verdict.containers[0].checks}
    assert statuses == {
        "/mnt/secrets-store/DB_URL": CheckStatus.OK,
        "/mnt/secrets-store/token": CheckStatus.MISSING,
    }


SECRET = Source("secret", "web-secrets")
ENV = Expectations(
    env=("FEATURE_CREDENTIAL",),
    env_values=(
        ExpectedEnv("FEATURE_CREDENTIAL", "d", "secret web-secrets/FEATURE_CREDENTIAL", True, SECRET),
    ),
)


def _verdict(status: CheckStatus = CheckStatus.MISSING) -> AttemptVerdict:
    check = CheckResult("env", "FEATURE_CREDENTIAL", status, "x", restart_can_fix=True)
    return AttemptVerdict("2", (PodVerdict("web-1", "node-1", (ContainerVerdict("app", (check,)),)),))


def _csi(created: str, changed: str, objects: tuple[str, ...] = ("secret/DB_URL (version 812)",)) -> CsiFacts:
    cls = ClassFacts(
        "web-kv", created, changed, 2, (("web-secrets", "FEATURE_CREDENTIAL", "FEATURE_CREDENTIAL"),)
    )
    return CsiFacts(
        classes={"web-kv": cls},
        started={"web-1": "2026-12-04T10:00:10Z"},
        mounts={("web-1", "web-kv"): PodMount("2026-12-04T10:00:09Z", objects)},
    )


def test_the_diagnosis_names_the_pod_the_class_and_the_helm_ordering() -> None:
    lines, covered = explain(
        workload="deployment web", verdict=_verdict(), expectations={"app": ENV},
        csi=_csi("2026-12-04T10:00:00Z", "2026-12-04T10:00:24Z"),
    )  # fmt: skip
    assert covered == {("secret", "web-secrets", "FEATURE_CREDENTIAL")}
    (line,) = lines
    assert line.startswith(
        "deployment web: pod web-1 (node-1) (FEATURE_CREDENTIAL): mounted SecretProviderClass"
    )
    assert (
        "before it listed FEATURE_CREDENTIAL (class changed 14 s after the pod started, to generation 2"
        in line
    )
    assert "Helm applies Deployments before custom kinds" in line and "a restart remounts it" in line
    assert "its SecretProviderClassPodStatus lists only secret/DB_URL (version 812)" in line
    rotated = explain(
        workload="w", verdict=_verdict(), expectations={"app": ENV},
        csi=_csi("2026-12-04T10:00:00Z", "2026-12-04T10:00:24Z", ("secret/FEATURE_CREDENTIAL (version 9)",)),
    )[0][0]  # fmt: skip
    assert (
        "the driver's rotation has since mounted FEATURE_CREDENTIAL and synced it, but never into env"
        in rotated
    )


def test_the_diagnosis_tells_a_class_created_late_from_rotation_and_a_late_secret() -> None:
    created_late = explain(
        workload="w", verdict=_verdict(), expectations={"app": ENV},
        csi=_csi("2026-12-04T10:00:15Z", "2026-12-04T10:00:15Z"),
    )[0][0]  # fmt: skip
    assert "secretproviderclass web-kv was created 5 s after the pod started" in created_late
    rotated = explain(
        workload="w", verdict=_verdict(CheckStatus.MISMATCH), expectations={"app": ENV},
        csi=_csi("2026-12-04T10:00:00Z", "2026-12-04T10:00:00Z"),
    )[0][0]  # fmt: skip
    assert (
        "the driver's rotation updated secret web-secrets (synced by secretproviderclass web-kv)" in rotated
    )
    late = explain(
        workload="w", verdict=_verdict(), expectations={"app": ENV},
        csi=_csi("2026-12-04T10:00:00Z", "2026-12-04T10:00:00Z"),
    )[0][0]  # fmt: skip
    assert (
        "started before secret web-secrets (synced by secretproviderclass web-kv) had FEATURE_CREDENTIAL"
        in late
    )


def test_a_missing_class_makes_every_failing_check_unfixable() -> None:
    v = AttemptVerdict(
        "2",
        (
            PodVerdict(
                "web-1",
                "node-1",
                (ContainerVerdict("app", (CheckResult("env", "FEATURE_CREDENTIAL", CheckStatus.MISSING),)),),
            ),
        ),
    )
    base = Facts(
        workload="deployment web", kind="deployment", provided_env={"app": frozenset({"FEATURE_CREDENTIAL"})}
    )
    fixable = assess(verdict=v, expectations={"app": ENV}, facts=base)
    assert decide(verdict=fixable, restarts_done=0, restart_mode="once").action == "restart"
    judged = assess(
        verdict=v, expectations={"app": ENV}, facts=Facts(**{**base.__dict__, "missing_classes": ("web-kv",)})
    )
    decision = decide(verdict=judged, restarts_done=0, restart_mode="once")
    assert decision.action == "fail"
    assert decision.reason.startswith("a restart cannot fix this: secretproviderclass web-kv does not exist")
    assert "a restart cannot help" in decision.reason
