"""rollout-verify against rollouts kubesim used to complete although a real cluster never would
(false greens, issue #17): pods asking for more CPU than any node has stay Pending with the
scheduler's FitError, a container past its memory limit is OOMKilled over and over, an image tag
with a typo never pulls. Each exits 4 naming the cause, and nothing is restarted."""

from __future__ import annotations

from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify


def patches(cluster: Cluster) -> int:
    return cluster.requests[("patch", "deployments")]


def test_pods_no_node_has_room_for_exit_4_with_the_schedulers_fit_error(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    web = deployment("big", replicas=2, command=["sleep", "3600"], progressDeadlineSeconds=3)
    web["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "64"}}
    cluster.apply(web)
    out = run_verify("--deployment", "big", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    assert "Pending (unscheduled): 0/3 nodes are available: 3 Insufficient cpu." in out.stdout, out.everything
    assert patches(cluster) == 0


def test_a_container_oom_killed_over_and_over_exits_4_naming_oomkilled(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    hog = "import time; hog = b'x' * (200 * 1024 * 1024); time.sleep(600)"
    web = deployment(
        "hog",
        replicas=1,
        image="kubesim.local/configapp:1",
        command=["python3", "-c", hog],
        progressDeadlineSeconds=8,
    )
    app = web["spec"]["template"]["spec"]["containers"][0]
    app["resources"] = {"limits": {"memory": "48Mi"}}
    # never ready: the pod is never available in the moment between a restart and the next kill
    app["readinessProbe"] = {"exec": {"command": ["false"]}, "periodSeconds": 1}
    cluster.apply(web)
    out = run_verify("--deployment", "hog", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    assert "exit code 137 (OOMKilled)" in out.stdout, out.everything
    assert patches(cluster) == 0


def test_a_missing_image_tag_exits_4_with_the_runtimes_pull_error(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("typo", replicas=1, image="nginx:doesnotexist", progressDeadlineSeconds=3))
    out = run_verify("--deployment", "typo", "--expect-env", "X", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 4, out.everything
    assert "ErrImagePull" in out.stdout or "ImagePullBackOff" in out.stdout, out.everything
    assert patches(cluster) == 0
