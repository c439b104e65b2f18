"""Who a container's process is, as the kubelet and runtime decide it: runAsUser/runAsGroup
(else the image's USER), the kubelet's runAsNonRoot refusal
(pkg/kubelet/kuberuntime/security_context_others.go verifyRunAsNonRoot),
readOnlyRootFilesystem, and a PID namespace per container (its PID 1's SIGTERM:
test_kubesim_false_greens.py)."""

from __future__ import annotations

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl


def pod(name: str, **sc: object) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "terminationGracePeriodSeconds": 100,
            "containers": [
                {"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"], "securityContext": sc}
            ],
        },
    }


def state(cluster: Cluster, name: str) -> dict[str, object]:
    statuses = ((cluster.get("Pod", name) or {}).get("status") or {}).get("containerStatuses") or [{}]
    return dict(statuses[0].get("state") or {})


def test_run_as_user_and_group_and_a_read_only_root(cluster: Cluster, kubectl: Kubectl) -> None:
    cluster.apply(pod("who", runAsUser=1234, runAsGroup=2345, readOnlyRootFilesystem=True))
    cluster.wait_for(lambda: "running" in state(cluster, "who"), timeout=60)
    out = kubectl(
        "exec", "who", "--", "sh", "-c", "id -u; id -g; touch /x 2>&1 || echo ro; cat /proc/1/status"
    )
    lines = out.splitlines()
    assert lines[:2] == ["1234", "2345"], out
    assert "Read-only file system" in out or "ro" in lines, out
    # the app and the exec share the container's own PID namespace; its init is the runtime's
    assert any(line.startswith("Uid:\t1234") for line in lines), out


def test_run_as_non_root_refuses_an_image_that_would_run_as_root(cluster: Cluster, kubectl: Kubectl) -> None:
    cluster.apply(pod("rootish", runAsNonRoot=True))
    cluster.wait_for(
        lambda: (
            "waiting" in state(cluster, "rootish")
            and state(cluster, "rootish")["waiting"].get("reason") == "CreateContainerConfigError"
        ),
        timeout=60,
    )  # type: ignore[union-attr]
    uid = (cluster.get("Pod", "rootish") or {})["metadata"]["uid"]
    message = state(cluster, "rootish")["waiting"]["message"]  # type: ignore[index]
    assert message == (
        f'container has runAsNonRoot and image will run as root (pod: "rootish_default({uid})", container: app)'
    )
    row = kubectl("get", "pod", "rootish", "--no-headers").split()
    assert row[2] == "CreateContainerConfigError", row
