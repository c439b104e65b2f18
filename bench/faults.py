"""`make faults`: the five core scenarios, each verified without faults, then in 20 runs with faults.

Each run injects 20% 500/503/429+Retry-After/connection resets on every API call (REST,
watches, exec upgrades). Prints one row per run and a summary per scenario: how many runs kept the
fault-free verdict, the faults kubesim injected (each run's faults are fixed by its number, so a
run can be repeated), the requests it served (the extra requests over
the fault-free run are the verifier's retries) and the wall time of the rollout-verify process.

Exits 1 if any verdict changed. Options: `python -m bench.faults --runs 20 --rate 0.2
--mix 500,503,429,reset,403 --scenario healthy --scenario recreated-cm`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.support.scenarios import BY_NAME, FAULT_RATE, SCENARIOS, Run, Scenario, run_fresh

KINDS = ("500", "503", "429", "reset")
SHOWN = (*KINDS, "403")


def _faults(c: Counter[str]) -> str:
    return " ".join(f"{k}:{c[k]}" for k in SHOWN if c[k]) or "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench.faults", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="runs with faults per scenario")
    ap.add_argument("--first-run", type=int, default=0, help="the number of the first run (its faults)")
    ap.add_argument("--rate", type=float, default=FAULT_RATE)
    ap.add_argument("--mix", default=",".join(KINDS), help="fault kinds, e.g. 500,503,429,reset,403")
    ap.add_argument("--scenario", action="append", choices=sorted(BY_NAME), help="default: all five")
    args = ap.parse_args(argv)
    chosen: list[Scenario] = [BY_NAME[n] for n in args.scenario] if args.scenario else list(SCENARIOS)
    numbers = range(args.first_run, args.first_run + args.runs)
    mix = tuple(k.strip() for k in args.mix.split(",") if k.strip())
    started = time.monotonic()
    changed = 0
    summary: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rv-faults-") as tmp:
        root = Path(tmp)
        print(
            f"{'scenario':<12} {'run':>4}  {'verdict':<30} {'faults injected':<28} {'requests':>8} {'seconds':>7}"
        )
        for sc in chosen:
            base = run_fresh(sc, seed=None, workdir=root / f"{sc.name}-base")
            mark = "" if base.verdict == sc.expected else f"  EXPECTED {sc.expected}"
            print(
                f"{sc.name:<12} {'none':>4}  {base.verdict!s:<30} {'-':<28} {base.requests:>8} {base.seconds:>7.2f}{mark}"
            )
            changed += base.verdict != sc.expected
            runs: list[Run] = []
            for number in numbers:
                run = run_fresh(sc, seed=number, workdir=root / f"{sc.name}-{number}", rate=args.rate, mix=mix)
                runs.append(run)
                flag = "" if run.verdict == base.verdict else "  CHANGED"
                changed += run.verdict != base.verdict
                print(
                    f"{sc.name:<12} {number:>4}  {run.verdict!s:<30} {_faults(run.injected):<28} "
                    f"{run.requests:>8} {run.seconds:>7.2f}{flag}",
                    flush=True,
                )
                if flag:
                    print(run.stderr, file=sys.stderr)
            same = sum(r.verdict == base.verdict for r in runs)
            injected: Counter[str] = Counter()
            for r in runs:
                injected.update(r.injected)
            requests = sum(r.requests for r in runs)
            extra = requests - base.requests * len(runs)
            times = [r.seconds for r in runs]
            summary.append(
                f"{sc.name:<12} {same:>2}/{len(runs)} same verdict ({base.verdict}); "
                f"faults {sum(injected.values())} ({_faults(injected)}); requests {requests} "
                f"(+{extra} over {len(runs)}x{base.requests} fault-free = retries); "
                f"seconds median {statistics.median(times):.2f} max {max(times):.2f} (fault-free {base.seconds:.2f})"
            )
    print()
    print(f"summary at {args.rate:.0%} faults, runs {numbers.start}..{numbers.stop - 1}:")
    for line in summary:
        print("  " + line)
    print(f"total wall time {time.monotonic() - started:.1f}s; verdicts changed: {changed}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
