"""The benchmark runs end to end at a tiny size (its numbers are only meaningful from `make bench`)."""

from __future__ import annotations

import re

import pytest

from bench.run import main


def test_bench_smoke_run_prints_every_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--pods", "5", "--rss-pods", "0", "--detect-runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "(5 present)" in out and "(exit 0)" in out
    assert re.search(r"ratio \(a\)/\(b\) = [\d.]+ +ratio \(b\)/\(c\) = [\d.]+", out)
    assert re.search(r"5 execs for 5 containers", out)
    assert re.search(r"rollout detection over 2 runs: rollout-verify median [\d.]+ ms", out)
