"""Watches and lists as a real API server serves them, judged by the real kubectl and the official
Python client over HTTPS: the watch cache's window (410 Expired with the apiserver's text, no replay
of older history), etcd compaction of exact reads and continue tokens, `limit`/`continue`
pagination with `remainingItemCount`, `resourceVersionMatch`, and bookmarks once a minute."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl

CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a "
    "new list without the continue parameter, or use the continue token in this response to retrieve "
    "the remainder of the results. Continuing with the provided token results in an inconsistent list "
    "- objects that were created, modified, or deleted between the time the first chunk was returned "
    "and now may show up in the list."
)


def core(cluster: Cluster, tmp_path: Path) -> client.CoreV1Api:
    path = cluster.write_kubeconfig(tmp_path / "kc-client")
    return client.CoreV1Api(config.new_client_from_config(config_file=path))


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}]},
    }


def status_of(err: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(err.body)
    return body


def test_a_watch_from_before_the_window_is_410_and_never_replays_a_deleted_pod(
    cluster: Cluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    cluster.knobs.watch_cache_size = 3
    cluster.knobs.watch_cache_fresh = 0.0
    v1 = core(cluster, tmp_path)
    v1.create_namespaced_pod("default", pod("gone"))
    old = v1.list_namespaced_pod("default").metadata.resource_version
    v1.delete_namespaced_pod("gone", "default", grace_period_seconds=0)
    cluster.wait_for(lambda: cluster.get("Pod", "gone") is None, what="pod gone deleted")
    for i in range(4):
        v1.create_namespaced_pod("default", pod(f"p{i}"))

    # the real kubectl (1.32 has no `get --resource-version`; --raw sends exactly the watch)
    out = kubectl("get", "--raw", f"/api/v1/namespaces/default/pods?watch=true&resourceVersion={old}")
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert [e["type"] for e in events] == ["ERROR"], out  # no replay: no DELETED gone, no ADDED p0
    status = events[0]["object"]
    assert (status["kind"], status["status"], status["code"], status["reason"]) == (
        "Status",
        "Failure",
        410,
        "Expired",
    )
    shown = re.fullmatch(rf"too old resource version: {old} \((\d+)\)", status["message"])
    assert shown and int(shown.group(1)) > int(old), status["message"]

    # the official client's watch raises it
    with pytest.raises(ApiException) as err:
        for _ in watch.Watch().stream(
            v1.list_namespaced_pod, "default", resource_version=old, timeout_seconds=5
        ):
            pass
    assert err.value.status == 410
    assert str(err.value.reason).startswith(f"Expired: too old resource version: {old} (")


def test_the_window_is_the_last_events_of_the_resource_and_its_edge_is_exact(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.knobs.watch_cache_size = 3
    cluster.knobs.watch_cache_fresh = 0.0
    v1 = core(cluster, tmp_path)
    rvs = [
        v1.create_namespaced_config_map("default", configmap(f"c{i}")).metadata.resource_version
        for i in range(6)
    ]
    floor = int(rvs[3]) - 1  # the window holds c3, c4, c5: oldest servable - 1, as watch_cache_history.go
    seen = [
        (e["type"], e["object"].metadata.name)
        for e in watch.Watch().stream(
            v1.list_namespaced_config_map, "default", resource_version=str(floor), timeout_seconds=1
        )
    ]
    assert seen == [("ADDED", "c3"), ("ADDED", "c4"), ("ADDED", "c5")]
    with pytest.raises(ApiException) as err:
        for _ in watch.Watch().stream(
            v1.list_namespaced_config_map, "default", resource_version=str(floor - 1), timeout_seconds=1
        ):
            pass
    assert err.value.status == 410
    assert err.value.reason == f"Expired: too old resource version: {floor - 1} ({floor})"
    # each resource type has its own window: the configmaps moved none of pods'
    pods = list(
        watch.Watch().stream(
            v1.list_namespaced_pod, "default", resource_version=str(floor - 1), timeout_seconds=1
        )
    )
    assert pods == []


def test_kubectl_chunk_size_lists_every_pod_across_pages(cluster: Cluster, kubectl: Kubectl) -> None:
    names = [f"web-{i}" for i in range(5)]
    for n in names:
        cluster.apply(pod(n))
    before = cluster.requests[("list", "pods")]
    out = kubectl("get", "pods", "--chunk-size=1", "-o", "name")
    assert out.split() == [f"pod/{n}" for n in names]
    assert cluster.requests[("list", "pods")] - before == 5  # one page per pod, the last without continue
    before = cluster.requests[("list", "pods")]
    table = kubectl("get", "pods", "--chunk-size=2", "--no-headers")
    assert [line.split()[0] for line in table.splitlines()] == names
    assert cluster.requests[("list", "pods")] - before == 3


def test_the_official_client_pages_with_limit_and_continue_and_an_expired_token_is_410(
    cluster: Cluster, tmp_path: Path
) -> None:
    names = [f"web-{i}" for i in range(4)]
    for n in names:
        cluster.apply(pod(n))
    v1 = core(cluster, tmp_path)
    first = v1.list_namespaced_pod("default", limit=1)
    assert [p.metadata.name for p in first.items] == ["web-0"]
    assert first.metadata._continue and first.metadata.remaining_item_count == 3
    got, token, rvs = ["web-0"], first.metadata._continue, {first.metadata.resource_version}
    while token:
        page = v1.list_namespaced_pod("default", limit=1, _continue=token)
        got += [p.metadata.name for p in page.items]
        rvs.add(page.metadata.resource_version)
        token = page.metadata._continue
    assert got == names
    assert len(rvs) == 1  # every page is the same snapshot

    # a selector narrows the pages; remainingItemCount is then not given (etcd3/store.go)
    narrowed = v1.list_namespaced_pod("default", limit=1, field_selector="metadata.name!=web-0")
    assert [p.metadata.name for p in narrowed.items] == [
        "web-1"
    ] and narrowed.metadata.remaining_item_count is None

    # the snapshot holds while etcd keeps its revision: a pod created meanwhile is not in it
    first = v1.list_namespaced_pod("default", limit=2)
    cluster.apply(pod("web-9"))
    rest = v1.list_namespaced_pod("default", limit=10, _continue=first.metadata._continue)
    assert [p.metadata.name for p in rest.items] == ["web-2", "web-3"]

    # etcd compacts the token's revision: 410 with the apiserver's text and a token to go on with
    first = v1.list_namespaced_pod("default", limit=2)
    cluster.knobs.etcd_compaction_interval = 0.0
    cluster.apply(configmap("a-write-after-the-first-page"))
    with pytest.raises(ApiException) as err:
        v1.list_namespaced_pod("default", limit=2, _continue=first.metadata._continue)
    assert err.value.status == 410
    status = status_of(err.value)
    assert (status["reason"], status["message"]) == ("Expired", CONTINUE_TOO_OLD)
    inconsistent = v1.list_namespaced_pod("default", limit=10, _continue=status["metadata"]["continue"])
    assert [p.metadata.name for p in inconsistent.items] == ["web-2", "web-3", "web-9"]


def test_resource_version_match_exact_and_not_older_than(cluster: Cluster, tmp_path: Path) -> None:
    v1 = core(cluster, tmp_path)
    v1.create_namespaced_config_map("default", configmap("kept"))
    v1.create_namespaced_config_map("default", configmap("deleted-later"))
    at = v1.list_namespaced_config_map("default").metadata.resource_version
    v1.delete_namespaced_config_map("deleted-later", "default")

    def names(rv: str, match: str, **kw: Any) -> list[str]:
        listing = v1.list_namespaced_config_map(
            "default", resource_version=rv, resource_version_match=match, **kw
        )
        return [c.metadata.name for c in listing.items]

    # Exact reads the past (etcd still holds it), NotOlderThan the present (beside the
    # namespace's kube-root-ca.crt, as in every cluster)
    assert names(at, "Exact") == ["deleted-later", "kept", "kube-root-ca.crt"]
    assert (
        v1.list_namespaced_config_map(
            "default", resource_version=at, resource_version_match="Exact"
        ).metadata.resource_version
        == at
    )
    assert names(at, "NotOlderThan") == ["kept", "kube-root-ca.crt"]
    # legacy: limit with a resourceVersion and no match is an exact read too
    legacy = v1.list_namespaced_config_map("default", resource_version=at, limit=5)
    assert [c.metadata.name for c in legacy.items] == ["deleted-later", "kept", "kube-root-ca.crt"]

    cluster.knobs.etcd_compaction_interval = 0.0
    v1.create_namespaced_config_map("default", configmap("after"))
    with pytest.raises(ApiException) as err:
        names(at, "Exact")
    assert err.value.status == 410
    assert status_of(err.value)["message"] == "The resourceVersion for the provided list is too old."
    assert names(at, "NotOlderThan") == ["after", "kept", "kube-root-ca.crt"]  # never too old: served from the present

    with pytest.raises(ApiException) as err:
        v1.list_namespaced_config_map("default", resource_version_match="NotOlderThan")
    assert err.value.status == 422
    assert status_of(err.value)["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided"
    )
    with pytest.raises(ApiException) as err:
        names("0", "Exact")
    assert status_of(err.value)["message"].endswith(
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
    )

    future = str(int(at) + 10_000)
    t0 = time.monotonic()
    with pytest.raises(ApiException) as err:
        names(future, "NotOlderThan")
    assert time.monotonic() - t0 >= 2.9  # the cacher's 3 s blockTimeout
    assert err.value.status == 504
    status = status_of(err.value)
    assert status["reason"] == "Timeout" and status["details"]["retryAfterSeconds"] == 1
    assert status["message"].startswith(f"Timeout: Too large resource version: {future}, current: ")


def test_bookmarks_come_once_a_minute_and_just_before_the_watch_times_out(
    cluster: Cluster, tmp_path: Path
) -> None:
    v1 = core(cluster, tmp_path)
    rv = v1.list_namespaced_config_map("default").metadata.resource_version
    t0 = time.monotonic()
    kinds = [
        (e["type"], time.monotonic() - t0)
        for e in watch.Watch().stream(
            v1.list_namespaced_config_map,
            "default",
            resource_version=rv,
            allow_watch_bookmarks=True,
            timeout_seconds=3,
        )
    ]
    # one BOOKMARK, 2 s before the 3 s timeout (cache_watcher.go), none at a 1 s heartbeat
    assert [k for k, _ in kinds] == ["BOOKMARK"], kinds
    assert 0.9 <= kinds[0][1] < 2.5, kinds
