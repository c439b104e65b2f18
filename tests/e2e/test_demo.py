"""`make demo` is the README's first command: it must run and end as the README and the docs'
getting-started page say, in a stranger's words: a pass after one restart, then a failure a
restart cannot help, each with its lines."""

from __future__ import annotations

import subprocess
import sys

from tests.support.demo import KEPT, SHOP_CONFIG, WEB_CONFIG
from tests.support.helpers import REPO


def test_demo_shows_a_pass_after_one_restart_and_a_failure_no_restart_can_help() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.demo"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text  # both stories ended as told
    story1, _, story2 = text.partition("== Story 2: ")
    assert story2, text

    # 1. a Secret that arrives after the pods start: Helm's order, the pods wait for their class
    assert "ContainerCreating" in story1
    assert (
        'MountVolume.SetUp failed for volume "secrets-store-inline" : rpc error: code = Unknown desc = '
        "failed to get secretproviderclass default/web-kv" in story1
    )
    assert "secretproviderclass.secrets-store.csi.x-k8s.io/web-kv" in story1
    assert "secretproviderclasspodstatus.secrets-store.csi.x-k8s.io/web-" in story1
    assert story1.count(": missing") == 1 and story1.count(": present") == 1  # the hand-written check
    assert 'deployment "web" successfully rolled out' in story1  # the real kubectl said so first
    assert story1.count("GET /health -> ok") == 3
    assert "http 8080/config answered HTTP 503, expected 200" in story1
    assert "lacks env FEATURE_CREDENTIAL" in story1
    assert "mounted SecretProviderClass web-kv before it listed FEATURE_CREDENTIAL" in story1
    assert "Helm applies Deployments before custom kinds" in story1
    recap1 = story1.split("== What to read in that output", 1)[1]
    assert "restarting once" in recap1 and "diagnosis:" in recap1
    assert "PASSED deployment web: 2 pods verified after 1 restart; daemonset agent: 2 pods verified" in recap1
    assert "Story 1 ends: exit code 0; restarts sent by rollout-verify: 1" in story1

    # 2. an immutable ConfigMap deleted and created again: every pod still reads the old price
    assert 'deployment "shop" successfully rolled out' in story2
    reads = [line.split(": ", 1)[1] for line in story2.splitlines() if line.startswith("  pod/shop-")]
    assert reads == ["coffee=3.00", "coffee=3.00"], story2
    recap2 = story2.split("== What to read in that output", 1)[1]
    assert "differs from configmap shop-prices/prices.conf" in recap2
    assert "configmap shop-prices is immutable and was recreated" in recap2
    assert "a restart will not help; publish new content under a new name" in recap2
    assert "FAILED deployment shop: 2 of 2 pods failed: container app file /etc/shop/prices.conf" in recap2
    assert "Story 2 ends: exit code 1; restarts sent by rollout-verify: 0" in story2
    assert "restarting once" not in story2

    # the configs it printed are kept for the reader
    assert (KEPT / "verify.yaml").read_text() == WEB_CONFIG and WEB_CONFIG in story1
    assert (KEPT / "shop.yaml").read_text() == SHOP_CONFIG and SHOP_CONFIG in story2
    assert f"The configs are kept in {KEPT}" in text

    assert "seed" not in text.lower()  # the reader's words, not ours
    assert "demo-only-value" not in text
    assert "\x1b" not in text  # captured, not a terminal: no colour from the demo or rollout-verify
    # the ends the README and the getting-started page show
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "first story ends with `PASSED deployment web: 2 pods verified after 1 restart`" in readme
    assert "its second with `FAILED deployment shop` and no restart" in readme
    page = (REPO / "docs" / "getting-started.md").read_text()
    ends = page.split("It ends with:\n\n```\n")[1:]
    assert len(ends) == 2, "one end per story"
    for end in ends:
        for line in end.split("```", 1)[0].strip().splitlines():
            assert line in text, line
