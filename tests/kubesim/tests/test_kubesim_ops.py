"""Everyday operations against kubesim, judged by the real kubectl: `rollout undo` (the old
revision's ReplicaSet reused and renumbered), `port-forward`, `attach`, and namespaces as the
apiserver's strategy creates them."""

from __future__ import annotations

import json
from typing import Any

from tests.kubesim import Cluster
from tests.support.kubectl import Kubectl

REV = "deployment.kubernetes.io/revision"


def _replicasets(kubectl: Kubectl) -> dict[str, dict[str, Any]]:
    items = json.loads(kubectl("get", "rs", "-l", "app=web", "-o", "json"))["items"]
    return {rs["metadata"]["name"]: rs for rs in items}


def _revisions(kubectl: Kubectl) -> dict[str, str]:
    return {n: rs["metadata"]["annotations"].get(REV, "") for n, rs in _replicasets(kubectl).items()}


def _history(kubectl: Kubectl) -> list[str]:
    lines = kubectl("rollout", "history", "deploy/web").splitlines()
    return [line.split()[0] for line in lines[2:] if line.strip()]


def _rolled_out(kubectl: Kubectl) -> None:
    out = kubectl("rollout", "status", "deploy/web", "--timeout=60s")
    assert 'deployment "web" successfully rolled out' in out


def test_rollout_undo_reuses_the_old_replicaset_and_renumbers_its_revision(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    kubectl("create", "deployment", "web", "--image=busybox", "--replicas=2", "--", "sleep", "3600")
    _rolled_out(kubectl)
    (first,) = _revisions(kubectl)
    kubectl("set", "image", "deploy/web", "busybox=busybox:1.36")
    _rolled_out(kubectl)
    second = next(n for n in _revisions(kubectl) if n != first)
    assert _revisions(kubectl) == {first: "1", second: "2"}
    assert _history(kubectl) == ["1", "2"]

    assert "deployment.apps/web rolled back" in kubectl("rollout", "undo", "deploy/web")
    # the controller adopts revision 1's ReplicaSet as the new one: revision 3, no third ReplicaSet
    cluster.wait_for(lambda: _revisions(kubectl) == {first: "3", second: "2"}, what="renumbered")
    _rolled_out(kubectl)
    rss = _replicasets(kubectl)
    assert set(rss) == {first, second}
    assert rss[first]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert rss[first]["spec"]["replicas"] == 2 and rss[second]["spec"]["replicas"] == 0
    deploy = json.loads(kubectl("get", "deploy/web", "-o", "json"))
    assert deploy["metadata"]["annotations"][REV] == "3"
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"
    assert _history(kubectl) == ["2", "3"]
    shown = kubectl("rollout", "history", "deploy/web", "--revision=3")
    assert "with revision #3" in shown and "Image:\tbusybox\n" in shown
    assert f"pod-template-hash={first.removeprefix('web-')}" in shown

    # --to-revision: back to the second template, whose ReplicaSet becomes revision 4
    kubectl("rollout", "undo", "deploy/web", "--to-revision=2")
    cluster.wait_for(lambda: _revisions(kubectl) == {first: "3", second: "4"}, what="renumbered again")
    _rolled_out(kubectl)
    rss = _replicasets(kubectl)
    assert rss[second]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "2"
    assert rss[second]["spec"]["replicas"] == 2 and rss[first]["spec"]["replicas"] == 0
    assert _history(kubectl) == ["3", "4"]
    # kubectl refuses a revision that no longer exists, as on a real cluster
    gone = kubectl.run("rollout", "undo", "deploy/web", "--to-revision=1", check=False)
    assert gone.returncode == 1 and "unable to find specified revision 1 in history" in gone.stderr
