"""Shell-less (distroless) images inspected through an ephemeral debug container (--debug-image):
the same verdicts, restart and secret hygiene as the exec probe, one debug container per pod even
when the job is retried, and a restricted Pod Security namespace inspected without root."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tests.kubesim import Cluster, Rule
from tests.support.helpers import configmap, deployment, run_verify, secret
from tests.support.kubectl import Kubectl

DISTROLESS = "gcr.io/distroless/static:nonroot"
DEBUG = "busybox:1.36"
PLANTED = "planted-D1STROLESS-value-77a1"
NONROOT = {"runAsUser": 65532, "runAsGroup": 65532}
RESTRICTED = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def distroless_app(
    name: str, *, replicas: int = 3, security: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    """A Deployment of a distroless app: env from a Secret, a ConfigMap volume, no shell."""
    obj = deployment(
        name,
        replicas=replicas,
        image=DISTROLESS,
        command=["/server"],
        env_from=[{"secretRef": {"name": f"{name}-secrets"}}],
        volumes=[{"name": "config", "configMap": {"name": f"{name}-config"}}],
        mounts=[{"name": "config", "mountPath": "/etc/app"}],
        **spec,
    )
    if security is not None:
        obj["spec"]["template"]["spec"]["containers"][0]["securityContext"] = security
    return obj


def debug_containers(cluster: Cluster, app: str, namespace: str = "default") -> dict[str, list[str]]:
    return {
        p["metadata"]["name"]: [c["name"] for c in p["spec"].get("ephemeralContainers") or []]
        for p in cluster.list("Pod", namespace)
        if p["metadata"].get("labels", {}).get("app") == app and not p["metadata"].get("deletionTimestamp")
    }


def assert_no_secret(text: str) -> None:
    assert PLANTED not in text
    assert hashlib.sha256(PLANTED.encode()).hexdigest()[:12] not in text


def test_a_distroless_deployment_passes_with_a_debug_image_and_fails_naming_it_without(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("shop-secrets", {"DB_URL": PLANTED}))
    cluster.apply(configmap("shop-config", {"app.conf": "mode=fast\n"}))
    cluster.apply(distroless_app("shop", security=NONROOT))
    cluster.wait_rollout("shop")

    plain = run_verify("--deployment", "shop", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert plain.code == 1, plain.everything
    assert "no shell" in plain.stderr and "--debug-image" in plain.stderr
    assert all(v == [] for v in debug_containers(cluster, "shop").values())

    out = run_verify("--deployment", "shop", "--debug-image", DEBUG, kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is False
    pods = out.report["workloads"][0]["attempts"][-1]["pods"]
    assert len(pods) == 3 and {p["status"] for p in pods} == {"ok"}
    checks = {c["target"] for p in pods for ct in p["containers"] for c in ct["checks"]}
    assert {"DB_URL", "/etc/app/app.conf"} <= checks, checks
    # one debug container per pod, named for the run, and reported
    added = debug_containers(cluster, "shop")
    assert all(len(v) == 1 and v[0].startswith("rv-") for v in added.values()), added
    reported = {d["pod"]: d for d in out.report["debug_containers"]}
    assert set(reported) == set(added) and all(d["added"] for d in reported.values())
    assert "ephemeral debug container" in out.stderr + out.stdout
    assert "Ephemeral debug containers added (they stay until the pod is replaced): 3" in out.summary
    assert_no_secret(out.everything)


def test_a_secret_key_added_after_start_is_found_missing_restarted_once_and_passes(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("shop-secrets", {"DB_URL": "postgres://db"}))
    cluster.apply(configmap("shop-config", {"app.conf": "mode=fast\n"}))
    cluster.apply(distroless_app("shop", security=NONROOT))
    cluster.wait_rollout("shop")
    cluster.apply(secret("shop-secrets", {"DB_URL": "postgres://db", "FEATURE_CREDENTIAL": PLANTED}))
    cluster.reset_counts()

    out = run_verify("--deployment", "shop", "--debug-image", DEBUG, kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    first, last = out.report["workloads"][0]["attempts"][0], out.report["workloads"][0]["attempts"][-1]
    assert {p["status"] for p in first["pods"]} == {"missing"}
    assert {p["status"] for p in last["pods"]} == {"ok"}
    assert cluster.requests[("patch", "deployments")] == 1
    # the old pods got one each, the new pods one each: never two in one pod
    assert len(out.report["debug_containers"]) == 6
    assert all(len(v) == 1 for v in debug_containers(cluster, "shop").values())
    assert_no_secret(out.everything)


def test_a_retried_job_reuses_the_debug_container_it_added(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("shop-secrets", {"DB_URL": "postgres://db"}))
    cluster.apply(configmap("shop-config", {"app.conf": "mode=fast\n"}))
    cluster.apply(distroless_app("shop", replicas=2, security=NONROOT))
    cluster.wait_rollout("shop")
    first = run_verify(
        "--deployment", "shop", "--debug-image", DEBUG, kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert first.code == 0, first.everything
    before = debug_containers(cluster, "shop")
    cluster.reset_counts()
    again = run_verify(
        "--deployment", "shop", "--debug-image", DEBUG, kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert again.code == 0, again.everything
    assert debug_containers(cluster, "shop") == before
    assert again.report is not None
    assert [d["added"] for d in again.report["debug_containers"]] == [False, False]
    assert cluster.requests[("patch", "pods/ephemeralcontainers")] == 0


def test_a_nonroot_target_in_a_restricted_namespace_is_inspected_without_root(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    kubectl("create", "namespace", "locked")
    kubectl("label", "namespace", "locked", "pod-security.kubernetes.io/enforce=restricted")
    sec = secret("shop-secrets", {"DB_URL": PLANTED})
    sec["metadata"]["namespace"] = "locked"
    cluster.apply(sec)
    cm = configmap("shop-config", {"app.conf": "mode=fast\n"})
    cm["metadata"]["namespace"] = "locked"
    cluster.apply(cm)
    app = distroless_app("shop", replicas=2, security={**NONROOT, **RESTRICTED})
    app["metadata"]["namespace"] = "locked"
    pod_security = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    app["spec"]["template"]["spec"]["securityContext"] = pod_security
    cluster.apply(app)
    cluster.wait_rollout("shop", namespace="locked")

    out = run_verify(
        "--deployment",
        "shop",
        "-n",
        "locked",
        "--debug-image",
        DEBUG,
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    for pod in cluster.list("Pod", "locked"):
        (ec,) = pod["spec"]["ephemeralContainers"]
        sc = ec["securityContext"]
        assert (sc["runAsUser"], sc["runAsNonRoot"], sc["allowPrivilegeEscalation"]) == (65532, True, False)
        assert sc["capabilities"] == {"drop": ["ALL"]} and ec["targetContainerName"] == "app"
    assert_no_secret(out.everything)


def test_the_preflight_names_the_permission_a_debug_container_needs_and_a_dry_run_adds_none(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.apply(secret("shop-secrets", {"DB_URL": "postgres://db"}))
    cluster.apply(configmap("shop-config", {"app.conf": "mode=fast\n"}))
    cluster.apply(distroless_app("shop", replicas=1, security=NONROOT))
    cluster.wait_rollout("shop")
    base = [
        Rule.of(["get", "list", "watch", "patch"], ["deployments", "replicasets"], "apps"),
        Rule.of(["get", "list", "watch"], ["pods", "configmaps", "secrets"]),
        Rule.of(["get", "create"], ["pods/exec"]),
    ]
    token = cluster.add_user("system:serviceaccount:default:verifier", base)
    kc = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token=token, user="verifier")
    out = run_verify("--deployment", "shop", "--debug-image", DEBUG, kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    assert "`patch pods --subresource=ephemeralcontainers`" in out.stdout + out.stderr
    assert "--restart never" not in out.stdout + out.stderr  # it would not help
    assert all(v == [] for v in debug_containers(cluster, "shop").values())

    # a dry run sends no write: it says it would add one and adds none
    dry = run_verify(
        "--deployment", "shop", "--debug-image", DEBUG, "--dry-run", kubeconfig=kc, tmp_path=tmp_path
    )
    assert dry.code == 1, dry.everything
    assert "--dry-run: would add an ephemeral debug container" in dry.stderr
    assert all(v == [] for v in debug_containers(cluster, "shop").values())

    token = cluster.add_user(
        "system:serviceaccount:default:debugger", [*base, Rule.of("patch", "pods/ephemeralcontainers")]
    )
    kc = cluster.write_kubeconfig(tmp_path / "debug.kubeconfig", token=token, user="debugger")
    out = run_verify("--deployment", "shop", "--debug-image", DEBUG, kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 0, out.everything


def test_a_target_whose_user_is_the_images_needs_a_debug_image_with_that_user(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    # the distroless image's USER (65532) is not in the pod spec: the debug container cannot take
    # it from there; under runAsNonRoot a root debug image is refused by the kubelet, the
    # :debug-nonroot variant (the same user) reads the target
    kubectl("create", "namespace", "locked")
    kubectl("label", "namespace", "locked", "pod-security.kubernetes.io/enforce=restricted")
    for obj in (secret("shop-secrets", {"DB_URL": PLANTED}), configmap("shop-config", {"app.conf": "x\n"})):
        obj["metadata"]["namespace"] = "locked"
        cluster.apply(obj)
    app = distroless_app("shop", replicas=1, security=RESTRICTED)
    app["metadata"]["namespace"] = "locked"
    app["spec"]["template"]["spec"]["securityContext"] = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    cluster.apply(app)
    cluster.wait_rollout("shop", namespace="locked")
    args = ("--deployment", "shop", "-n", "locked", "--debug-image")
    root = run_verify(*args, DEBUG, kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert root.code == 1, root.everything
    assert "CreateContainerConfigError" in root.stderr and "image will run as root" in root.stderr
    out = run_verify(
        *args, "gcr.io/distroless/static:debug-nonroot", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 0, out.everything
    assert_no_secret(root.everything + out.everything)


def test_a_pod_sharing_one_process_namespace_gets_no_debug_container_and_no_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("shop-secrets", {"DB_URL": "postgres://db"}))
    cluster.apply(configmap("shop-config", {"app.conf": "mode=fast\n"}))
    app = distroless_app("shop", replicas=1, security=NONROOT)
    app["spec"]["template"]["spec"]["shareProcessNamespace"] = True
    cluster.apply(app)
    cluster.wait_rollout("shop")
    cluster.reset_counts()
    out = run_verify("--deployment", "shop", "--debug-image", DEBUG, kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert "shareProcessNamespace" in out.stderr and "pause" in out.stderr
    assert all(v == [] for v in debug_containers(cluster, "shop").values())
    assert cluster.requests[("patch", "deployments")] == 0
