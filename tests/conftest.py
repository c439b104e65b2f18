"""Fixtures: a kubesim cluster per test, and the real kubectl pointed at it."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kubesim import Cluster, Knobs
from tests.support import helpers
from tests.support.kubectl import KUBECTL, Kubectl


def _cluster_secrets(cluster: Cluster) -> set[str]:
    """Every Secret value kubesim holds now, every bearer token it accepts or issued."""
    found = set(cluster.call(lambda: list(cluster.auth.tokens)))
    if cluster.auth.entra is not None:  # every access token its Entra ID issued, accepted or not
        found |= set(cluster.call(lambda: list(cluster.auth.entra.issued) if cluster.auth.entra else []))
    for obj in cluster.list("Secret", None):
        for v in (obj.get("data") or {}).values():
            with contextlib.suppress(ValueError):
                found.add(base64.b64decode(v).decode("utf-8", "replace"))
    return {v for v in found if len(v) >= helpers.MIN_PLANTED}


@pytest.fixture(autouse=True)
def _nothing_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    """The whole suite's guard: no planted secret value or token, and no traceback, in any output
    of rollout-verify (stdout, stderr, JSON, JUnit, summary, --output-dir files). `::add-mask::`
    lines are exempt: masking a token means naming it to the runner."""
    start = len(helpers.OUTPUTS)
    cluster = request.getfixturevalue("cluster") if "cluster" in request.fixturenames else None
    yield
    outputs = helpers.OUTPUTS[start:]
    del helpers.OUTPUTS[start:]
    if not outputs:
        return
    secrets = set(helpers.PLANTED)
    if cluster is not None:
        secrets |= _cluster_secrets(cluster)
    problems = [p for text in outputs for p in helpers.leaks(text, secrets)]
    if problems:
        pytest.fail("; ".join(sorted(set(problems))))


@pytest.fixture
def knobs() -> Knobs:
    return Knobs(sync_period=1.0)


@pytest.fixture
def cluster(knobs: Knobs, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(nodes=3, knobs=knobs, root=str(tmp_path / "kubesim")).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def kubeconfig(cluster: Cluster, tmp_path: Path) -> str:
    return cluster.write_kubeconfig(tmp_path / "admin.kubeconfig")


@pytest.fixture
def kubectl(kubeconfig: str, tmp_path: Path) -> Kubectl:
    if not Path(KUBECTL).exists():
        pytest.fail("the real kubectl is required at /usr/bin/kubectl")
    (tmp_path / "kubectl-home").mkdir()
    return Kubectl(kubeconfig, tmp_path / "kubectl-home")
