"""The decision procedure's error rate and power, proven by simulation of the real code.

The procedure (analysis.decision on a session; analysis.calibration.run_procedure on
arrays, the same looks, eliminations, stop and claims through analysis.selection and
analysis.blocks) runs under noise drawn task by task from the recorded sessions
(tests/selection_model.py: heavy tails, stalls, a slow first sequence, sequence shifts,
drift), at the boundary the run would use. The first test shows that the real Runner and
answer decide exactly as the arrays do on the same values; the others then measure,
each rate with its binomial standard error printed:
- error: under no real difference, the share of runs naming any false winner (an
  elimination, or a claim in any weighed kind) is at most 5 % for 2, 3, 5 and 8
  filesystems, 1 to 4 kinds, with and without drift and stalls (300 runs a cell);
- power: 5 filesystems x 3 kinds, one truly 15 % faster on every task (task sd 10 %,
  a round shift of sd 10 %): named alone in at least 80 % of runs within 10 rounds,
  30 % faster: 95 %; two filesystems, one kind of 5 % spread per round and the same
  round shift, 10 % apart: found in at least 80 %;
- the holes of review-verdicts-4: H1 (no "no difference that matters" beside a far
  slower filesystem), H2 (the best named alone, not stopped at the first laggard), H3
  (the recommendation agrees with unanimous kinds under stalls).
A rate passes when it is not beyond its target by more than two standard errors taken
at the target (decision_model.at_most / at_least). FSARENA_SIM_TRIALS=K multiplies the
trials.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from fsarena.analysis.calibration import boundary, run_procedure
from fsarena.analysis.decision import design_of
from fsarena.analysis.selection import Design
from fsarena.measure.collect import Command, Timed
from fsarena.plan.model import make_plan
from fsarena.report.comparison import build
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import load
from tests.decision_model import Rate, at_least, at_most
from tests.fakes import FakeExecutor
from tests.selection_model import Cell, simulate

SCALE = float(os.environ.get("FSARENA_SIM_TRIALS", "1"))
FALSE_WINNER = 0.05


def trials(n: int) -> int:
    return max(int(n * SCALE), 20)


def rate(hits: np.ndarray) -> Rate:
    return Rate(int(np.sum(hits)), len(hits))


# ---------------------------------------------------------------- the arrays are the runner


class Drawn(FakeExecutor):
    """Wall times per filesystem (the one the last mkfs made), log-normal, seeded."""

    def __init__(self, walls: Mapping[str, float], sd: float, seed: int) -> None:
        super().__init__()
        self.walls, self.sd = walls, sd
        self.rng = random.Random(seed)
        self.current = ""

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        argv0 = commands[0].argv[0]
        if argv0.startswith("mkfs."):
            self.current = argv0.removeprefix("mkfs.")
        if "fio" not in commands[0].argv[:6]:  # the device's ceiling is measured before mkfs
            self.wall_s = self.walls[self.current] * self.rng.lognormvariate(0.0, self.sd)
        return super().measure(commands, device, timeout_s)


ONE_TASK_A_KIND = {"large_files": "iso_copy_in", "file_trees": "tree_copy_in",
                   "listing_search": "tree_list_recursive"}  # fmt: skip


@pytest.mark.parametrize(
    ("walls", "seed"),
    [
        ({"ext2": 1.0, "ext4": 1.0, "xfs": 1.0}, 1),
        ({"ext2": 1.4, "ext4": 1.0, "xfs": 1.1}, 2),
        ({"ext2": 1.6, "ext4": 1.0, "xfs": 1.02}, 3),
    ],
)
def test_the_runner_and_the_answer_decide_as_the_arrays_do(
    tmp_path: Path, walls: dict[str, float], seed: int
) -> None:
    """The real Runner (a fake executor at the measurement seam), its eliminations and the
    real answer decide exactly what analysis.calibration.run_procedure decides on the same
    values: which filesystems were eliminated after which round, when the run stopped, the
    recommendation and each kind's claims. One task a kind, so a kind's value is its task's."""
    suite = tmp_path / "one.toml"
    tasks = ["mkfs", "mount", *ONE_TASK_A_KIND.values(), "umount"]
    suite.write_text(f'name = "one"\ntasks = {tasks!r}\n'.replace("'", '"'))
    fs = list(walls)
    plan = make_plan(str(suite), fs, 3, 0.001, seed, str(tmp_path / "w"), decisive=True,
                     max_repetitions=8)  # fmt: skip
    path = tmp_path / "s.json"
    ex = Drawn(walls, 0.15, seed)
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    session = load(path)
    rounds = len(session.order)
    values = np.zeros((1, 3, len(fs), rounds))  # cells never measured stay 0: masked
    for run in session.runs:
        kind = next((k for k, t in ONE_TASK_A_KIND.items() if t == run.task), None)
        if kind is not None and run.measurement is not None:
            k = list(ONE_TASK_A_KIND).index(kind)
            values[0, k, fs.index(run.filesystem), run.repetition - 1] = math.log(
                run.measurement.wall_s
            )
    design = design_of(session.plan, len(fs), 3, rounds)
    assert design == Design(3, 3, 3, 8, True)
    padded = np.concatenate([values, np.zeros((1, 3, len(fs), 8 - rounds))], -1)
    outcome = run_procedure(padded, design, boundary(design))
    drops = session.race.drops if session.race else []
    dropped = {d.configuration: d.after_rounds for d in drops}
    assert dropped == {f: int(outcome.dropped_at[0, i]) for i, f in enumerate(fs)
                       if outcome.dropped_at[0, i]}  # fmt: skip
    assert rounds == outcome.stop_at[0]
    if walls["ext2"] >= 1.4:  # clearly behind: the run stopped measuring it
        assert "ext2" in dropped and rounds > dropped["ext2"]
    answer = build(session).verdicts.answer  # type: ignore[union-attr]
    best = {f for i, f in enumerate(fs) if outcome.best[0, i]}
    assert set(answer.recommended) == (best if answer.recommended else set())
    assert answer.recommended or best == set(fs)
    for k, kind in enumerate(ONE_TASK_A_KIND):
        said = next(a for a in answer.kinds if a.kind == kind)
        claimed = {f for i, f in enumerate(fs) if outcome.kind_slower[0, k, i].any()}
        unbeaten = set(fs) - claimed
        assert set(said.winners) == (unbeaten if said.winners else set())


# ---------------------------------------------------------------- error


GRID = [
    Cell(f, k, stalls=stalls, drift=drift, sequence_sd=None, first_round=None)
    for f in (2, 3, 5, 8)
    for k in (1, 2, 3, 4)
    for stalls in (False, True)
    for drift in (0.0, math.log(1.03))
]


@pytest.mark.parametrize("cell", GRID, ids=lambda c: c.label())
def test_no_real_difference_names_a_false_winner_at_most_5_percent(cell: Cell) -> None:
    found = rate(simulate(cell, trials(300), seed=11).false_claims())
    print(f"{cell.label()}: false winner in {found.text()} of runs")
    assert at_most(found, FALSE_WINNER), f"false winner in {found.text()} of runs"


@pytest.mark.parametrize(
    "cell",
    [Cell(5, 3, unequal=True, sequence_sd=None, first_round=None, stalls=True),
     Cell(2, 1, unequal=True), Cell(3, 2, last=5, sequential=False, stalls=True)],
    ids=lambda c: c.label(),
)  # fmt: skip
def test_unequal_spreads_and_fixed_runs_hold_5_percent(cell: Cell) -> None:
    found = rate(simulate(cell, trials(300), seed=12).false_claims())
    assert at_most(found, FALSE_WINNER), f"false winner in {found.text()} of runs"


def test_partial_nulls_claim_nothing_false_about_the_truly_best() -> None:
    """Two filesystems tied for best, 20 % ahead of three equal ones: neither of the two is
    ever eliminated or claimed slower than another, beyond 5 % of runs."""
    cell = Cell(5, 3, effect=0.2, faster=2, task_sd=0.1, round_sd=0.1, stalls=True)
    outcome = simulate(cell, trials(300), seed=13)
    found = rate(outcome.false_claims(truly_best=[0, 1]))
    assert at_most(found, FALSE_WINNER), f"false claims in {found.text()} of runs"
    both = rate(outcome.best[:, 0] & outcome.best[:, 1] & (outcome.best.sum(-1) == 2))
    assert at_least(both, 0.8), f"both named, and only them, in {both.text()} of runs"


def test_within_the_threshold_is_never_said_of_a_real_10_percent_difference() -> None:
    cell = Cell(2, 1, effect=0.10, kind_sd=0.02, round_sd=0.1)
    outcome = simulate(cell, trials(300), seed=14)
    equal = outcome.resolved & (outcome.best.sum(-1) == 2)
    assert not equal.any(), f"'within 5 %' said in {int(equal.sum())} runs of a 10 % difference"


# ---------------------------------------------------------------- power


@pytest.mark.parametrize(
    ("cell", "target"),
    [
        (Cell(5, 3, effect=0.15, task_sd=0.1, round_sd=0.1), 0.80),
        (Cell(5, 3, effect=0.30, task_sd=0.1, round_sd=0.1), 0.95),
        (Cell(2, 1, effect=0.10, kind_sd=0.05, round_sd=0.1), 0.80),
    ],
    ids=lambda v: v.label() if isinstance(v, Cell) else str(v),
)
def test_a_real_difference_is_named_alone_within_10_rounds(cell: Cell, target: float) -> None:
    outcome = simulate(cell, trials(400), seed=15)
    found = rate(outcome.named_alone(0))
    median = np.median(outcome.stop_at)
    print(f"{cell.label()}: named alone in {found.text()}, median {median} rounds")
    assert at_least(found, target), f"named alone in {found.text()} of runs"
    wrong = rate(outcome.false_claims(truly_best=[0]))
    assert at_most(wrong, FALSE_WINNER)


# ---------------------------------------------------------------- the holes (review-verdicts-4)


def test_h2_the_best_is_named_alone_not_stopped_at_the_first_laggard() -> None:
    """5 filesystems x 1 kind, one truly 40 % faster (the recorded noise at half its spread:
    the review's kinds of log sd 0.1, stalls included): named alone, as the run goes on
    until the best is known (43fa896: 10 % of runs, stopping at a group)."""
    cell = Cell(5, 1, effect=0.4, sequence_sd=None, first_round=None, stalls=True, spread=0.5)
    found = rate(simulate(cell, trials(300), seed=16).named_alone(0))
    assert at_least(found, 0.9), f"named alone in {found.text()} of runs"


def test_h3_the_recommendation_agrees_with_unanimous_kinds_under_stalls() -> None:
    """2 filesystems x 3 kinds, one 40 % faster, recorded stalls: where every kind names it
    alone, so does the recommendation (43fa896: 13 % of runs said "none yet" there)."""
    cell = Cell(2, 3, effect=0.4, sequence_sd=None, first_round=None, stalls=True, spread=0.5)
    outcome = simulate(cell, trials(300), seed=17)
    unanimous = outcome.kind_best[:, :, 0].all(-1) & ~outcome.kind_best[:, :, 1].any(-1)
    disagree = unanimous & ~outcome.named_alone(0)
    assert int(disagree.sum()) <= max(1, int(0.01 * len(disagree))), (
        f"{int(disagree.sum())} of {int(unanimous.sum())} unanimous runs not recommended"
    )
