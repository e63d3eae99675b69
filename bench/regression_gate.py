"""Benchmark: the regression gate's false-alarm rate and power, on noise from recorded sessions.

Not a test (tests/unit/test_regression_gate.py pins the same figures with fewer trials).
Draws pairs of sessions from the recorded article-A sessions (tests/recorded_noise.py:
each (filesystem, task)'s recorded spread, a smoothed bootstrap, 5 % stalls of 3×),
runs the real gate (fsarena.analysis.regression.gate at 5 %) on each pair and prints,
per number of repetitions, how often it fails a job on pure noise (the false-alarm
rate, target <= 5 %), and how often it finds a slowdown injected into one task.

    .venv/bin/python bench/regression_gate.py [--trials 1000]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.recorded_noise import draw

from fsarena.analysis.regression import ALPHA, gate

INJECTED = ("ext4", "iso_copy_within")


def rate(trials: int, n: int, factor: float, seed: int) -> float:
    hits = 0
    for t in range(trials):
        rng = random.Random(seed + t)
        base = draw(n, rng)
        new = draw(n, rng, {INJECTED: factor} if factor != 1 else None)
        result = gate(base, new, 0.05)
        if factor == 1:
            hits += result.failed
        else:
            hits += any((p.filesystem, p.task) == INJECTED for p in result.regressions)
    return hits / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.trials)
    print(f"{args.trials} pairs per cell; Monte Carlo SE at 5 %: ±{se:.1%}")
    print(f"{'n':>3}  {'false alarms':>12}  {'10 % found':>10}  {'20 % found':>10}")
    for n in (3, 5, 10, 20):
        null = rate(args.trials, n, 1.0, 10_000)
        p10 = rate(args.trials, n, 1.10, 20_000)
        p20 = rate(args.trials, n, 1.20, 30_000)
        print(f"{n:>3}  {null:>12.1%}  {p10:>10.1%}  {p20:>10.1%}")


if __name__ == "__main__":
    main()
