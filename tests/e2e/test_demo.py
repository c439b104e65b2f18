"""`make demo` is the README's first command: it must run and end as documented."""

from __future__ import annotations

import subprocess
import sys

from tests.support.helpers import REPO


def test_demo_finds_the_stale_pod_restarts_once_and_passes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.demo"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    assert "http 8080/config answered HTTP 503, expected 200" in text
    assert "lacks env FEATURE_CREDENTIAL" in text
    assert "PASSED deployment web: 2 pods verified after 1 restart; daemonset agent: 2 pods verified" in text
    assert "restarts issued by rollout-verify: 1" in text
    assert 'deployment "web" successfully rolled out' in text  # the real kubectl said so first
    assert text.count("GET /health -> ok") == 3
    assert "demo-only-value" not in text
    assert "\x1b" not in text  # captured, not a terminal: no colour from the demo or rollout-verify
