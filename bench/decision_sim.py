"""Benchmark: the error rate of fsarena's whole decision procedure, by simulation.

Not a test (tests/unit/test_decision_error_rate.py pins the targets on fewer
trials). Builds sessions round by round with noise drawn from the recorded
sessions in tests/fixtures, asks the runner's real stopping rule after every
round, and reads what the real answer prints (tests/decision_model.py says how,
and where each noise parameter comes from). Prints one table: per scenario the
rate, its Monte Carlo standard error (binomial) and the number of trials.

    .venv/bin/python bench/decision_sim.py                 # the issue-25 table
    .venv/bin/python bench/decision_sim.py --grid          # 2, 3, 5 filesystems x 1-6 kinds
    .venv/bin/python bench/decision_sim.py --trials 2000   # more trials, smaller errors
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/decision_sim.py   # another tree's code

Every figure printed is measured in that run; the first lines say which fsarena
was imported and the noise model's fitted parameters.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.decision_model
try:
    import fsarena
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(1, str(ROOT / "src"))
    import fsarena

from tests.decision_model import (  # noqa: E402
    DRIFT_REFERENCE,
    QUIET,
    Noise,
    Result,
    Scenario,
    fit_noise,
    pair_false_positive,
    scaled,
    simulate,
)


def _rounds(result: Result) -> str:
    rounds = result.rounds()
    found = [r.rounds for r in result.reads if result.found_in(r)]
    text = f"rounds median {statistics.median(rounds):g}, mean {statistics.fmean(rounds):.1f}"
    if result.scenario.effect and found:
        text += f"; when found: median {statistics.median(found):g}"
    return text


def line(result: Result, spread: float, seconds: float) -> str:
    s = result.scenario
    parts = [s.label() + ("" if spread == 1.0 else f", spreads x {spread:g}")]
    if s.effect:
        parts.append(f"found {result.found().text()}")
    parts.append(f"false winner {result.false_winner().text()}")
    parts.append(f"coverage {result.coverage().text()}")
    if s.effect and (beside := result.coverage(winners_only=True)).trials:
        parts.append(f"coverage beside a named winner {beside.text()}")
    if wide := result.wide_no_difference():
        parts.append(f"{wide} 'no difference that matters' wider than ±5 %")
    if outside := result.outside():
        parts.append(f"{outside} printed ratio(s) outside their interval")
    parts.append(_rounds(result))
    parts.append(f"{seconds:.0f} s CPU")
    return " | ".join(parts)


Row = tuple[Scenario, int, float]  # the scenario, its trials, the spreads' factor


def table(rows: Sequence[Row], noise: Noise, seed: int) -> None:
    for scenario, trials, spread in rows:
        started = time.process_time()
        result = simulate(scenario, scaled(noise, spread), trials, seed)
        print(line(result, spread, time.process_time() - started), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400, help="trials of the headline rows")
    parser.add_argument("--grid", action="store_true", help="2, 3, 5 filesystems x 1-6 kinds")
    parser.add_argument("--grid-trials", type=int, default=100)
    parser.add_argument("--pair-trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", type=float, default=QUIET,
                        help="spreads' factor of the quiet-machine power rows")  # fmt: skip
    parser.add_argument("--only", default="", help="rows whose label contains this text")
    args = parser.parse_args(argv)

    print(f"fsarena imported from {Path(fsarena.__file__).parent}")
    with open("/proc/loadavg") as f:
        print(f"load at start: {f.read().strip()}")
    noise = fit_noise()
    print("noise model, fitted from the recorded sessions (log scale):")
    print("  task_sd " + ", ".join(f"{t} {v:.3f}" for t, v in sorted(noise.task_sd.items())))
    print(f"  sequence_sd {noise.sequence_sd:.3f}, first_round {noise.first_round:+.3f}, "
          f"stall p {noise.stall_p} x{noise.stall_factor}, drift (when on) "
          f"{DRIFT_REFERENCE:.4f}/round")  # fmt: skip
    for key, source in noise.sources.items():
        print(f"  {key}: {source}")
    n, q = args.trials, args.quiet
    rows: list[Row] = [
        (Scenario(2, 1), n, 1.0),
        (Scenario(2, 1, fixed=10), n, 1.0),
        (Scenario(2, 5), max(n // 4, 25), 1.0),
        (Scenario(2, 5, fixed=10), max(n // 4, 25), 1.0),
        (Scenario(2, 1, effect=0.10), n, 1.0),
        (Scenario(2, 1, effect=0.10, drift=True), n, 1.0),
        (Scenario(2, 1, effect=0.10), n, q),
        (Scenario(2, 1, effect=0.10, drift=True), n, q),
        (Scenario(2, 1, effect=0.10, fixed=10), n, q),
        (Scenario(2, 1, effect=0.10, drift=True, fixed=10), n, q),
    ]
    if args.grid:
        rows += [
            (Scenario(fs, kinds), max(args.grid_trials // (fs * kinds // 2 or 1), 20), 1.0)
            for fs in (2, 3, 5)
            for kinds in range(1, 7)
        ]
    rows = [r for r in rows if args.only in r[0].label()]
    table(rows, noise, args.seed)
    if not args.only:
        print("the per-pair test alone, no difference, log-normal sd 0.10, nominal 5 %:")
        for size in (3, 4, 5, 6, 8, 10):
            rate = pair_false_positive(size, args.pair_trials, seed=args.seed + size)
            print(f"  n = {size}: {rate.text()}")
    with open("/proc/loadavg") as f:
        print(f"load at end: {f.read().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
