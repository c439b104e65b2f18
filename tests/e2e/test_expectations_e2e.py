"""Expectations checked against the template's sources, on kubesim with the real kubectl: an
expected key no source provides but a close name does gets a did-you-mean (names only); an
expected key the pods still carry although its Secret no longer has it fails at once, since the
next restart or scale-up loses it and a restart cannot help."""

from __future__ import annotations

import json
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify, secret
from tests.support.kubectl import Kubectl

PASSWORD = "s3cr3t-db-password-70e2"
TOKEN = "s3cr3t-api-token-18bc"


def patches(cluster: Cluster) -> int:
    return cluster.requests[("patch", "deployments")]


def test_a_mistyped_key_gets_a_did_you_mean_and_a_key_its_secret_lost_fails_without_a_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", input=json.dumps(secret("web-env", {"DB_PASSWORD": PASSWORD, "API_TOKEN": TOKEN})))
    kubectl("apply", "-f", "-", input=json.dumps(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-env"}}])))
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")

    github = {"GITHUB_ACTIONS": "true"}
    typo = run_verify("--deployment", "web", "--expect-env", "DB_PASWORD", kubeconfig=kubeconfig, tmp_path=tmp_path, env=github)
    assert typo.code == 1, typo.everything
    assert patches(cluster) == 0  # no source provides it: no restart can add it
    meant = "no source in deployment web's template provides DB_PASWORD: a restart cannot add it; did you mean DB_PASSWORD?"
    assert meant in typo.stderr
    errors = [line for line in typo.stdout.splitlines() if line.startswith("::error ")]
    assert errors and all(meant in line for line in errors[:1])  # the annotation's remedy
    assert meant in typo.summary and meant in typo.junit
    assert PASSWORD not in typo.everything and TOKEN not in typo.everything

    passing = run_verify("--deployment", "web", "--expect-env", "API_TOKEN", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert passing.code == 0, passing.everything

    # the key leaves the Secret; the running pods keep it until their next restart
    kubectl("apply", "-f", "-", input=json.dumps(secret("web-env", {"DB_PASSWORD": PASSWORD})))
    stale = run_verify("--deployment", "web", "--expect-env", "API_TOKEN", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert stale.code == 1, stale.everything
    assert patches(cluster) == 0  # a restart would remove the key: it cannot help
    line = "secret web-env no longer has API_TOKEN; pods keep it until their next restart"
    assert stale.stdout.splitlines()[-1].startswith(
        f"rollout-verify: FAILED deployment web: 2 of 2 pods failed: container app env API_TOKEN is stale: {line}"
    ), stale.everything
    assert f"{line}: a restart removes it, so it cannot help" in stale.stderr  # the diagnosis
    assert stale.report is not None and stale.report["message"].startswith(f"a restart cannot fix this: {line}")
    checks = [c for p in stale.report["workloads"][0]["attempts"][-1]["pods"] for c in p["containers"][0]["checks"]]
    assert [(c["status"], c["restart_can_fix"]) for c in checks] == [("mismatch", False)] * 2
    assert PASSWORD not in stale.everything and TOKEN not in stale.everything

    # zero-config: once a pod started after the change lacks the key, the pod that still carries it
    # is stale, a mismatch one restart fixes (while every pod carries it, nothing tells it from the
    # image's own env)
    old = sorted(kubectl("get", "pods", "-l", "app=web", "-o", "name").split())
    kubectl("delete", old[0])
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    cluster.wait_for(lambda: len(cluster.list("Pod")) == 2, what="the deleted pod gone")
    healed = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert healed.code == 0, healed.everything
    assert patches(cluster) == 1
    kept = old[1].removeprefix("pod/")
    assert f"deployment web: pod {kept} (node-" in healed.stderr
    assert f"container app env API_TOKEN is stale: {line}" in healed.stderr
    assert "restarting once" in healed.stderr
    assert healed.stdout.splitlines()[-1] == "rollout-verify: PASSED deployment web: 2 pods verified after 1 restart"
    assert PASSWORD not in healed.everything and TOKEN not in healed.everything
