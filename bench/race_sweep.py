"""Benchmark: a tune's race against the full sweep of the same configurations.

Two parts, side by side:
- simulated (the many trials): 10 configurations of one filesystem (the defaults and
  nine options, 3 % faster to 2.2x slower on the weighed kind), each trial run twice
  from the same seed: raced (analysis.race drops those shown more than 5 % behind) and
  swept (every configuration every round), both with a budget of 10 rounds (the default
  ceiling): the race spends less of it, on the contenders. The loop is
  tests/race_model.py: fsarena's real race, stopping rule and analysis, with noise
  fitted from the recorded sessions (heavy tails, a per-sequence effect, the first
  round's excess). Printed per mode: rounds, sequences measured and their simulated
  wall time, whether the race named the same best configuration as the sweep (and the
  true one), and the races that dropped a configuration within 5 % of the best (the
  stated error, at most 5 %).
- real (--real DIR): two sessions of `fsarena tune`, the same plan and seed run with
  --race and with --no-race, one after the other, each in its own results directory:

    common="--fs ext4,xfs --suite quick --scale 0.01 -n 5 --seed 7 --weigh large_files=1
      --options fast_commit,data=journal,commit=60,journal_async_commit,lazytime,logbsize=256k"
    fsarena tune $common --race --results-dir DIR/race --workdir /var/tmp/fsarena-W1
    fsarena tune $common --no-race --results-dir DIR/no-race --workdir /var/tmp/fsarena-W2

  printed: their rounds, sequences, wall time (from the sessions' timing), the drops,
  the stop, and the best configuration each reached for the weighed workload.

    .venv/bin/python bench/race_sweep.py --trials 100 --errors 200
    .venv/bin/python bench/race_sweep.py --trials 0 --real results/race-bench

Every figure printed is measured in that run (or read from the sessions named).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.race_model
try:
    import fsarena
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(1, str(ROOT / "src"))
    import fsarena

from tests.decision_model import QUIET, fit_noise  # noqa: E402
from tests.race_model import (  # noqa: E402
    RaceRun,
    RaceScenario,
    leader,
    run_race,
    scenarios,
    simulate_race,
)

from fsarena.session.file import load  # noqa: E402

TIMES = (1.0, 0.97, 1.0, 1.02, 1.05, 1.10, 1.20, 1.40, 1.70, 2.20)  # the defaults first


def _load() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0]


def simulated(trials: int, spread: float) -> list[str]:
    noise = fit_noise()
    times = tuple((t,) for t in TIMES)
    raced = RaceScenario(times, spread=spread, race=True)
    swept = RaceScenario(times, spread=spread, race=False)
    pairs: list[tuple[RaceRun, RaceRun]] = []
    started = time.monotonic()
    for i in range(trials):
        pairs.append((run_race(raced, noise, 1000 + i), run_race(swept, noise, 1000 + i)))
    cpu = time.monotonic() - started
    best = raced.best()
    protected = raced.protected()
    out = [
        f"simulated: {len(TIMES)} configurations (times {', '.join(f'{t:g}' for t in TIMES)}"
        f" x the best), spreads x {spread:g}, {trials} trials, a budget of 10 rounds "
        f"({cpu:.0f} s, load {_load()})",
        "| | rounds (median) | sequences (mean) | simulated time (mean) | best = true best |",
        "|---|---|---|---|---|",
    ]
    for label, k in (("race", 0), ("full sweep", 1)):
        runs = [p[k] for p in pairs]
        out.append(
            f"| {label} | {statistics.median(r.rounds for r in runs):g} | "
            f"{statistics.fmean(r.sequences for r in runs):.1f} | "
            f"{statistics.fmean(r.seconds for r in runs) / 60:.1f} min | "
            f"{sum(r.leader == best for r in runs)}/{trials} |"
        )
    same = sum(a.leader == b.leader for a, b in pairs)
    false = sum(bool(protected & set(a.dropped)) for a, _ in pairs)
    saved = 1 - statistics.fmean(a.seconds for a, _ in pairs) / statistics.fmean(
        b.seconds for _, b in pairs
    )
    drops = statistics.fmean(len(a.dropped) for a, _ in pairs)
    out.append(
        f"same best configuration: {same}/{trials}; time saved by the race: {100 * saved:.0f} %;"
        f" configurations dropped per race: {drops:.1f}; races that dropped one within 5 % of"
        f" the best: {false}/{trials}"
    )
    return out


def errors(trials: int) -> list[str]:
    """The stated error per scenario: races that dropped a configuration within 5 % of the
    best of some family, every round to the ceiling (the most looks)."""
    noise = fit_noise()
    out = [
        f"the race's error: {trials} races per scenario, rounds 3-10 all taken (load {_load()})",
        "| scenario | within 5 % of a best, dropped | drops per race | rounds |",
        "|---|---|---|---|",
    ]
    for s in scenarios().values():
        result = simulate_race(s, noise, trials, seed=5)
        hits, total = result.false_drop()
        p = hits / total
        se = (p * (1 - p) / total) ** 0.5
        out.append(
            f"| {s.label} | {100 * p:.1f} % ± {100 * se:.1f} ({hits}/{total}) | "
            f"{result.drops():.2f} | {statistics.median(r.rounds for r in result.runs):g} |"
        )
    return out


def real(directory: Path) -> list[str]:
    out = [
        f"real: `fsarena tune` sessions in {directory}",
        "| | rounds | sequences | wall time | best (weighed workload) | dropped |",
        "|---|---|---|---|---|---|",
    ]
    for mode in ("race", "no-race"):
        found = sorted((directory / mode).glob("*.json"))
        if not found:
            out.append(f"| {mode} | no session in {directory / mode} | | | | |")
            continue
        session = load(found[-1])
        drops = session.race.drops if session.race else []
        dropped = "; ".join(f"{d.configuration} after {d.after_rounds}" for d in drops) or "none"
        total = session.timing.total_s or 0.0
        out.append(
            f"| {mode} | {len(session.order)} | {sum(len(o) for o in session.order)} | "
            f"{float(total) / 60:.1f} min | {leader(session)} | {dropped} |"
        )
        if session.stop:
            out.append(f"|  | {session.stop.text} | | | | |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--errors", type=int, default=0, help="races per error scenario")
    parser.add_argument("--real", type=Path, default=None)
    args = parser.parse_args()
    print(f"fsarena from {Path(fsarena.__file__).parent}; load {_load()}")
    if args.trials:
        for spread in (QUIET, 1.0):
            print("\n".join(simulated(args.trials, spread)), end="\n\n")
    if args.errors:
        print("\n".join(errors(args.errors)), end="\n\n")
    if args.real:
        print("\n".join(real(args.real)))


if __name__ == "__main__":
    main()
