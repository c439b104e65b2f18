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
    assert re.search(r"peak RSS of rollout-verify at 5 pods: [\d.]+ MiB", out)


def test_peak_rss_is_the_childs_own_not_the_big_parents() -> None:
    import sys

    from bench.run import peak_rss, run_child

    ballast = bytearray(200 * 1024 * 1024)  # this process, like the bench hosting kubesim, is big
    ballast[::4096] = b"x" * len(ballast[::4096])  # touched, so resident
    cmd = [sys.executable, "-c", "pass"]
    _, code, own_mib = peak_rss(cmd, {})
    _, _, bound_kib, _ = run_child(cmd, {})
    assert code == 0
    assert own_mib < 60, own_mib
    # measured directly, a vfork()ed child carries the parent's high-water mark across exec
    assert bound_kib / 1024 > own_mib
    del ballast
