"""rollout-verify end to end: the real CLI against kubesim over HTTPS and WebSocket."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.kubesim import Cluster, Fault, Rule
from tests.support.helpers import REPO, cache_keepers, configmap, deployment, run_verify, secret
from tests.support.kubectl import Kubectl

MANIFESTS = Path(__file__).parent.parent / "manifests"
PLANTED = "s3cr3t-planted-value-41f7"


def patches(cluster: Cluster) -> int:
    return cluster.requests[("patch", "deployments")]


def test_healthy_rollout_with_env_and_file_passes_without_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(configmap("web-config", {"app.conf": "mode=prod\n"}))
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    cluster.apply(
        deployment(
            "web",
            replicas=3,
            env_from=[{"secretRef": {"name": "web-secrets"}}],
            volumes=[{"name": "conf", "configMap": {"name": "web-config"}}],
            mounts=[{"name": "conf", "mountPath": "/etc/web"}],
        )
    )
    digest = hashlib.sha256(b"mode=prod\n").hexdigest()
    out = run_verify(
        "--deployment",
        "web",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--expect-env",
        "DB_URL",
        "--expect-file",
        f"/etc/web/app.conf=sha256:{digest}",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["result"] == "passed" and out.report["restarted"] is False
    pods = out.report["workloads"][0]["attempts"][0]["pods"]
    assert len(pods) == 3 and {p["status"] for p in pods} == {"ok"}
    checks = pods[0]["containers"][0]["checks"]
    assert {(c["type"], c["target"], c["status"]) for c in checks} == {
        ("env", "FEATURE_CREDENTIAL", "ok"),
        ("env", "DB_URL", "ok"),
        ("file", "/etc/web/app.conf", "ok"),
    }
    assert patches(cluster) == 0
    assert cluster.requests[("create", "pods/exec")] == 3  # one exec per container
    assert PLANTED not in out.everything


def test_pod_started_before_secret_sync_is_detected_then_fixed_by_one_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-secrets"}}]))
    cluster.wait_rollout("web")
    # The CSI driver syncs the key after the pods started; one pod is then replaced and sees it.
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": PLANTED}))
    first = sorted(p["metadata"]["name"] for p in cluster.list("Pod"))[0]
    kubectl("delete", "pod", first)
    cluster.wait_rollout("web")
    cluster.reset_counts()

    out = run_verify(
        "--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is True
    attempts = out.report["workloads"][0]["attempts"]
    assert len(attempts) == 2
    statuses = sorted(p["status"] for p in attempts[0]["pods"])
    assert statuses == ["missing", "ok"]
    assert {p["status"] for p in attempts[1]["pods"]} == {"ok"}
    assert "lacks env FEATURE_CREDENTIAL" in out.stderr + out.stdout
    assert patches(cluster) == 1
    assert PLANTED not in out.everything


def test_recreated_immutable_configmap_named_by_expect_file_fails_at_once_without_a_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    """Also: the diagnosis and the remedy reach every page a CI user reads, not only stderr."""
    kubectl("create", "-f", str(MANIFESTS / "cm-test.yaml"))
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    cache_keepers(cluster, "testcm", ["node-1", "node-2", "node-3"])
    kubectl("delete", "cm", "testcm")
    kubectl(
        "apply", "-f", "-", input=(MANIFESTS / "cm-test.yaml").read_text().replace("content7", "content8")
    )
    kubectl("rollout", "restart", "deployment", "cm-test")
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    cluster.reset_counts()

    step_summary, step_outputs = tmp_path / "step-summary.md", tmp_path / "step-outputs"
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(step_summary),
        "GITHUB_OUTPUT": str(step_outputs),
    }
    out = run_verify(
        "--deployment",
        "cm-test",
        "--expect-file",
        "/cm/script.py=configmap:testcm/script.py",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
        env=github,
    )
    # a rolling restart starts new pods beside old ones, and the keepers hold every node's cached
    # copy: judged before any restart, none is sent
    assert out.code == 1, out.everything
    assert patches(cluster) == 0
    assert out.report is not None and out.report["result"] == "failed" and out.report["restarted"] is False
    assert out.report["message"].startswith("a restart cannot fix this: configmap testcm is immutable")
    (only,) = out.report["workloads"][0]["attempts"]
    assert len(only["pods"]) == 7 and {p["status"] for p in only["pods"]} == {"mismatch"}
    checks = [c for p in only["pods"] for ct in p["containers"] for c in ct["checks"]]
    assert [(c["target"], c["restart_can_fix"]) for c in checks] == [("/cm/script.py", False)] * 7
    assert all("is immutable and was recreated" in c["why"] for c in checks)
    assert "file /cm/script.py differs from configmap testcm/script.py" in out.stderr
    assert "(node-" in out.stderr
    assert "restarting" not in out.everything

    why, remedy = "configmap testcm is immutable and was recreated", "publish new content under a new name"
    # the ::error annotations: titled with the workload, each message the problem and its remedy;
    # the same judgment on every node is one annotation naming the 7 pods
    errors = [line for line in out.stdout.splitlines() if line.startswith("::error ")]
    assert errors and all(e.startswith("::error title=rollout-verify%3A deployment default/cm-test::") for e in errors)
    problem, _, said = errors[0].split("::", 2)[2].partition(" — ")
    assert problem.startswith("7 pods (cm-test-") and "on node-1 (" in problem
    assert "file /cm/script.py differs from configmap testcm/script.py" in problem
    assert why in said and "a restart will not help" in said and remedy in said
    assert "content-hash suffix" in "\n".join(errors)  # the diagnosis that says more follows
    # the step summary, per workload; JUnit's failures (message and text), report.json
    summary = step_summary.read_text()
    section = summary.split("#### deployment `default/cm-test`", 1)[1]
    assert why in section and remedy in section and "kubelet" in section
    assert summary == out.summary  # --summary and the job summary are one rendering
    failures = ET.fromstring(out.junit).findall(".//failure")
    assert len(failures) == 7
    assert all(why in (f.get("message") or "") and remedy in (f.get("message") or "") for f in failures)
    assert all(why in (f.text or "") and "content-hash suffix" in (f.text or "") for f in failures)
    assert any(why in line and remedy in line for line in only["diagnosis"])
    # the verdict leads with what failed
    assert out.stdout.splitlines()[-1].startswith(
        "rollout-verify: FAILED deployment cm-test: 7 of 7 pods failed: container test file /cm/script.py "
        "differs from configmap testcm/script.py"
    )

    # `report merge` over that report: its summary and JUnit say the same
    report = tmp_path / "cm-test.json"
    report.write_text(json.dumps(out.report))
    merged = subprocess.run(
        [sys.executable, "-m", "verify", "report", "merge", f"eu={report}", "--summary", "fleet.md"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
        env={**{k: v for k, v in os.environ.items() if not k.startswith(("VERIFY_", "GITHUB_"))}, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert merged.returncode == 1, merged.stdout + merged.stderr
    fleet = (tmp_path / "fleet.md").read_text()
    assert why in fleet and remedy in fleet and "#### eu: deployment `default/cm-test`" in fleet
    assert why in merged.stderr and remedy in merged.stderr


def test_distroless_image_is_uninspectable_and_fails_without_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(
        deployment("static", replicas=2, image="gcr.io/distroless/static:nonroot", command=["/server"])
    )
    out = run_verify(
        "--deployment", "static", "--expect-env", "PORT", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 1, out.everything
    assert patches(cluster) == 0
    assert "no shell" in out.stderr
    assert out.report is not None
    pods = out.report["workloads"][0]["attempts"][0]["pods"]
    assert {p["status"] for p in pods} == {"uninspectable"}


def test_token_without_pods_exec_names_the_missing_rule_and_does_not_restart(
    cluster: Cluster, tmp_path: Path
) -> None:
    # an API server that does not serve access reviews: the exec's own 403 names the rule (the
    # preflight names it first where reviews are served, tests/e2e/test_preflight_e2e.py)
    cluster.knobs.access_reviews = False
    cluster.apply(deployment("web", replicas=2))
    token = cluster.add_user(
        "system:serviceaccount:default:verifier",
        [
            Rule.of(["get", "list", "watch", "patch"], ["deployments", "replicasets"], "apps"),
            Rule.of(["get", "list", "watch"], ["pods"]),
        ],
    )
    kc = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token=token, user="verifier")
    out = run_verify("--deployment", "web", "--expect-env", "HOME", kubeconfig=kc, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert "missing RBAC rule `get pods/exec`" in out.stderr  # the verb a WebSocket exec needs first
    assert "system:serviceaccount:default:verifier" in out.stderr
    assert patches(cluster) == 0


def test_progress_deadline_exceeded_exits_4_with_the_pods_waiting_reasons(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(
        deployment("broken", replicas=1, image="registry.local/doesnotexist:1", progressDeadlineSeconds=2)
    )
    out = run_verify("--deployment", "broken", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    assert "exceeded its progress deadline" in out.stdout
    assert "ImagePullBackOff" in out.stdout or "ErrImagePull" in out.stdout
    assert patches(cluster) == 0


def test_a_pod_running_but_not_ready_is_said_with_its_readiness_probes_failure(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    web = deployment("unready", replicas=1, progressDeadlineSeconds=4)
    app = web["spec"]["template"]["spec"]["containers"][0]
    app["readinessProbe"] = {
        "exec": {"command": ["sh", "-c", "echo database db:5432 refused the connection; exit 1"]},
        "periodSeconds": 1,
    }
    cluster.apply(web)
    out = run_verify("--deployment", "unready", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    # what `kubectl describe pod` shows in its events, in the run's own line
    described = kubectl("describe", "pods", "-l", "app=unready")
    assert "Readiness probe failed: database db:5432 refused the connection" in described
    assert re.search(
        r"container app: running but not ready: Readiness probe failed: database db:5432 refused the connection",
        out.stdout,
    ), out.everything
    assert patches(cluster) == 0


def test_timeout_while_waiting_exits_4(cluster: Cluster, kubeconfig: str, tmp_path: Path) -> None:
    cluster.apply(deployment("slow", replicas=1, image="registry.local/doesnotexist:1"))
    out = run_verify(
        "--deployment",
        "slow",
        "--expect-env",
        "X",
        "--timeout",
        "2s",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 4, out.everything
    assert "timed out" in out.stdout


def test_missing_deployment_exits_3(cluster: Cluster, kubeconfig: str, tmp_path: Path) -> None:
    out = run_verify("--deployment", "nope", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 3, out.everything
    assert 'deployments.apps "nope" not found' in out.stdout
    assert cluster.requests[("get", "deployments")] == 1  # 404 is never retried


def test_bad_expect_file_exits_2_with_one_line_before_any_request(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.reset_counts()
    out = run_verify(
        "--deployment", "web", "--expect-file", "/cm/x=foo:bar", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "--expect-file" in lines[0] and "VERIFY_EXPECT_FILE" in lines[0]
    assert cluster.requests.total() == 0


def test_restart_never_fails_on_first_mismatch(cluster: Cluster, kubeconfig: str, tmp_path: Path) -> None:
    cluster.apply(deployment("web", replicas=2))
    out = run_verify(
        "--deployment",
        "web",
        "--expect-env",
        "FEATURE_CREDENTIAL",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1
    assert patches(cluster) == 0
    # each problem once, on stderr with the one prefix; stdout: the end table and the verdict only,
    # which leads with what failed
    problems = [line for line in out.stderr.splitlines() if "lacks env FEATURE_CREDENTIAL" in line]
    assert len(problems) == 2 and all(line.startswith("rollout-verify: deployment web: pod web-") for line in problems)
    header, row, verdict = out.stdout.splitlines()
    assert header.split() == ["WORKLOAD", "PODS", "CHECKS", "RESTARTS", "RESULT"]
    assert row.split() == ["deployment/web", "0/2", "env", "0/2", "0", "failed"]
    assert verdict == "rollout-verify: FAILED deployment web: 2 of 2 pods failed: container app lacks env FEATURE_CREDENTIAL"


def test_env_contract_matches_flags(cluster: Cluster, kubeconfig: str, tmp_path: Path) -> None:
    cluster.apply(
        deployment("web", replicas=1, env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    )
    out = run_verify(
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
        env={"VERIFY_DEPLOYMENT": "web", "VERIFY_EXPECT_ENV": "A,B", "VERIFY_RESTART": "never"},
    )
    assert out.code == 0, out.everything


@pytest.mark.parametrize(
    ("fault", "route"),
    [
        (Fault("status", status=503, match="^list pods$", times=2), ("list", "pods")),
        (
            Fault("status", status=429, retry_after=1, match="^get deployments$", times=1),
            ("get", "deployments"),
        ),
        (Fault("reset", match="^list replicasets$", times=1), ("list", "replicasets")),
    ],
)
def test_transient_api_errors_are_retried(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, fault: Fault, route: tuple[str, str]
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    cluster.reset_counts()
    cluster.inject(fault)
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert cluster.requests[route] >= 2


def test_secret_file_digest_and_value_never_appear_in_outputs(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("tok", {"token": PLANTED}))
    cluster.apply(
        deployment(
            "web",
            replicas=2,
            volumes=[{"name": "t", "secret": {"secretName": "tok"}}],
            mounts=[{"name": "t", "mountPath": "/var/run/tok"}],
        )
    )
    cluster.wait_rollout("web")
    cluster.apply(secret("tok", {"token": PLANTED + "-rotated"}))  # volumes refresh; let them differ first
    out = run_verify(
        "--deployment",
        "web",
        "--expect-file",
        "/var/run/tok/token=secret:tok/token",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    digests = [hashlib.sha256(v.encode()).hexdigest() for v in (PLANTED, PLANTED + "-rotated")]
    text = out.everything
    assert PLANTED not in text
    for d in digests:
        assert d[:12] not in text
    assert json.dumps(out.report)  # a report was written either way


def test_exec_that_outlives_exec_timeout_is_uninspectable_and_counts_as_failure(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    cluster.knobs.exec_latency = 3.0
    out = run_verify(
        "--deployment",
        "web",
        "--expect-env",
        "A",
        "--exec-timeout",
        "1s",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    assert "exec did not finish within 1s" in out.stderr
    assert out.report is not None
    assert out.report["workloads"][0]["attempts"][0]["pods"][0]["status"] == "uninspectable"


def test_a_container_not_running_for_a_moment_is_inspected_again_not_restarted(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    # the container is not running when its first exec arrives: an apiserver >= 1.30 upgrades the
    # v5 WebSocket, then reports the kubelet's refusal on the error channel (a state: the exec
    # itself is not retried, the container is inspected again)
    cluster.knobs.exec_not_running.update(p["metadata"]["name"] for p in cluster.list("Pod"))
    cluster.reset_counts()
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert out.report is not None and out.report["restarted"] is False
    assert cluster.requests[("patch", "deployments")] == 0
    (only,) = out.report["workloads"][0]["attempts"]
    assert only["pods"][0]["status"] == "ok"
    assert "1 container could not be inspected (pod " in out.stderr
    assert "container app: container app is not running); inspecting it again for up to" in out.stderr
    assert cluster.requests[("create", "pods/exec")] == 2


def test_explicit_sha256_of_a_secret_mounted_file_never_prints_the_found_digest(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(secret("tls", {"tls.key": PLANTED}))
    cluster.apply(
        deployment(
            "web",
            replicas=1,
            volumes=[{"name": "t", "secret": {"secretName": "tls"}}],
            mounts=[{"name": "t", "mountPath": "/etc/tls"}],
        )
    )
    out = run_verify(
        "--deployment",
        "web",
        "--expect-file",
        f"/etc/tls/tls.key=sha256:{'0' * 64}",
        "--restart",
        "never",
        kubeconfig=kubeconfig,
        tmp_path=tmp_path,
    )
    assert out.code == 1, out.everything
    assert "/etc/tls/tls.key" in out.stderr
    assert hashlib.sha256(PLANTED.encode()).hexdigest()[:12] not in out.everything


def test_paused_deployment_with_a_pending_change_exits_4_at_once(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    kubectl("rollout", "pause", "deployment/web")
    kubectl("set", "env", "deployment/web", "B=2")
    cluster.reset_counts()
    t0 = time.monotonic()
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    assert "is paused" in out.stdout
    assert time.monotonic() - t0 < 60  # at once: not the 10-minute default wait
    assert cluster.requests[("patch", "deployments")] == 0


def test_a_native_sidecars_missing_key_is_found_and_fixed_by_one_restart_like_any_containers(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    """A native sidecar (an init container with restartPolicy Always) reads its env at start like
    any container: a key synced after it started is missing there until a restart."""
    cluster.apply(secret("side-secrets", {"DB_URL": "postgres://x"}))
    web = deployment("web", replicas=1, env=[{"name": "A", "value": "1"}])
    web["spec"]["template"]["spec"]["initContainers"] = [
        {
            "name": "proxy",
            "image": "registry.local/app:1",
            "restartPolicy": "Always",
            "envFrom": [{"secretRef": {"name": "side-secrets"}}],
        }
    ]
    cluster.apply(web)
    cluster.wait_rollout("web")
    cluster.apply(secret("side-secrets", {"DB_URL": "postgres://x", "SIDECAR_TOKEN": PLANTED}))
    out = run_verify(
        "--deployment", "web", "--container", "proxy", "--expect-env", "SIDECAR_TOKEN",
        kubeconfig=kubeconfig, tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 0, out.everything
    assert out.report["restarted"] is True
    first = out.report["workloads"][0]["attempts"][0]["pods"][0]["containers"]
    assert [(c["name"], c["status"]) for c in first] == [("proxy", "missing")]
    assert "container proxy lacks env SIDECAR_TOKEN" in out.stdout + out.stderr
    assert patches(cluster) == 1


def test_a_container_the_template_lacks_is_exit_2_before_waiting_naming_the_ones_it_has(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    """A typo in --container would wait for the whole rollout and then fail every pod: the
    template is read first, the run ends with one line and the likeliest meant name."""
    web = deployment("web", replicas=1, image="registry.local/doesnotexist:1")  # never rolls out
    web["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "proxy", "image": "registry.local/app:1", "restartPolicy": "Always"}
    ]
    cluster.apply(web)
    cluster.reset_counts()
    out = run_verify(
        "web", "--container", "prxy", "--container", "app", "--expect-env", "A", "--timeout", "60s",
        kubeconfig=kubeconfig, tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 2, out.everything
    (line,) = out.stderr.splitlines()
    assert line == (
        'rollout-verify: error: --container: deployment web has no container "prxy" in its pod template '
        "(it has: app, proxy); did you mean proxy? (VERIFY_CONTAINERS)"
    )
    assert cluster.requests[("watch", "deployments")] == 0 and patches(cluster) == 0  # never waited
    assert out.report is not None and out.report["exit_code"] == 2

    far = run_verify("web", "--container", "zzzzzz", "--expect-env", "A", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert far.code == 2 and "(it has: app, proxy) (VERIFY_CONTAINERS)" in far.stderr, far.stderr
