"""The permissions one workload's verification needs, as RBAC rules: what the wait, the selection,
the probes, the sources and the one restart will ask the API server for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify.config.job import TargetPlan
from verify.flow.argo_rollout import workload_ref
from verify.kube import objects
from verify.kube.access import Rule
from verify.kube.kinds import GROUP, PLURAL


def reads_template(plan: TargetPlan) -> bool:
    """Whether the rules depend on the workload's template: --from-spec reads every source it names.

    Judging whether a restart can add a missing key also reads the sources env draws on (and, with
    --expect-env, whether an expected key is one its source no longer has), and without them the
    judgment is doubt (no restart, the permission named; no stale key found): a healthy rollout
    verifies without them, so they are not asked for here."""
    return plan.from_spec


def needed(
    *, plan: TargetPlan, workload: Mapping[str, Any] | None, restart: bool, debug: bool = False
) -> list[Rule]:
    """`workload` (its template names the sources to read) may be None when not read; `debug`:
    --debug-image is set, so a container without a shell gets an ephemeral debug container."""
    kind, name = plan.ref.kind, plan.ref.name
    plural, group = PLURAL[kind], GROUP[kind]
    rules = [
        Rule("get", plural, group, name=name),
        Rule("watch", plural, group, name=name),
        Rule("list", "pods"),
    ]
    if plan.from_spec or plan.expect_env or plan.expect_file:
        # a WebSocket exec is authorised as `get`, and from Kubernetes 1.35 also as `create`
        rules += [Rule("get", "pods", subresource="exec"), Rule("create", "pods", subresource="exec")]
        if debug:
            rules += [Rule("get", "pods"), Rule("patch", "pods", subresource="ephemeralcontainers")]
    if kind in ("deployment", "rollout"):
        rules.append(Rule("list", "replicasets", "apps"))
    elif kind == "daemonset" or restart:
        # a DaemonSet's revision is its newest ControllerRevision; a StatefulSet's restart record
        # names the number its update revision has in that history
        rules.append(Rule("list", "controllerrevisions", "apps"))
    if kind == "rollout" and workload is not None and workload_ref(workload):
        rules.append(Rule("get", "deployments", "apps", name=workload_ref(workload)))
    if restart:
        rules.append(Rule("patch", plural, group, name=name))
    if plan.expect_http:
        rules.append(Rule("get", "pods", subresource="proxy"))
    sources: set[tuple[str, str]] = {(f.source, f.name) for f in plan.expect_file if f.source != "sha256"}
    sources |= {
        ("configmap", c.equals_configmap.partition("/")[0]) for c in plan.expect_http if c.equals_configmap
    }
    if reads_template(plan) and workload is not None:
        from verify.flow.derive import referenced_objects  # with the sources' checks: not start-up

        sources |= referenced_objects(pod_spec=objects.pod_spec(workload))
    for kind_of, source in sorted(sources):
        rules.append(Rule("get", "configmaps" if kind_of == "configmap" else "secrets", name=source))
    return rules
