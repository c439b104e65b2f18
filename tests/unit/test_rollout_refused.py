"""A Deployment whose pods the API refuses: the ReplicaFailure condition is the reason shown."""

from __future__ import annotations

from verify.diagnose.rollout import creation_failure


def test_a_replica_failure_is_why_a_deployment_has_no_pods() -> None:
    refused = {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": 'pods "web-7c9f-" is forbidden: error looking up service account default/app: '
        'serviceaccount "app" not found',
    }
    dep = {"status": {"conditions": [{"type": "Available", "status": "False"}, refused]}}
    assert creation_failure(workload=dep) == f"pods cannot be created: {refused['message']}"
    assert creation_failure(workload={"status": {"conditions": [{**refused, "status": "False"}]}}) is None
    assert creation_failure(workload={}) is None
