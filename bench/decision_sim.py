"""Benchmark: the decision procedure's false claims and power, by simulation of the real code.

Not a test (tests/unit/test_decision_error_rate.py pins the targets). Runs fsarena's own
procedure on arrays (analysis.calibration.run_procedure: its looks, eliminations, stop and
claims, at the boundary the run would use) under noise drawn task by task from the
recorded sessions (tests/selection_model.py says how), and prints one table: per cell,
the share of runs naming a false winner, the share naming the truly faster filesystem
alone, the median rounds, and the sequences measured (elimination saves them), each
rate with its binomial standard error and number of runs.

    .venv/bin/python bench/decision_sim.py [--trials 1000] [--filesystems 2,3,5,8]

Every figure printed is measured in that run; the first lines say which fsarena was
imported and the noise model's fitted parameters.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.selection_model
try:
    import fsarena
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(1, str(ROOT / "src"))
    import fsarena

from tests.selection_model import Cell, recorded, simulate  # noqa: E402

DRIFT = math.log(1.03)


def _rate(hits: np.ndarray) -> str:
    p = float(np.mean(hits))
    se = math.sqrt(p * (1 - p) / len(hits))
    return f"{100 * p:.1f} ± {100 * se:.1f}"


def cells(filesystems: list[int]) -> list[Cell]:
    out = []
    for f in filesystems:
        for k in (1, 3):
            recorded_noise = Cell(f, k, sequence_sd=None, first_round=None, stalls=True)
            out += [
                recorded_noise,
                replace(recorded_noise, drift=DRIFT),
                Cell(f, k),
                Cell(f, k, effect=0.15, task_sd=0.1, round_sd=0.1),
                Cell(f, k, effect=0.30, task_sd=0.1, round_sd=0.1),
                replace(recorded_noise, effect=0.15),
                replace(recorded_noise, effect=0.15, spread=0.5),
                replace(recorded_noise, effect=0.30, spread=0.5, drift=DRIFT),
            ]
    out.append(Cell(2, 1, effect=0.10, kind_sd=0.05, round_sd=0.1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--filesystems", default="2,3,5,8")
    args = parser.parse_args()
    noise = recorded()
    print(f"fsarena {fsarena.__version__} from {Path(fsarena.__file__).parent}")
    print(f"recorded noise: stalls {noise.stall_p:.3f} x4.5, sequence sd {noise.sequence_sd:.3f}, "
          f"first round +{noise.first_round:.3f} (log)")  # fmt: skip
    print("| cell | runs | false winner, % ± SE | truly faster named alone, % ± SE | "
          "median rounds | sequences measured (of a full run's) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    started = time.monotonic()
    for cell in cells([int(x) for x in args.filesystems.split(",")]):
        outcome = simulate(cell, args.trials, seed=21)
        truly = list(range(cell.faster)) if cell.effect else []
        alone = _rate(outcome.named_alone(0)) if cell.effect else "–"
        full = cell.filesystems * cell.last
        measured = np.where(outcome.dropped_at > 0, outcome.dropped_at, outcome.stop_at[:, None])
        share = float(np.median(measured.sum(-1))) / full
        print(f"| {cell.label()} | {args.trials} | {_rate(outcome.false_claims(truly))} | "
              f"{alone} | {float(np.median(outcome.stop_at)):g} | {100 * share:.0f} % |",
              flush=True)  # fmt: skip
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
