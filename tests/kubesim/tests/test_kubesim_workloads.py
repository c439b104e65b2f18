"""kubesim's StatefulSets, DaemonSets and ControllerRevisions, judged by the real kubectl and the
official Python client: ordering, partitions, revision hashes, node pinning, rollouts, GC."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config, watch

from tests.kubesim import Cluster
from tests.support.helpers import configmap, daemonset, statefulset
from tests.support.kubectl import Kubectl

HASH = "controller-revision-hash"


def api(cluster: Cluster, tmp_path: Path) -> client.ApiClient:
    path = cluster.write_kubeconfig(tmp_path / "py.kubeconfig")
    return config.new_client_from_config(config_file=path)


def pod_events(v1: client.CoreV1Api, rv: str) -> list[tuple[str, str, str, bool, bool, str]]:
    """Every pod event since `rv`: (type, name, node, ready, terminating, revision hash)."""
    out = []
    for ev in watch.Watch().stream(v1.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1):
        p = ev["object"]
        ready = any(c.type == "Ready" and c.status == "True" for c in (p.status.conditions or []))
        out.append(
            (
                ev["type"],
                p.metadata.name,
                p.spec.node_name or "",
                ready,
                p.metadata.deletion_timestamp is not None,
                (p.metadata.labels or {}).get(HASH, ""),
            )
        )
    return out


def first(events: list[tuple[Any, ...]], pred: Any) -> int:
    return next(i for i, e in enumerate(events) if pred(e))


def pods_json(kubectl: Kubectl, selector: str) -> list[dict[str, Any]]:
    items = json.loads(kubectl("get", "pods", "-l", selector, "-o", "json"))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def revisions(kubectl: Kubectl) -> dict[str, dict[str, Any]]:
    items = json.loads(kubectl("get", "controllerrevisions", "-o", "json"))["items"]
    return {r["metadata"]["name"]: r for r in items}


def test_statefulset_creates_pods_in_order_and_rolls_from_the_highest_ordinal_down_to_the_partition(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    v1 = client.CoreV1Api(api(cluster, tmp_path))
    apps = client.AppsV1Api(v1.api_client)
    cluster.apply(configmap("web-cfg", {"mode": "a"}))
    rv = v1.list_namespaced_pod("default").metadata.resource_version
    obj = statefulset(
        "web",
        replicas=3,
        volumes=[{"name": "cfg", "configMap": {"name": "web-cfg"}}],
        mounts=[{"name": "cfg", "mountPath": "/cfg"}],
    )
    kubectl("apply", "-f", "-", input=yaml.safe_dump(obj))
    out = kubectl("rollout", "status", "statefulset/web", "--timeout=60s")
    assert "partitioned roll out complete: 3 new pods have been updated..." in out

    # OrderedReady: web-N is created only once web-(N-1) is Running and Ready
    events = pod_events(v1, rv)
    added = [e[1] for e in events if e[0] == "ADDED"]
    assert added == ["web-0", "web-1", "web-2"]
    for prev, nxt in (("web-0", "web-1"), ("web-1", "web-2")):
        ready_at = first(events, lambda e, p=prev: e[1] == p and e[3])
        assert first(events, lambda e, n=nxt: e[0] == "ADDED" and e[1] == n) > ready_at

    sts = apps.read_namespaced_stateful_set("web", "default")
    rev1 = sts.status.update_revision
    assert sts.status.current_revision == rev1 and rev1.startswith("web-")
    assert (sts.status.replicas, sts.status.ready_replicas, sts.status.current_replicas) == (3, 3, 3)
    for i, p in enumerate(sorted(pods_json(kubectl, "app=web"), key=lambda p: p["metadata"]["name"])):
        labels = p["metadata"]["labels"]
        assert p["metadata"]["name"] == f"web-{i}" and p["spec"]["hostname"] == f"web-{i}"
        assert labels[HASH] == rev1
        assert labels["statefulset.kubernetes.io/pod-name"] == f"web-{i}"
        assert labels["apps.kubernetes.io/pod-index"] == str(i)
        assert p["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    cr = revisions(kubectl)[rev1]
    assert cr["revision"] == 1 and cr["metadata"]["ownerReferences"][0]["name"] == "web"
    assert cr["data"]["spec"]["template"]["$patch"] == "replace"
    assert cr["metadata"]["labels"]["app"] == "web"
    # the kubelets run these pods like any other: the ConfigMap volume is there
    assert kubectl("exec", "web-1", "--", "cat", "/cfg/mode") == "a"

    # a new template with partition 2: only web-2 moves to the new revision
    patch = {
        "spec": {
            "updateStrategy": {"rollingUpdate": {"partition": 2}},
            "template": {"spec": {"containers": [{"name": "app", "env": [{"name": "REV", "value": "2"}]}]}},
        }
    }
    kubectl("patch", "statefulset", "web", "-p", json.dumps(patch))
    out = kubectl("rollout", "status", "statefulset/web", "--timeout=60s")
    assert "partitioned roll out complete: 1 new pods have been updated..." in out
    sts = apps.read_namespaced_stateful_set("web", "default")
    rev2 = sts.status.update_revision
    assert rev2 != rev1 and sts.status.current_revision == rev1
    assert (sts.status.updated_replicas, sts.status.current_replicas) == (1, 2)
    hashes = {p["metadata"]["name"]: p["metadata"]["labels"][HASH] for p in pods_json(kubectl, "app=web")}
    assert hashes == {"web-0": rev1, "web-1": rev1, "web-2": rev2}
    # the new pod was started by a kubelet with the new env; the others never were
    assert kubectl("exec", "web-2", "--", "printenv", "REV").strip() == "2"
    assert kubectl.run("exec", "web-0", "--", "printenv", "REV", check=False).returncode == 1
    assert {n: r["revision"] for n, r in revisions(kubectl).items()} == {rev1: 1, rev2: 2}
    history = kubectl("rollout", "history", "statefulset/web").split()
    assert history[history.index("REVISION") :][:6] == [
        "REVISION",
        "CHANGE-CAUSE",
        "1",
        "<none>",
        "2",
        "<none>",
    ]

    # partition 0: the rest roll from the highest ordinal down, one at a time
    rv = v1.list_namespaced_pod("default").metadata.resource_version
    kubectl(
        "patch", "statefulset", "web", "-p", '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}'
    )
    out = kubectl("rollout", "status", "statefulset/web", "--timeout=60s")
    assert "partitioned roll out complete: 3 new pods have been updated..." in out
    events = pod_events(v1, rv)
    stopped = [e[1] for e in events if e[4] and e[0] == "MODIFIED"]
    assert list(dict.fromkeys(stopped)) == ["web-1", "web-0"]
    web1_back = first(events, lambda e: e[1] == "web-1" and e[5] == rev2 and e[3])
    assert web1_back < first(events, lambda e: e[1] == "web-0" and e[4])
    sts = apps.read_namespaced_stateful_set("web", "default")
    assert sts.status.current_revision == sts.status.update_revision == rev2
    assert sts.status.current_replicas == 3
    assert {p["metadata"]["labels"][HASH] for p in pods_json(kubectl, "app=web")} == {rev2}

    # `kubectl rollout restart` patches the template: a third revision, rolled out to every pod
    assert "statefulset.apps/web restarted" in kubectl("rollout", "restart", "statefulset/web")
    out = kubectl("rollout", "status", "statefulset/web", "--timeout=60s")
    assert "partitioned roll out complete: 3 new pods have been updated..." in out
    rev3 = apps.read_namespaced_stateful_set("web", "default").status.update_revision
    assert rev3 not in (rev1, rev2)
    assert {p["metadata"]["labels"][HASH] for p in pods_json(kubectl, "app=web")} == {rev3}
    assert sorted(r["revision"] for r in revisions(kubectl).values()) == [1, 2, 3]


def test_statefulset_parallel_creates_all_at_once_ondelete_waits_for_deletes_and_scales_down_from_the_top(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    v1 = client.CoreV1Api(api(cluster, tmp_path))
    rv = v1.list_namespaced_pod("default").metadata.resource_version
    obj = statefulset("db", replicas=3, podManagementPolicy="Parallel", updateStrategy={"type": "OnDelete"})
    kubectl("create", "-f", "-", input=yaml.safe_dump(obj))
    cluster.wait_statefulset("db")
    events = pod_events(v1, rv)
    first_ready = first(events, lambda e: e[3])
    assert sorted(e[1] for e in events[:first_ready] if e[0] == "ADDED") == ["db-0", "db-1", "db-2"]
    proc = kubectl.run("rollout", "status", "statefulset/db", "--timeout=10s", check=False)
    assert proc.returncode != 0
    assert "rollout status is only available for RollingUpdate strategy type" in proc.stderr

    kubectl("set", "env", "statefulset/db", "MODE=new")
    cluster.wait_for(
        lambda: (cluster.get("StatefulSet", "db") or {}).get("status", {}).get("observedGeneration") == 2,
        what="new generation observed",
    )
    st = (cluster.get("StatefulSet", "db") or {})["status"]
    old, new = st["currentRevision"], st["updateRevision"]
    assert old != new
    time.sleep(1.0)  # OnDelete: nothing is replaced by itself
    assert {p["metadata"]["labels"][HASH] for p in pods_json(kubectl, "app=db")} == {old}
    # --wait=false: kubectl's wait lists by name after its GET; kubesim's kubelet ends a pod within
    # milliseconds, so that list can already hold the recreated db-1 and kubectl would wait forever
    kubectl("delete", "pod", "db-1", "--wait=false")
    cluster.wait_for(
        lambda: (
            {p["metadata"]["name"]: p["metadata"]["labels"][HASH] for p in pods_json(kubectl, "app=db")}
            == {"db-0": old, "db-1": new, "db-2": old}
        ),
        what="db-1 recreated at the update revision",
    )
    cluster.wait_statefulset("db")
    st = (cluster.get("StatefulSet", "db") or {})["status"]
    assert (st["updatedReplicas"], st["currentReplicas"], st["currentRevision"]) == (1, 2, old)

    kubectl("scale", "statefulset", "db", "--replicas=1")
    cluster.wait_for(
        lambda: [p["metadata"]["name"] for p in pods_json(kubectl, "app=db")] == ["db-0"],
        what="scale down to db-0",
    )


def test_daemonset_runs_one_pinned_pod_per_node_rolls_within_max_unavailable_restarts_and_follows_new_nodes(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    v1 = client.CoreV1Api(api(cluster, tmp_path))
    kubectl("create", "-f", "-", input=yaml.safe_dump(daemonset("agent")))
    out = kubectl("rollout", "status", "daemonset/agent", "--timeout=60s")
    assert 'daemon set "agent" successfully rolled out' in out
    pods = pods_json(kubectl, "app=agent")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1", "node-2", "node-3"]
    h1 = pods[0]["metadata"]["labels"][HASH]
    for p in pods:
        terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"] == [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [p["spec"]["nodeName"]]}]}
        ]
        assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in p[
            "spec"
        ]["tolerations"]
        assert p["metadata"]["labels"][HASH] == h1
        assert p["metadata"]["labels"]["pod-template-generation"] == "1"
        assert p["metadata"]["name"].startswith("agent-") and p["metadata"]["generateName"] == "agent-"
    assert revisions(kubectl)[f"agent-{h1}"]["metadata"]["labels"][HASH] == h1

    # a template change rolls every node, never more than maxUnavailable (1) down at a time
    listing = v1.list_namespaced_pod("default")
    state = {
        p.metadata.name: (
            p.spec.node_name,
            any(c.type == "Ready" and c.status == "True" for c in p.status.conditions),
        )
        for p in listing.items
    }
    kubectl("set", "env", "daemonset/agent", "MODE=blue")
    out = kubectl("rollout", "status", "daemonset/agent", "--timeout=60s")
    assert 'daemon set "agent" successfully rolled out' in out
    serving = []
    for type_, name, node, ready, stopping, _ in pod_events(v1, listing.metadata.resource_version):
        if type_ == "DELETED" or stopping:
            state.pop(name, None)
        else:
            state[name] = (node, ready)
        serving.append(len({n for n, r in state.values() if r and n}))
    assert min(serving) == 2 and serving[-1] == 3
    pods = pods_json(kubectl, "app=agent")
    h2 = pods[0]["metadata"]["labels"][HASH]
    assert h2 != h1 and {p["metadata"]["labels"][HASH] for p in pods} == {h2}
    assert {p["metadata"]["labels"]["pod-template-generation"] for p in pods} == {"2"}
    assert kubectl("exec", pods[0]["metadata"]["name"], "--", "printenv", "MODE").strip() == "blue"

    out = kubectl("rollout", "restart", "daemonset/agent")
    assert "daemonset.apps/agent restarted" in out
    kubectl("rollout", "status", "daemonset/agent", "--timeout=60s")
    pods = pods_json(kubectl, "app=agent")
    h3 = pods[0]["metadata"]["labels"][HASH]
    assert len(pods) == 3 and h3 not in (h1, h2) and {p["metadata"]["labels"][HASH] for p in pods} == {h3}
    assert all("kubectl.kubernetes.io/restartedAt" in p["metadata"]["annotations"] for p in pods)
    assert sorted(r["revision"] for r in revisions(kubectl).values()) == [1, 2, 3]

    cluster.add_node("node-4")
    cluster.wait_daemonset("agent")
    pods = pods_json(kubectl, "app=agent")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1", "node-2", "node-3", "node-4"]
    ds = json.loads(kubectl("get", "daemonset", "agent", "-o", "json"))
    assert ds["status"]["desiredNumberScheduled"] == ds["status"]["numberAvailable"] == 4


def test_daemonset_surge_starts_each_new_pod_before_removing_the_old_one(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    v1 = client.CoreV1Api(api(cluster, tmp_path))
    surge = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    kubectl("apply", "-f", "-", input=yaml.safe_dump(daemonset("proxy", updateStrategy=surge)))
    cluster.wait_daemonset("proxy")
    listing = v1.list_namespaced_pod("default")
    kubectl("rollout", "restart", "daemonset/proxy")
    kubectl("rollout", "status", "daemonset/proxy", "--timeout=60s")
    events = pod_events(v1, listing.metadata.resource_version)
    # never more than maxSurge (1) nodes with an extra pod
    live = {p.metadata.name: p.spec.node_name for p in listing.items}
    doubled = []
    for type_, name, node, _, stopping, _ in events:
        if type_ == "DELETED" or stopping:
            live.pop(name, None)
        else:
            live[name] = node
        per_node = [n for n in live.values() if n]
        doubled.append(sum(per_node.count(n) > 1 for n in set(per_node)))
    assert max(doubled) == 1
    # per node: the replacement is Ready before the old pod starts terminating
    old = {e[1] for e in events if e[4]}
    assert len(old) == 3
    for name in old:
        node = next(e[2] for e in events if e[1] == name)
        stop = first(events, lambda e, n=name: e[1] == n and e[4])
        assert any(e[2] == node and e[1] not in old and e[3] for e in events[:stop])


def test_daemonset_ignores_cordons_follows_node_labels_and_the_scheduler_honours_matchfields(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("cordon", "node-1")
    kubectl("label", "node", "node-3", "role=edge")
    kubectl("create", "-f", "-", input=yaml.safe_dump(daemonset("all")))
    kubectl("create", "-f", "-", input=yaml.safe_dump(daemonset("edge")))
    cluster.wait_daemonset("all")
    # a cordoned node still runs daemon pods: they tolerate node.kubernetes.io/unschedulable
    assert sorted(p["spec"]["nodeName"] for p in pods_json(kubectl, "app=all")) == [
        "node-1",
        "node-2",
        "node-3",
    ]

    kubectl(
        "patch", "daemonset", "edge", "-p", '{"spec":{"template":{"spec":{"nodeSelector":{"role":"edge"}}}}}'
    )
    cluster.wait_for(
        lambda: [p["spec"].get("nodeName") for p in pods_json(kubectl, "app=edge")] == ["node-3"],
        what="edge pod only on node-3",
    )
    kubectl("label", "node", "node-2", "role=edge")
    kubectl("label", "node", "node-3", "role-")
    cluster.wait_for(
        lambda: [p["spec"].get("nodeName") for p in pods_json(kubectl, "app=edge")] == ["node-2"],
        what="edge pod follows the label to node-2",
    )
    wide = kubectl("get", "daemonset", "edge", "-o", "wide")
    assert "role=edge" in wide.splitlines()[1]

    # the scheduler binds by a matchFields term and keeps plain pods off a cordoned node
    def pinned(name: str, node: str) -> dict[str, Any]:
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
                    }
                },
                "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
            },
        }

    kubectl(
        "create", "-f", "-", input=yaml.safe_dump_all([pinned("to-2", "node-2"), pinned("to-1", "node-1")])
    )
    kubectl("wait", "--for=condition=Ready", "pod/to-2", "--timeout=30s")
    assert kubectl("get", "pod", "to-2", "-o", "jsonpath={.spec.nodeName}") == "node-2"
    cluster.wait_for(
        lambda: (
            "Unschedulable"
            in kubectl(
                "get", "pod", "to-1", "-o", "jsonpath={.status.conditions[?(@.type=='PodScheduled')].reason}"
            )
        ),
        what="pod pinned to a cordoned node stays unschedulable",
    )
    assert kubectl("get", "pod", "to-1", "-o", "jsonpath={.spec.nodeName}") == ""


def test_get_wide_columns_defaults_and_the_python_client_reads_and_watches_revisions(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    apps = client.AppsV1Api(api(cluster, tmp_path))
    apps.create_namespaced_stateful_set("default", statefulset("web", replicas=2))
    bare = daemonset("agent")
    apps.create_namespaced_daemon_set("default", bare)
    cluster.wait_statefulset("web")
    cluster.wait_daemonset("agent")

    lines = [ln for ln in kubectl("get", "sts,ds", "-o", "wide").splitlines() if ln.strip()]
    assert lines[0].split() == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert lines[1].split()[:2] == ["statefulset.apps/web", "2/2"]
    assert lines[1].split()[-2:] == ["app", "busybox:1.36"]
    assert lines[2].split() == [
        "NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE",
        "CONTAINERS", "IMAGES", "SELECTOR",
    ]  # fmt: skip
    row = lines[3].split()
    assert row[:7] == ["daemonset.apps/agent", "3", "3", "3", "3", "3", "<none>"]
    assert row[-3:] == ["app", "busybox:1.36", "app=agent"]
    names = kubectl("get", "all", "-o", "name").split()
    assert "statefulset.apps/web" in names and "daemonset.apps/agent" in names and "pod/web-0" in names
    crs = kubectl("get", "controllerrevisions").splitlines()
    assert crs[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert any(ln.split()[1:3] == ["statefulset.apps/web", "1"] for ln in crs[1:])
    assert any(ln.split()[1:3] == ["daemonset.apps/agent", "1"] for ln in crs[1:])

    # apiserver defaulting, as the typed client reads it back
    sts = apps.read_namespaced_stateful_set("web", "default")
    assert sts.spec.pod_management_policy == "OrderedReady"
    assert (
        sts.spec.update_strategy.type == "RollingUpdate"
        and sts.spec.update_strategy.rolling_update.partition == 0
    )
    assert sts.spec.revision_history_limit == 10
    ds = apps.read_namespaced_daemon_set("agent", "default")
    ru = ds.spec.update_strategy.rolling_update
    assert (ds.spec.update_strategy.type, ru.max_unavailable, ru.max_surge) == ("RollingUpdate", 1, 0)
    assert ds.metadata.annotations["deprecated.daemonset.template.generation"] == "1"
    assert ds.status.desired_number_scheduled == ds.status.number_ready == 3
    bad = daemonset("bad")
    bad["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    proc = kubectl.run("create", "-f", "-", input=yaml.safe_dump(bad), check=False)
    assert proc.returncode != 0
    assert (
        'The DaemonSet "bad" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"bad"}: `selector` does not match template `labels`' in proc.stderr
    )

    kinds = []
    for fn in (apps.list_namespaced_stateful_set, apps.list_namespaced_daemon_set):
        for ev in watch.Watch().stream(fn, "default", timeout_seconds=1):
            kinds.append((ev["type"], type(ev["object"]).__name__, ev["object"].metadata.name))
    assert kinds == [("ADDED", "V1StatefulSet", "web"), ("ADDED", "V1DaemonSet", "agent")]

    listing = apps.list_namespaced_controller_revision("default")
    assert sorted((r.metadata.owner_references[0].kind, r.revision) for r in listing.items) == [
        ("DaemonSet", 1),
        ("StatefulSet", 1),
    ]
    apps.patch_namespaced_stateful_set(
        "web", "default", {"spec": {"template": {"metadata": {"annotations": {"rev": "2"}}}}}
    )
    seen = []
    for ev in watch.Watch().stream(
        apps.list_namespaced_controller_revision,
        "default",
        resource_version=listing.metadata.resource_version,
        timeout_seconds=2,
    ):
        seen.append((ev["type"], ev["object"].revision, ev["object"].metadata.owner_references[0].name))
    assert ("ADDED", 2, "web") in seen
    cluster.wait_statefulset("web")
    assert apps.read_namespaced_stateful_set("web", "default").status.current_revision == next(
        r.metadata.name for r in apps.list_namespaced_controller_revision("default").items if r.revision == 2
    )


def test_deleting_statefulsets_and_daemonsets_removes_their_pods_and_revisions(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    for obj in (statefulset("web", replicas=2), daemonset("agent"), statefulset("keep", replicas=1)):
        kubectl("apply", "-f", "-", input=yaml.safe_dump(obj))
    cluster.wait_statefulset("web")
    cluster.wait_daemonset("agent")
    cluster.wait_statefulset("keep")
    assert len(revisions(kubectl)) == 3

    assert 'statefulset.apps "web" deleted' in kubectl("delete", "statefulset", "web")
    assert 'daemonset.apps "agent" deleted' in kubectl("delete", "daemonset", "agent")
    kubectl("delete", "statefulset", "keep", "--cascade=orphan")
    cluster.wait_for(
        lambda: not kubectl("get", "pods", "-l", "app in (web,agent)", "-o", "name"), what="pods collected"
    )
    left = revisions(kubectl)
    assert [r["metadata"]["labels"]["app"] for r in left.values()] == ["keep"]
    assert not next(iter(left.values()))["metadata"].get("ownerReferences")
    orphan = pods_json(kubectl, "app=keep")
    assert [p["metadata"]["name"] for p in orphan] == ["keep-0"] and not orphan[0]["metadata"].get(
        "ownerReferences"
    )
