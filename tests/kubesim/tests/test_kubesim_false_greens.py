"""Seven places kubesim once said "yes" where a cluster says "no", judged by the real kubectl, each
against the upstream source that defines the behaviour:

- a server-side dry run changes nothing, on every write path (apiserver
  pkg/endpoints/handlers/delete.go and rest.go pass dryRun to the registry,
  pkg/registry/generic/registry/store.go skips the storage write; the scale subresource too);
- a stuck rollout's surge pod is unavailable (pkg/controller/deployment/sync.go calculateStatus:
  the ReplicaSets' spec.replicas less the available ones);
- keys applied into a map that was applied empty are stored (structured-merge-diff merge/update.go
  prune + fieldpath/set.go EnsureNamedFieldsAreMembers);
- a patch whose result does not decode into the kind is refused (apiserver handlers/patch.go: a
  422 on the field `patch`), as is a create or update body (create.go transformDecodeError: 400);
- names are validated (apimachinery pkg/api/validation/objectmeta.go ValidateObjectMeta, each
  kind's own rule from pkg/apis/*/validation);
- a container whose PID 1 installs no SIGTERM handler ignores the kubelet's SIGTERM and is killed
  when its grace period is over (kernel/signal.c: a PID namespace's init gets no default actions).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import STOPS_ON_TERM
from tests.support.kubectl import Kubectl


def _replicas(kubectl: Kubectl, name: str) -> str:
    return kubectl("get", "deployment", name, "-o", "jsonpath={.spec.replicas}")


def test_a_server_dry_run_deletes_and_scales_nothing(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("create", "configmap", "cfg", "--from-literal=a=1")
    kubectl("create", "deployment", "web", "--image=busybox:1.36", "--replicas=1", "--", "sleep", "3600")
    kubectl("run", "solo", "--image=busybox:1.36", "--", "sleep", "3600")
    cluster.wait_for(lambda: cluster.get("Pod", "solo") is not None, what="the pod")
    for kind, name in (("configmap", "cfg"), ("deployment", "web"), ("pod", "solo")):
        out = kubectl("delete", kind, name, "--dry-run=server")
        assert out.strip().endswith(f'"{name}" deleted (server dry run)'), out
        live = json.loads(kubectl("get", kind, name, "-o", "json"))
        assert "deletionTimestamp" not in live["metadata"], live["metadata"]
    out = kubectl("scale", "deployment", "web", "--replicas=3", "--dry-run=server")
    assert out.strip() == "deployment.apps/web scaled (server dry run)"
    assert _replicas(kubectl, "web") == "1"
    kubectl("scale", "deployment", "web", "--replicas=2")
    assert _replicas(kubectl, "web") == "2"


def test_a_stuck_rollouts_surge_pod_is_counted_unavailable(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=busybox:1.36", "--replicas=2", "--", "sleep", "3600")
    cluster.wait_rollout("web", timeout=90)
    kubectl("set", "image", "deployment/web", "busybox=busybox:doesnotexist")

    def status() -> dict[str, int]:
        return json.loads(kubectl("get", "deployment", "web", "-o", "jsonpath={.status}"))  # type: ignore[no-any-return]

    # maxSurge 25% of 2 rounds up to 1 new pod, maxUnavailable rounds down to 0: 3 pods, 2 available
    cluster.wait_for(lambda: status().get("updatedReplicas") == 1, timeout=60, what="the surge pod")
    st = status()
    assert (st["replicas"], st["availableReplicas"], st["unavailableReplicas"]) == (3, 2, 1), st
    described = kubectl("describe", "deployment", "web")
    assert "2 desired | 1 updated | 3 total | 2 available | 1 unavailable" in described


CM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations: ANNOTATIONS
data: DATA
"""
DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: ANNOTATIONS
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: app, image: "busybox:1.36", command: [sleep, "3600"]}]
"""


def test_server_side_apply_stores_keys_added_to_maps_it_applied_empty(cluster: Cluster, kubectl: Kubectl) -> None:
    kubectl("apply", "--server-side", "-f", "-", input=CM.replace("ANNOTATIONS", "{}").replace("DATA", "{}"))
    out = kubectl(
        "apply", "--server-side", "-f", "-",
        input=CM.replace("ANNOTATIONS", '{team: "blue"}').replace("DATA", '{mode: "fast"}'),
    )  # fmt: skip
    assert out.strip() == "configmap/settings serverside-applied"
    cm = json.loads(kubectl("get", "configmap", "settings", "-o", "json"))
    assert cm["data"] == {"mode": "fast"} and cm["metadata"]["annotations"] == {"team": "blue"}
    # a pod template annotation added the same way rolls out
    kubectl("apply", "--server-side", "-f", "-", input=DEPLOY.replace("ANNOTATIONS", "{}"))
    cluster.wait_rollout("web", timeout=90)
    kubectl("apply", "--server-side", "-f", "-", input=DEPLOY.replace("ANNOTATIONS", '{rev: "2"}'))
    template = json.loads(kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.template.metadata}"))
    assert template["annotations"] == {"rev": "2"}
    cluster.wait_rollout("web", timeout=90)
    assert "rev: 2" in kubectl("rollout", "history", "deployment/web", "--revision=2")


def test_a_patch_or_body_that_does_not_decode_into_the_kind_is_refused(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "deployment", "web", "--image=busybox:1.36", "--replicas=1", "--", "sleep", "3600")
    merge = kubectl.run("patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":"two"}}', check=False)
    assert merge.returncode == 1
    assert merge.stderr.startswith('The request is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"apps/v1\\",')
    assert merge.stderr.rstrip().endswith(
        ": json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    )
    strategic = kubectl.run("patch", "deployment", "web", "-p", '{"spec":{"replicas":"two"}}', check=False)
    assert strategic.stderr.strip() == (
        'The request is invalid: patch: Invalid value: "map[spec:map[replicas:two]]": unrecognized type: int32'
    )
    assert _replicas(kubectl, "web") == "1"  # stored unchanged, and still readable
    live = json.loads(kubectl("get", "deployment", "web", "-o", "json"))
    live["spec"]["replicas"] = "two"
    (tmp_path / "web.json").write_text(json.dumps(live))
    replaced = kubectl.run("replace", "-f", str(tmp_path / "web.json"), check=False)
    assert replaced.returncode == 1
    assert (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into '
        "Go struct field DeploymentSpec.spec.replicas of type int32"
    ) in replaced.stderr
    assert _replicas(kubectl, "web") == "1"


SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def test_names_are_validated_by_each_kinds_rule(cluster: Cluster, kubectl: Kubectl) -> None:
    refused = {
        "ConfigMap": kubectl.run("create", "configmap", "Bad_Name", "--from-literal=a=1", check=False),
        "Secret": kubectl.run("create", "secret", "generic", "Bad_Name", "--from-literal=a=1", check=False),
        "Pod": kubectl.run("run", "Bad_Name", "--image=busybox:1.36", check=False),
        "Deployment.apps": kubectl.run("create", "deployment", "Bad_Name", "--image=busybox:1.36", check=False),
    }
    for kind, proc in refused.items():
        assert proc.returncode == 1, (kind, proc.stdout)
        assert f'{kind} "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}' in proc.stderr
    # a Service's name is a DNS-1035 label (no leading digit), a Namespace's a label (no dots)
    svc = kubectl.run("create", "service", "clusterip", "1web", "--tcp=80:80", check=False)
    assert 'Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label' in svc.stderr
    ns = kubectl.run("create", "namespace", "team.blue", check=False)
    assert 'Namespace "team.blue" is invalid: metadata.name: Invalid value: "team.blue": must not contain dots' in ns.stderr
    # an RBAC object's name is any path segment
    kubectl("create", "role", "Bad_Name", "--verb=get", "--resource=pods")
    assert all(cluster.get(k.split(".")[0], "Bad_Name") is None for k in refused)


def test_a_pod_whose_pid_1_ignores_sigterm_stays_terminating_until_its_grace_period_ends(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    # busybox sleep installs no SIGTERM handler: as its container's PID 1 it never sees the
    # kubelet's SIGTERM and is SIGKILLed when the 5 s are over; a shell that traps it stops at once
    kubectl("run", "stubborn", "--image=busybox:1.36", "--", "sleep", "3600")
    kubectl("run", "polite", "--image=busybox:1.36", "--", *STOPS_ON_TERM)
    for name in ("stubborn", "polite"):
        kubectl("wait", "--for=condition=Ready", f"pod/{name}", "--timeout=60s")
    started = time.monotonic()
    kubectl("delete", "pod", "stubborn", "--grace-period=5", "--wait=false")
    pod = json.loads(kubectl("get", "pod", "stubborn", "-o", "json"))
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 5
    kubectl("wait", "--for=delete", "pod/stubborn", "--timeout=60s")
    assert time.monotonic() - started >= 4.5  # the kubelet waited out the grace period
    started = time.monotonic()
    kubectl("delete", "pod", "polite", "--grace-period=30", "--wait=true", timeout=60)
    assert time.monotonic() - started < 25  # its handler ended it long before its 30 s were over
