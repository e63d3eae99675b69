"""Benchmark: the regression gate's false-alarm rate and power, on noise from recorded sessions.

Not a test (tests/unit/test_regression_gate.py pins the same figures with fewer trials).
Draws pairs of sessions from the recorded article-A sessions (tests/recorded_noise.py:
each (filesystem, task)'s recorded spread, a smoothed bootstrap, 5 % stalls of 3×),
runs the real gate (fsarena.analysis.regression.gate at 5 %) on each pair and prints,
per number of repetitions, how often it fails a job on pure noise (the false-alarm
rate, target <= 5 %), and how often it finds a slowdown injected into one task.

Then what the gate prints before its verdict (issue 36): the smallest slowdown it could
have detected, for a 3-, 5- and 10-round base (and as many rounds new) of the default
suite (article-a-2006: ext4 and xfs, the recorded noise): over the trials, the median
of the median pair's figure, the steadiest and the noisiest pair, ext4's ISO copy, and
how many of the 22 pairs could have shown 5 %, 10 % and 20 %. Last, the check that the
figure is what it claims: the ISO copy slowed down by its printed figure (the median
over the trials) is found by the real gate about 80 % of the time.

With --sessions A.json B.json (two real sessions of one plan, e.g. two `fsarena run
--fs ext4,xfs -n 10 --scale 0.02`), the same figures from their first 3, 5 and 10
rounds instead of the recorded noise.

    .venv/bin/python bench/regression_gate.py [--trials 1000] [--detectable-only]
                                              [--sessions A.json B.json]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.recorded_noise import draw

from fsarena.analysis.regression import ALPHA, POWER, Gate, gate
from fsarena.session.file import Session, load

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


def _first_rounds(session: Session, n: int) -> Session:
    runs = [r for r in session.runs if 1 <= r.repetition <= n]
    return session.model_copy(update={"runs": runs, "order": session.order[:n]})


def _row(n: int, gates: list[Gate]) -> str:
    """One line of the detectable-slowdown table, over the gates of one n."""
    middles, bests, worsts, iso = [], [], [], []
    shows = {0.05: 0, 0.10: 0, 0.20: 0}
    pairs = 0
    for g in gates:
        tested = sorted(g.tested, key=lambda p: p.detectable)
        middles.append(tested[len(tested) // 2].detectable)
        bests.append(tested[0].detectable)
        worsts.append(tested[-1].detectable)
        iso += [p.detectable for p in tested if (p.filesystem, p.task) == INJECTED]
        pairs += len(tested)
        for pct in shows:
            shows[pct] += sum(p.detectable <= pct for p in tested)
    share = "  ".join(f"{100 * shows[pct] / pairs:>4.0f} %" for pct in shows)
    return (
        f"{n:>3}  {_pct(median(middles)):>9}  {_pct(median(bests)):>9}  "
        f"{_pct(median(worsts)):>9}  {_pct(median(iso)) if iso else '-':>9}  {share}"
    )


def _pct(fraction: float) -> str:
    return f"{fraction * 100:,.0f} %"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def detectable_table(trials: int, sessions: list[Path] | None) -> dict[int, float]:
    """Print the table; return each n's median printed figure for ext4's ISO copy."""
    print(f"the gate's detectable slowdown ({POWER * 100:.0f} % power, each test at its level, "
          "threshold 5 %), medians over the trials:")  # fmt: skip
    print(f"{'n':>3}  {'median':>9}  {'steadiest':>9}  {'noisiest':>9}  {'ISO copy':>9}  "
          "pairs that could show 5 % / 10 % / 20 %")  # fmt: skip
    iso: dict[int, float] = {}
    for n in (3, 5, 10):
        if sessions:
            base, new = (_first_rounds(load(p), n) for p in sessions)
            gates = [gate(base, new, 0.05)]
        else:
            gates = []
            for t in range(trials):
                rng = random.Random(40_000 + 1000 * n + t)
                gates.append(gate(draw(n, rng), draw(n, rng), 0.05))
        print(_row(n, gates))
        found = [
            p.detectable for g in gates for p in g.tested if (p.filesystem, p.task) == INJECTED
        ]
        iso[n] = median(found) if found else math.nan
    return iso


def check_power(trials: int, iso: dict[int, float]) -> None:
    """The ISO copy slowed down by its printed figure (and by 1.5 and 2 times it): how often
    the real gate finds it, on the recorded, heavy-tailed noise."""
    for n, printed in iso.items():
        if math.isnan(printed):
            continue
        found = [rate(trials, n, 1 + k * printed, 50_000 + n) for k in (1.0, 1.5, 2.0)]
        print(f"n = {n:>2}: ISO copy slowed down by its printed {_pct(printed)} (× 1, 1.5, 2): "
              f"found in {' / '.join(f'{100 * f:.1f} %' for f in found)} of {trials} pairs "
              f"(claimed at × 1: {POWER * 100:.0f} %)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--detectable-only", action="store_true")
    parser.add_argument("--sessions", type=Path, nargs=2, default=None)
    args = parser.parse_args()
    if not args.detectable_only and not args.sessions:
        se = math.sqrt(ALPHA * (1 - ALPHA) / args.trials)
        print(f"{args.trials} pairs per cell; Monte Carlo SE at 5 %: ±{se:.1%}")
        print(f"{'n':>3}  {'false alarms':>12}  {'10 % found':>10}  {'20 % found':>10}")
        for n in (3, 5, 10, 20):
            null = rate(args.trials, n, 1.0, 10_000)
            p10 = rate(args.trials, n, 1.10, 20_000)
            p20 = rate(args.trials, n, 1.20, 30_000)
            print(f"{n:>3}  {null:>12.1%}  {p10:>10.1%}  {p20:>10.1%}")
    iso = detectable_table(args.trials, args.sessions)
    if not args.sessions:
        check_power(args.trials, iso)


if __name__ == "__main__":
    main()
