"""`make demo` is the README's first command: it must run and end as the README and the docs'
getting-started page say."""

from __future__ import annotations

import subprocess
import sys

from tests.support.helpers import REPO


def test_demo_reproduces_the_seed_with_the_csi_stack_restarts_once_and_passes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.demo"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    # Helm's order: the pods wait for their SecretProviderClass with the driver's message
    assert "ContainerCreating" in text
    assert (
        'MountVolume.SetUp failed for volume "secrets-store-inline" : rpc error: code = Unknown desc = '
        "failed to get secretproviderclass default/web-kv" in text
    )
    assert "secretproviderclass.secrets-store.csi.x-k8s.io/web-kv" in text
    assert "secretproviderclasspodstatus.secrets-store.csi.x-k8s.io/web-" in text
    assert text.count(": missing") == 1 and text.count(": present") == 1  # the seed's own loop
    assert "http 8080/config answered HTTP 503, expected 200" in text
    assert "lacks env FEATURE_CREDENTIAL" in text
    assert "mounted SecretProviderClass web-kv before it listed FEATURE_CREDENTIAL" in text
    assert "Helm applies Deployments before custom kinds" in text
    assert "PASSED deployment web: 2 pods verified after 1 restart; daemonset agent: 2 pods verified" in text
    assert "restarts issued by rollout-verify: 1" in text
    assert 'deployment "web" successfully rolled out' in text  # the real kubectl said so first
    assert text.count("GET /health -> ok") == 3
    assert "demo-only-value" not in text
    assert "\x1b" not in text  # captured, not a terminal: no colour from the demo or rollout-verify
    # the end the README and the getting-started page show
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "ends with `PASSED deployment web: 2 pods verified after 1 restart` and exit code 0" in readme
    page = (REPO / "docs" / "getting-started.md").read_text()
    for line in page.split("It ends with:\n\n```\n", 1)[1].split("```", 1)[0].strip().splitlines():
        assert line in text, line
