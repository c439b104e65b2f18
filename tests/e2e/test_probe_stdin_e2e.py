"""The probe's expectations travel on the exec's stdin: the exec request line is the same length
for 1 expected key or 500, and every check is still right."""

from __future__ import annotations

from pathlib import Path

from tests.kubesim import Cluster
from tests.support.helpers import deployment, run_verify


def _checks(out_report: dict) -> list[dict]:
    pods = out_report["workloads"][0]["attempts"][-1]["pods"]
    return [c for p in pods for container in p["containers"] for c in container["checks"]]


def test_one_key_and_500_keys_send_the_same_exec_request_line_and_check_every_key(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("one", replicas=1, env=[{"name": "K_0", "value": "v0"}]))
    cluster.apply(
        deployment("many", replicas=1, env=[{"name": f"K_{i}", "value": f"v{i}"} for i in range(500)])
    )
    cluster.wait_rollout("one")
    cluster.wait_rollout("many")
    lengths: dict[str, list[int]] = {}
    for name in ("one", "many"):
        before = len(cluster.exec_request_lines)
        out = run_verify(
            "--deployment", name, "--from-spec", "--expect-env", "ABSENT_KEY", "--restart", "never",
            kubeconfig=kubeconfig, tmp_path=tmp_path,
        )  # fmt: skip
        assert out.code == 1 and out.report is not None, out.everything
        lengths[name] = cluster.exec_request_lines[before:]
        checks = _checks(out.report)
        keys = 1 if name == "one" else 500
        # every spec key present with its value, and the one absent key found absent
        assert sum(c["status"] == "ok" for c in checks if c["type"] == "env") == keys, checks[:3]
        failed = [c["target"] for c in checks if c["status"] != "ok"]
        assert failed == ["ABSENT_KEY"], failed
        assert f"deployment {name}: pod" in out.stderr and "lacks env ABSENT_KEY" in out.stderr
    assert lengths["one"] and lengths["many"]
    assert max(lengths["many"]) - min(lengths["one"]) <= 8, lengths  # only the names differ
    assert max(lengths["one"]) < 6 * 1024, lengths  # the script itself (URL-encoded), below 8 KiB proxy limits
