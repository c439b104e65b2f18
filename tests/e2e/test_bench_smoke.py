"""The benchmark runs end to end at a tiny size (its numbers are only meaningful from `make bench`)."""

from __future__ import annotations

import re

import pytest

from bench.run import main


def test_bench_smoke_run_prints_every_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--pods", "5", "--rounds", "1", "--detect-runs", "2", "--workloads", "2x2"]) == 0
    out = capsys.readouterr().out
    print(out)  # shown with -s or on failure
    # (b) rollout-verify passed, (c) the floor's execs all succeeded (else it prints its exit codes)
    assert "(exit 0)" in out and "(c) exit" not in out
    assert re.search(r"\(b\)/\(c\) wall [\d.]+  CPU [\d.]+", out)
    assert re.search(
        r"start-up to the first API request: \(b\) [\d.]+ s wall [\d.]+ s CPU  \(c\) [\d.]+ s wall [\d.]+ s CPU", out
    )
    assert "nan" not in out
    assert re.search(r"first exec after the first request \(waiting, listing, planning\): \(b\) [\d.]+ s", out)
    assert re.search(r"5 execs for 5 containers \+ \d+ others \(0 single-pod GETs\)", out)
    assert re.search(r"\(5 present\), \(a\)/\(b\) = [\d.]+", out)
    assert re.search(r"peak RSS [\d.]+ MiB", out)
    assert re.search(r"rollout detection over 2 runs: rollout-verify median [\d.]+ ms", out)
    # two Deployments of two pods by --selector: one exec per container, a constant per workload
    assert "2 Deployments of 2 pods, by --selector:" in out
    assert re.search(r"4 execs for 4 containers \+ \d+ others, [\d.]+ per workload \(0 single-pod GETs\)", out)


def test_bench_gives_kubesim_a_node_per_hundred_pods() -> None:
    from bench.run import nodes_for

    # the scheduler fits at most 110 pods on a node (the kubelet's maxPods)
    assert nodes_for(1000) * 110 >= 1000 and nodes_for(5000) * 110 >= 5000
    assert nodes_for(5) >= 1


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
