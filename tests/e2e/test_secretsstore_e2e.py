"""The second seed with its own stack (tests/support/secretsstore.py): Secrets Store CSI Driver
CRDs as published, a SecretProviderClass syncing vault objects into Secret web-secrets, and a
Helm-ordered upgrade that leaves one of two pods without FEATURE_CREDENTIAL. Zero-config
rollout-verify names the pod, the class and the ordering, restarts once and passes; it explains
rotation, refuses to restart without the class, and degrades without the class's RBAC."""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.kubesim import Cluster, Knobs
from tests.support import secretsstore as sss
from tests.support.helpers import REPO, Outcome, run_verify

PLANTED = "planted-feature-credential-7f3e"


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(
        sync_period=1.0, mount_backoff_max=1.0, secrets_store_rotation=True, rotation_poll_interval=1.0
    )


@pytest.fixture
def k(kubeconfig: str, tmp_path: Path) -> sss.Kubectl:
    home = tmp_path / "kubectl-home"
    home.mkdir()
    return sss.Kubectl(kubeconfig, home)


def _checks(attempt: dict[str, object]) -> list[dict[str, object]]:
    return [c for p in attempt["pods"] for ct in p["containers"] for c in ct["checks"]]  # type: ignore[index,attr-defined]


def _verify_as_the_service_account(cluster: Cluster, tmp_path: Path) -> Outcome:
    """`--deployment web` as the rollout-verify ServiceAccount the examples' RBAC binds, its
    kubeconfig given as content (VERIFY_KUBECONFIG_DATA)."""
    config = cluster.kubeconfig(
        token=cluster.serviceaccount_token("default", "rollout-verify"), user="rollout-verify"
    )
    return run_verify(
        "--deployment", "web", kubeconfig=str(tmp_path / "none"), tmp_path=tmp_path,
        env={"VERIFY_KUBECONFIG_DATA": config},
    )  # fmt: skip


def test_the_seed_incident_is_found_named_restarted_once_and_passes(
    cluster: Cluster, k: sss.Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    sss.install(k, DB_URL="postgres://db/web", FEATURE_CREDENTIAL=PLANTED)
    sss.release_one(k)
    stale = sss.upgrade_in_helm_order(k)
    present = {p["metadata"]["name"]: sss.has_key(k, p["metadata"]["name"]) for p in sss.pods(k)}
    assert present == {**{n: True for n in present}, stale: False}, present  # one of two lacks it
    assert len(present) == 2
    cluster.reset_counts()

    out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    assert cluster.requests[("patch", "deployments")] == 1
    first = out.report["workloads"][0]["attempts"][0]
    assert sorted(p["status"] for p in first["pods"]) == ["missing", "ok"]
    failing = [c for c in _checks(first) if c["status"] != "ok"]
    assert [(c["type"], c["target"]) for c in failing] == [("env", "FEATURE_CREDENTIAL")]
    diag = " ".join(first["diagnosis"])
    assert f"pod {stale} (" in diag
    assert "mounted SecretProviderClass web-kv before it listed FEATURE_CREDENTIAL" in diag
    assert "after the pod started, to generation 2; Helm applies Deployments before custom kinds" in diag
    assert "a restart remounts it" in diag
    assert "(Helm/CSI sync ordering)" not in diag  # the guess is replaced by the cause
    # the CSI files were checked too: each object the class lists, hashed like the synced Secret
    files = {c["target"] for c in _checks(first) if c["type"] == "file"}
    assert files == {f"{sss.MOUNT}/DB_URL", f"{sss.MOUNT}/FEATURE_CREDENTIAL"}
    last = out.report["workloads"][0]["attempts"][-1]
    assert {p["status"] for p in last["pods"]} == {"ok"}
    assert all(sss.has_key(k, p["metadata"]["name"]) for p in sss.pods(k))


def test_rotation_changes_files_and_secret_but_not_env_and_rollout_verify_says_so(
    cluster: Cluster, k: sss.Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    sss.install(k, DB_URL="postgres://db/one", FEATURE_CREDENTIAL=PLANTED)
    k.apply(sss.provider_class(["DB_URL", "FEATURE_CREDENTIAL"]))
    k.apply(sss.web("1"))
    k("rollout", "status", "deployment/web", "--timeout=90s")
    sss.set_vault(k, DB_URL="postgres://db/two", FEATURE_CREDENTIAL=PLANTED)
    pod = sss.pods(k)[0]["metadata"]["name"]
    sss.wait(
        lambda: k("exec", pod, "--", "cat", f"{sss.MOUNT}/DB_URL") == "postgres://db/two", "the rotated file"
    )
    sss.wait(lambda: "db/two" in _secret_value(k, "DB_URL"), "the rotated Secret")
    assert k("exec", pod, "--", "printenv", "DB_URL").strip() == "postgres://db/one"
    cluster.reset_counts()

    out = run_verify("--deployment", "web", "--dry-run", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert cluster.requests[("patch", "deployments")] == 0
    first = out.report["workloads"][0]["attempts"][0]  # type: ignore[index]
    failing = {(c["type"], c["target"], c["status"]) for c in _checks(first) if c["status"] != "ok"}
    assert failing == {("env", "DB_URL", "mismatch")}  # the files match the rotated Secret
    diag = " ".join(first["diagnosis"])
    assert (
        "the driver's rotation updated secret web-secrets (synced by secretproviderclass web-kv) and the "
        "mounted files after the containers started, but env is read only when a container starts" in diag
    )
    assert "would restart" in out.stderr


def _secret_value(k: sss.Kubectl, key: str) -> str:
    data = json.loads(k("get", "secret", "web-secrets", "-o", "json"))["data"]
    return base64.b64decode(data[key]).decode()


def test_without_the_class_a_restart_cannot_help_and_is_not_sent(
    cluster: Cluster, k: sss.Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    sss.install(k, DB_URL="postgres://db/web")
    sss.release_one(k)
    k("delete", "secretproviderclass", "web-kv")
    # someone adds a key to the synced Secret by hand: the running pods lack it
    k("patch", "secret", "web-secrets", "--type", "merge", "-p", json.dumps({"stringData": {"EXTRA": "x"}}))
    cluster.reset_counts()

    out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert cluster.requests[("patch", "deployments")] == 0
    assert out.report is not None and out.report["restarted"] is False
    diag = " ".join(out.report["workloads"][0]["attempts"][0]["diagnosis"])
    assert "secretproviderclass web-kv does not exist" in diag and "a restart cannot help" in diag


def test_without_the_class_rbac_env_is_still_verified_and_the_gap_said_once(
    cluster: Cluster, k: sss.Kubectl, tmp_path: Path
) -> None:
    sss.install(k, DB_URL="postgres://db/web")
    sss.release_one(k)
    docs = [d for d in yaml.safe_load_all((REPO / "examples" / "rbac.yaml").read_text()) if d]
    role = next(d for d in docs if d["kind"] == "Role")
    role["rules"] = [r for r in role["rules"] if "secrets-store.csi.x-k8s.io" not in r["apiGroups"]]
    for r in role["rules"]:
        if r["resources"] == ["secrets"]:
            r["resourceNames"] = ["web-secrets"]
    k.apply(*docs)

    out = _verify_as_the_service_account(cluster, tmp_path)
    assert out.code == 0, out.everything
    said = "cannot read secretproviderclass web-kv (no permission: `get secretproviderclasses.secrets-store.csi.x-k8s.io`)"
    assert out.stderr.count(said) == 1, out.stderr
    checks = _checks(out.report["workloads"][0]["attempts"][0])  # type: ignore[index]
    assert {c["target"] for c in checks} >= {"DB_URL"}
    assert not [c for c in checks if c["type"] == "file"]


def test_a_rollout_waiting_for_its_class_names_the_drivers_failedmount_then_passes_once_it_exists(
    cluster: Cluster, k: sss.Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    sss.install(k, DB_URL="postgres://db/web")
    k.apply(sss.web("1"))  # Helm's order: the Deployment, and the class only 25 s later
    later = threading.Timer(25.0, lambda: k.apply(sss.provider_class(["DB_URL"])))
    later.start()
    try:
        out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    finally:
        later.join()
    assert out.code == 0, out.everything
    # the "still waiting" line names what holds the pods back: the kubelet's FailedMount event
    # (their ContainerCreating carries no message, as on a real node)
    assert (
        'ContainerCreating: MountVolume.SetUp failed for volume "secrets-store-inline" : rpc error: code = '
        "Unknown desc = failed to get secretproviderclass default/web-kv" in out.stderr
    ), out.stderr
    files = {c["target"] for c in _checks(out.report["workloads"][0]["attempts"][0]) if c["type"] == "file"}  # type: ignore[index]
    assert files == {f"{sss.MOUNT}/DB_URL"}


def test_a_rollout_whose_class_never_comes_fails_with_the_drivers_message(
    cluster: Cluster, k: sss.Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    sss.install(k, DB_URL="postgres://db/web")
    k.apply(sss.web("1"))
    out = run_verify("--deployment", "web", "--timeout", "15s", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    assert "failed to get secretproviderclass default/web-kv, error: " in out.stdout
    assert 'secretproviderclasses.secrets-store.csi.x-k8s.io \\"web-kv\\" not found' in out.stdout or (
        'secretproviderclasses.secrets-store.csi.x-k8s.io "web-kv" not found' in out.stdout
    )
    assert cluster.requests[("patch", "deployments")] == 0


def test_without_rotation_the_pod_that_mounted_the_old_class_misses_the_file_and_a_restart_remounts_it(
    cluster: Cluster, k: sss.Kubectl, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.knobs.secrets_store_rotation = False  # the driver's default: nothing remounts
    sss.install(k, DB_URL="postgres://db/web", FEATURE_CREDENTIAL=PLANTED)
    sss.release_one(k)
    old = {p["metadata"]["name"] for p in sss.pods(k)}
    k.apply(sss.web("2", ready_after=4))
    sss.wait(
        lambda: any(p["metadata"]["name"] not in old and sss.running(p) for p in sss.pods(k)), "a new pod"
    )
    stale = next(p["metadata"]["name"] for p in sss.pods(k) if p["metadata"]["name"] not in old)
    time.sleep(1.5)
    k.apply(sss.provider_class(["DB_URL", "FEATURE_CREDENTIAL"]))
    k("rollout", "status", "deployment/web", "--timeout=120s")
    assert sss.synced(k) == {"DB_URL"}  # created once at the first mount, never updated there
    cluster.reset_counts()

    out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert cluster.requests[("patch", "deployments")] == 1
    first = out.report["workloads"][0]["attempts"][0]  # type: ignore[index]
    failing = [
        (p["name"], c["target"])
        for p in first["pods"]
        for ct in p["containers"]
        for c in ct["checks"]
        if c["status"] != "ok"
    ]
    assert failing == [(stale, f"{sss.MOUNT}/FEATURE_CREDENTIAL")]
    diag = " ".join(first["diagnosis"])
    assert f"pod {stale} (" in diag
    assert (
        "mounted SecretProviderClass web-kv before it listed FEATURE_CREDENTIAL, and nothing remounted it"
        in diag
    )


def test_without_rbac_on_the_synced_secret_the_csi_files_are_checked_by_presence(
    cluster: Cluster, k: sss.Kubectl, tmp_path: Path
) -> None:
    sss.install(k, DB_URL="postgres://db/web")
    files_only = sss.web("1")
    del files_only["spec"]["template"]["spec"]["containers"][0]["envFrom"]  # the app reads the files
    k.apply(sss.provider_class(["DB_URL"]), files_only)
    k("rollout", "status", "deployment/web", "--timeout=90s")
    docs = [d for d in yaml.safe_load_all((REPO / "examples" / "rbac.yaml").read_text()) if d]
    role = next(d for d in docs if d["kind"] == "Role")
    role["rules"] = [r for r in role["rules"] if r["resources"] not in (["secrets"], ["configmaps"])]
    k.apply(*docs)

    out = _verify_as_the_service_account(cluster, tmp_path)
    assert out.code == 0, out.everything
    said = "cannot read secret web-secrets (no permission: `get secrets/web-secrets`)"
    assert out.stderr.count(said) == 1 and "checked by presence only" in out.stderr, out.stderr
    checks = _checks(out.report["workloads"][0]["attempts"][0])  # type: ignore[index]
    assert {(c["type"], c["target"], c["status"]) for c in checks if c["type"] == "file"} == {
        ("file", f"{sss.MOUNT}/DB_URL", "ok")
    }
