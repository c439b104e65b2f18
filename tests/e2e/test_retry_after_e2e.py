"""An API server answering 429 with `Retry-After: 0` is asked again at most about once per
minimum pause (retry.MIN_PAUSE), and the run still ends at its --timeout."""

from __future__ import annotations

from pathlib import Path

from tests.kubesim import Cluster, Fault
from tests.support.helpers import deployment, run_verify, since_first_request
from verify.kube.retry import MIN_PAUSE


def test_retry_after_zero_is_asked_again_at_most_once_per_minimum_pause_within_the_timeout(
    cluster: Cluster, kubeconfig: str, tmp_path: Path
) -> None:
    cluster.apply(deployment("web", replicas=1, env=[{"name": "A", "value": "1"}]))
    cluster.wait_rollout("web")
    cluster.reset_counts()
    cluster.inject(Fault("status", status=429, retry_after=0, match="deployments", times=10**6))
    cluster.mark()
    out = run_verify("--deployment", "web", "--timeout", "3s", kubeconfig=kubeconfig, tmp_path=tmp_path)
    elapsed = since_first_request(cluster)
    asked = sum(n for (_verb, resource), n in cluster.requests.counts.items() if resource == "deployments")
    assert out.code != 0, out.everything
    assert "Traceback" not in out.stderr
    # 3 s of waits of at least MIN_PAUSE: about 30 requests (the issue saw 833 in 6 s)
    assert 3 <= asked <= 3 / MIN_PAUSE + 2, asked
    # timed from the first request (the interpreter's start, which a loaded machine stretches to
    # seconds, is not the run's budget): the 3 s, then only the last pause, the reports and the exit
    assert elapsed < 3 + 3, elapsed
