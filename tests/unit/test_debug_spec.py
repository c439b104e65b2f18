"""The ephemeral debug container's spec and state (verify/flow/probe/debug_spec.py): the target's
user, no privileges, the target's PID namespace, reuse of a running one, and its failures."""

from __future__ import annotations

from typing import Any

import pytest

from verify.config.values import image_reference
from verify.flow.probe.debug_spec import debug_container, free_name, reusable, shared_pid_namespace, state
from verify.flow.probe.debugger import DebugContainer, debug_lines


def pod(
    *ephemeral: dict[str, Any], statuses: list[dict[str, Any]] | None = None, **sc: Any
) -> dict[str, Any]:
    return {
        "spec": {
            "containers": [
                {"name": "app", "image": "gcr.io/distroless/static:nonroot", "securityContext": sc}
            ],
            "ephemeralContainers": list(ephemeral),
        },
        "status": {"ephemeralContainerStatuses": statuses or []},
    }


def test_the_debug_container_is_the_targets_user_without_privileges_in_its_pid_namespace() -> None:
    spec = debug_container(
        pod=pod(runAsUser=65532, runAsGroup=65532, privileged=True),
        target="app",
        image="busybox:1.36",
        name="rv-abcde",
        lifetime=3600,
    )
    assert spec["targetContainerName"] == "app" and spec["name"] == "rv-abcde"
    assert spec["command"] == ["sleep", "3600"] and spec["stdin"] is False and spec["tty"] is False
    sc = spec["securityContext"]
    assert (sc["runAsUser"], sc["runAsGroup"], sc["runAsNonRoot"]) == (65532, 65532, True)
    assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]} and sc["readOnlyRootFilesystem"] is True
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    # ephemeral containers may not have ports, probes or resources: none are set
    assert not {"ports", "resources", "livenessProbe", "readinessProbe", "lifecycle"} & set(spec)


def test_a_target_without_a_user_leaves_it_to_the_pod_and_the_image() -> None:
    sc = debug_container(pod=pod(), target="app", image="busybox:1.36", name="rv-x", lifetime=60)[
        "securityContext"
    ]
    assert "runAsUser" not in sc and "runAsNonRoot" not in sc


def test_a_running_or_starting_debug_container_for_the_same_target_and_image_is_reused() -> None:
    mine = {"name": "rv-old", "image": "busybox:1.36", "targetContainerName": "app"}
    other_image = {"name": "rv-img", "image": "busybox:1.37", "targetContainerName": "app"}
    someone = {"name": "debugger-x", "image": "busybox:1.36", "targetContainerName": "app"}
    running = [{"name": "rv-old", "state": {"running": {}}}, {"name": "debugger-x", "state": {"running": {}}}]
    assert (
        reusable(pod(someone, other_image, mine, statuses=running), target="app", image="busybox:1.36")
        == "rv-old"
    )
    assert reusable(pod(mine), target="app", image="busybox:1.36") == "rv-old"  # no status yet: starting
    done = [{"name": "rv-old", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]
    assert reusable(pod(mine, statuses=done), target="app", image="busybox:1.36") is None
    assert reusable(pod(mine, statuses=running), target="side", image="busybox:1.36") is None


def test_a_name_is_never_taken_twice_in_a_pod() -> None:
    assert free_name(pod(), "abcde") == "rv-abcde"
    taken = pod({"name": "rv-abcde"}, {"name": "rv-abcde-2"})
    assert free_name(taken, "abcde") == "rv-abcde-3"


@pytest.mark.parametrize(
    ("status", "phase"),
    [
        ({"running": {}}, "running"),
        ({"waiting": {"reason": "ContainerCreating"}}, "starting"),
        ({"waiting": {"reason": "ErrImagePull", "message": "not found"}}, "failed"),
        (
            {"waiting": {"reason": "CreateContainerConfigError", "message": "image will run as root"}},
            "failed",
        ),
        ({"terminated": {"exitCode": 1, "reason": "Error"}}, "failed"),
    ],
)
def test_its_state_is_read_from_the_ephemeral_container_statuses(status: dict[str, Any], phase: str) -> None:
    p = pod({"name": "rv-a"}, statuses=[{"name": "rv-a", "state": status}])
    got = state(p, "rv-a")
    assert got.phase == phase
    if phase == "failed" and "waiting" in status:
        assert status["waiting"]["reason"] in got.reason and status["waiting"]["message"] in got.reason
    assert state(p, "rv-b").phase == "absent"


def test_the_report_lines_name_every_pod_that_got_one() -> None:
    lines = debug_lines(
        (
            DebugContainer("shop", "web-1", "app", "rv-a", added=True),
            DebugContainer("shop", "web-2", "app", "rv-b", added=False),
        )
    )
    assert lines[0].startswith("added 1 ephemeral debug container (they stay in the pod spec")
    assert "shop/web-1 (rv-a -> app)" in lines[0] and "shop/web-2 (rv-b -> app)" in lines[1]
    assert debug_lines(()) == []


@pytest.mark.parametrize(
    "good", ["busybox:1.36", "gcr.io/distroless/static:debug-nonroot", "localhost:5000/a/b:1"]
)
def test_a_debug_image_is_an_image_reference(good: str) -> None:
    assert image_reference(good) == good


@pytest.mark.parametrize("bad", ["", "busy box", "busybox;rm", "UPPER:1", "a\nb"])
def test_anything_else_is_refused_with_an_example(bad: str) -> None:
    with pytest.raises(ValueError, match=r"busybox:1\.36"):
        image_reference(bad)


def test_a_pod_sharing_one_process_namespace_is_not_read_through_pid_1() -> None:
    # PID 1 there is the pause process: reading it would judge the wrong environment
    shared = pod()
    shared["spec"]["shareProcessNamespace"] = True
    why = shared_pid_namespace(shared)
    assert why is not None and "shareProcessNamespace" in why and "pause" in why
    assert shared_pid_namespace(pod()) is None
