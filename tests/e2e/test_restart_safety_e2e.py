"""Production is touched only when it helps: the restart comes from the judgment of every failing
check, once per revision whatever rewrites the template, never in a dry run, never after a signal.
Every run here is the real CLI against kubesim; writes are counted on kubesim."""

from __future__ import annotations

import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.kubesim import Cluster, Fault
from tests.support.helpers import cache_keepers, deployment, restarts_meet_a_late_sync, run_verify, secret
from tests.support.kubectl import Kubectl

MANIFESTS = Path(__file__).parent.parent / "manifests"
CREDENTIAL = "feature-credential-planted-8d2e"
WRITES = ("create", "update", "patch", "delete", "deletecollection")


def patches(cluster: Cluster) -> int:
    return cluster.requests[("patch", "deployments")]


def writes(cluster: Cluster) -> int:
    """Every write request kubesim served (an exec is a GET upgraded to a WebSocket, not a write)."""
    return sum(
        n
        for (verb, resource), n in cluster.requests.counts.items()
        if verb in WRITES and resource != "pods/exec"
    )


def second_seed(cluster: Cluster) -> None:
    """The second seed: the Secret gained FEATURE_CREDENTIAL after the pods started."""
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x"}))
    cluster.apply(deployment("web", replicas=2, env_from=[{"secretRef": {"name": "web-secrets"}}]))
    cluster.wait_rollout("web")
    cluster.apply(secret("web-secrets", {"DB_URL": "postgres://x", "FEATURE_CREDENTIAL": CREDENTIAL}))
    cluster.reset_counts()


def test_a_key_no_source_provides_fails_at_once_without_a_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    second_seed(cluster)
    out = run_verify(
        "--deployment", "web", "--expect-env", "PAYMENT_APIKEY", kubeconfig=kubeconfig, tmp_path=tmp_path
    )
    assert out.code == 1, out.everything
    assert patches(cluster) == 0
    assert (
        "no source in deployment web's template provides PAYMENT_APIKEY: a restart cannot add it"
        in out.stderr
    )
    assert "restarting" not in out.everything
    assert out.report is not None
    check = out.report["workloads"][0]["attempts"][0]["pods"][0]["containers"][0]["checks"][0]
    assert (check["target"], check["restart_can_fix"]) == ("PAYMENT_APIKEY", False)


def test_a_key_the_secret_now_provides_is_restarted_once_and_passes(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    second_seed(cluster)
    out = run_verify("--deployment", "web", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert patches(cluster) == 1
    assert out.report is not None
    first = out.report["workloads"][0]["attempts"][0]
    judged = [c for p in first["pods"] for ct in p["containers"] for c in ct["checks"] if c["status"] != "ok"]
    assert judged and all(c["restart_can_fix"] is True for c in judged)
    assert all("env is read when a container starts" in c["why"] for c in judged)


def recreate_immutable(kubectl: Kubectl, cluster: Cluster) -> None:
    """The first seed: testcm is immutable, deleted and recreated with new content."""
    kubectl("delete", "cm", "testcm")
    kubectl(
        "apply", "-f", "-", input=(MANIFESTS / "cm-test.yaml").read_text().replace("content7", "content8")
    )


def test_a_recreated_immutable_configmap_under_a_rolling_update_is_not_restarted(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    kubectl("create", "-f", str(MANIFESTS / "cm-test.yaml"))
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    cache_keepers(cluster, "testcm", ["node-1", "node-2", "node-3"])
    recreate_immutable(kubectl, cluster)
    kubectl("rollout", "restart", "deployment", "cm-test")
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    cluster.reset_counts()

    out = run_verify("--deployment", "cm-test", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert patches(cluster) == 0
    assert out.report is not None and out.report["message"].startswith("a restart cannot fix this: ")
    diagnosis = [line for line in out.stderr.splitlines() if line.startswith("rollout-verify: diagnosis:")]
    assert len(diagnosis) == 1
    assert "configmap testcm is immutable and was recreated" in diagnosis[0]
    assert "a restart will not help; publish new content under a new name" in diagnosis[0]


def test_a_recreated_immutable_configmap_under_recreate_is_restarted_and_the_kubelet_serves_it(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, kubectl: Kubectl
) -> None:
    manifest = (MANIFESTS / "cm-test.yaml").read_text().replace("replicas: 7", "replicas: 3")
    manifest = manifest.replace(
        "spec:\n  replicas: 3\n", "spec:\n  replicas: 3\n  strategy: {type: Recreate}\n", 1
    )
    kubectl("create", "-f", "-", input=manifest)
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    kubectl("delete", "cm", "testcm")
    kubectl("apply", "-f", "-", input=manifest.replace("content7", "content8"))
    # more pods of the same revision: they join nodes whose kubelet still holds the old copy
    kubectl("scale", "deployment/cm-test", "--replicas=6")
    kubectl("rollout", "status", "deployment/cm-test", "--timeout=60s")
    cluster.reset_counts()

    out = run_verify("--deployment", "cm-test", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 0, out.everything
    assert patches(cluster) == 1
    assert out.report is not None
    first = out.report["workloads"][0]["attempts"][0]
    stale = [c for p in first["pods"] for ct in p["containers"] for c in ct["checks"] if c["status"] != "ok"]
    assert stale and all(c["restart_can_fix"] for c in stale)
    assert "strategy Recreate stops every old pod before new ones start" in out.stderr
    # what the kubelet now serves in the restarted pods is the new content
    pods = kubectl("get", "pods", "-l", "app=cm-test", "-o", "jsonpath={.items[*].metadata.name}").split()
    assert len(pods) == 6
    assert {kubectl("exec", p, "--", "cat", "/cm/script.py") for p in pods} == {"content8"}


@pytest.mark.parametrize("status", [400, 401, 405, 414, 431])
def test_an_exec_refused_for_the_request_itself_never_restarts(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, status: int
) -> None:
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    cluster.inject(Fault("status", status=status, match="^create pods/exec$", times=1000))
    cluster.reset_counts()
    out = run_verify("--deployment", "web", "--expect-env", "A", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert patches(cluster) == 0
    assert f"exec refused by the API server (HTTP {status})" in out.stderr
    assert out.report is not None and out.report["message"].startswith("a restart cannot fix this: ")


def stamped_and_unhealed(cluster: Cluster) -> tuple[tuple[str, ...], Callable[[], None]]:
    """Deployment web under a mutating webhook that stamps every write, its pods started before
    Secret web-secrets had FEATURE_CREDENTIAL, and its restart met by a sync that takes the key away
    again: a run judges a restart worth one, sends it, and still fails after it. Returns the run's
    arguments and `put_back()`, which restores the Secret's content as the restart found it."""
    cluster.knobs.mutating_webhook = True
    second_seed(cluster)
    put_back = restarts_meet_a_late_sync(cluster, secret_name="web-secrets", key="FEATURE_CREDENTIAL")
    return ("--deployment", "web", "--expect-env", "FEATURE_CREDENTIAL", "--timeout", "90s"), put_back


def test_under_a_mutating_webhook_three_runs_on_one_revision_restart_once(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    args, put_back = stamped_and_unhealed(cluster)
    outs = []
    for i in range(3):
        outs.append(run_verify(*args, kubeconfig=kubeconfig, tmp_path=tmp_path / str(i)))
        put_back()
    assert [o.code for o in outs] == [1, 1, 1], [o.everything for o in outs]
    assert patches(cluster) == 1
    assert [bool(o.report and o.report["restarted"]) for o in outs] == [True, False, False]
    assert all("this revision is an earlier run's restart (" in o.stderr for o in outs[1:])


def test_under_a_mutating_webhook_two_concurrent_runs_restart_once(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    args, _ = stamped_and_unhealed(cluster)
    cluster.knobs.exec_latency = 3.0  # both runs are inspecting before either restarts
    with ThreadPoolExecutor(2) as pool:
        runs = [
            pool.submit(run_verify, *args, kubeconfig=kubeconfig, tmp_path=tmp_path / str(i))
            for i in range(2)
        ]
        outs = [r.result() for r in runs]
    assert [o.code for o in outs] == [1, 1], [o.everything for o in outs]
    assert patches(cluster) <= 2  # the loser's patch meets the winner's with a 409 and is not sent again
    revision = (cluster.get("Deployment", "web") or {})["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"
    ]
    assert revision == "2"
    assert sum(bool(o.report and o.report["restarted"]) for o in outs) == 1


def test_dry_run_says_what_it_would_restart_and_writes_nothing(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    second_seed(cluster)
    out = run_verify("--deployment", "web", "--dry-run", kubeconfig=kubeconfig, tmp_path=tmp_path)
    assert out.code == 1, out.everything
    assert writes(cluster) == 0
    assert "would restart deployment web once (--dry-run: nothing was sent)" in out.stderr
    assert "(would restart once; --dry-run sent nothing)" in out.stdout
    assert out.report is not None and out.report["restarted"] is False
    assert out.report["workloads"][0]["would_restart"] is True
    # each problem, and the diagnosis, said once (with the run's end: the dry run's verdict)
    problems = [line for line in out.stderr.splitlines() if "lacks env FEATURE_CREDENTIAL" in line]
    assert problems and len(problems) == len(set(problems)), out.stderr
    diagnosis = [line for line in out.stderr.splitlines() if line.startswith("rollout-verify: diagnosis: ")]
    assert len(diagnosis) == 1 and out.stderr.splitlines()[-1] == diagnosis[0], out.stderr


def held_rollout(cluster: Cluster, name: str = "web") -> None:
    """A rollout that cannot finish: its new pods fit no node."""
    cluster.apply(deployment(name, replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout(name)
    held = deployment(name, replicas=1, env=[{"name": "A", "value": "2"}])
    held["spec"]["template"]["spec"]["nodeSelector"] = {"rollout-verify.test/hold": "true"}
    cluster.apply(held)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_while_waiting_ends_the_run_with_every_output_written(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, signum: int, code: int
) -> None:
    held_rollout(cluster)
    cluster.reset_counts()
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", kubeconfig=kubeconfig, tmp_path=tmp_path,
        signal_when=lambda: cluster.requests[("watch", "deployments")] >= 1, signum=signum,
    )  # fmt: skip
    assert out.code == code, out.everything
    assert out.after_signal is not None and out.after_signal < 2
    assert out.files["result"] == "error" and out.files["exit-code"] == str(code)
    assert out.report is not None and out.report["result"] == "error" and out.report["exit_code"] == code
    assert "no restart was sent" in out.stderr
    assert patches(cluster) == 0
    assert "Traceback" not in out.everything and "internal error" not in out.everything


@pytest.mark.parametrize("workloads", [1, 3])
def test_a_signal_during_inspection_stops_every_workload_before_any_restart(
    cluster: Cluster, kubeconfig: str, tmp_path: Path, workloads: int
) -> None:
    names = [f"web{i}" for i in range(workloads)]
    for name in names:
        cluster.apply(deployment(name, replicas=2, env=[{"name": "A", "value": "1"}]))
    for name in names:
        cluster.wait_rollout(name)
    cluster.knobs.exec_latency = 5.0  # every exec is still running when the signal comes
    cluster.reset_counts()
    targets = ",".join(f"deployment/{n}" for n in names)
    out = run_verify(
        "--target", targets, "--expect-env", "NOT_SET_ANYWHERE", kubeconfig=kubeconfig, tmp_path=tmp_path,
        signal_when=lambda: cluster.requests[("create", "pods/exec")] >= workloads,
    )  # fmt: skip
    assert out.code == 143, out.everything
    assert out.after_signal is not None and out.after_signal < 2
    assert out.files["result"] == "error" and out.files["exit-code"] == "143"
    cancelled = [line for line in out.stderr.splitlines() if "cancelled by SIGTERM" in line]
    assert cancelled == [
        "rollout-verify: cancelled by SIGTERM: "
        + "; ".join(f"deployment {n} was inspecting its pods" for n in names)
        + "; no restart was sent"
    ]
    assert out.report is not None
    assert [(w["name"], w["result"], w["error"]) for w in out.report["workloads"]] == [
        (n, "error", "cancelled while inspecting its pods") for n in names
    ]
    assert "restarting" not in out.stderr
    assert patches(cluster) == 0
    assert "Traceback" not in out.everything and "internal error" not in out.everything


def test_when_no_exec_finishes_in_time_the_workload_is_not_restarted(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    """An --exec-timeout too short for the cluster (or a slow API server) times out every exec:
    that says nothing of the pods, so nothing is restarted and the timeout is named."""
    cluster.apply(deployment("web", replicas=2, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    cluster.knobs.exec_hang.update(p["metadata"]["name"] for p in cluster.list("Pod"))
    cluster.reset_counts()
    out = run_verify(
        "--deployment", "web", "--expect-env", "A", "--exec-timeout", "2s",
        kubeconfig=kubeconfig, tmp_path=tmp_path,
    )  # fmt: skip
    assert out.code == 1, out.everything
    assert patches(cluster) == 0
    assert "restarting once" not in out.everything
    assert "no exec finished within --exec-timeout (VERIFY_EXEC_TIMEOUT); raise it" in out.stderr
    assert out.report is not None
    assert out.report["message"].startswith("a restart cannot fix this: no exec finished within --exec-timeout")
