"""Runs of the decision procedure under simulated noise, thousands at once, on the real code.

The procedure is fsarena's own, on arrays (analysis.calibration.run_procedure: the looks,
eliminations and stop of analysis.selection, the stalls set aside by analysis.blocks,
each kind's claims at the stop), at the boundary the run would use
(analysis.calibration.boundary). tests/unit/test_decision_error_rate.py checks that the
real Runner and answer decide the same on the same values.

The noise is drawn task by task, as a run measures it, then aggregated into kinds the
way analysis.kinds does (each task weighing its share of the kind's time):
- the tasks of article A's kinds (tests/decision_model.KIND_TASKS), their times and
  spreads fitted from the recorded sessions (decision_model.fit_noise), or a spread given;
- a shift shared by every filesystem of a round (round_sd), which the pairs cancel;
- a shift shared by one filesystem's whole sequence in one round (sequence_sd, recorded);
- the first sequence of the run slower (first_round, recorded);
- stalls: a task 4.5x its usual in 2.6 % of runs (recorded);
- drift: every filesystem slower by `drift` (log) per round, continuously through the
  round, so the filesystem that runs last in a round pays a little more;
- one filesystem truly faster (or `faster` of them) by `effect` on every task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from fsarena.analysis.calibration import Outcome, boundary, run_procedure
from fsarena.analysis.selection import Design
from tests.decision_model import BORROWED, KIND_TASKS, WORKLOAD, Noise, fit_noise

RECORDED_STALL_X = 4.5


@cache
def recorded() -> Noise:
    return fit_noise()


@dataclass(frozen=True)
class Cell:
    """One scenario: what is compared, the truth, the noise, the rounds."""

    filesystems: int
    kinds: int
    effect: float = 0.0  # the truly faster filesystems' advantage on every task
    faster: int = 1  # how many are that much faster (fs0, fs1, ...)
    task_sd: float | None = None  # every task's spread (None: as recorded, per task)
    kind_sd: float | None = None  # instead of tasks: one value per kind with this spread
    round_sd: float = 0.0
    sequence_sd: float | None = 0.0  # None: as recorded
    first_round: float | None = 0.0  # None: as recorded
    stalls: bool = False
    drift: float = 0.0
    unequal: bool = False  # one filesystem 3x as noisy as the others, one half
    spread: float = 1.0  # the recorded spreads (tasks and sequences) multiplied
    first: int = 3
    last: int = 10
    sequential: bool = True

    @property
    def design(self) -> Design:
        return Design(self.filesystems, self.kinds, self.first, self.last, self.sequential)

    def label(self) -> str:
        truth = f"{self.effect:.0%} faster" if self.effect else "no difference"
        noise = []
        if self.stalls:
            noise.append("stalls")
        if self.drift:
            noise.append(f"drift {math.expm1(self.drift):.0%}/round")
        if self.round_sd:
            noise.append(f"round shift {self.round_sd:.0%}")
        if self.unequal:
            noise.append("unequal spreads")
        if self.spread != 1.0:
            noise.append(f"recorded spreads x{self.spread:g}")
        how = f"{self.first}-{self.last} rounds" if self.sequential else f"fixed {self.last}"
        said = ", ".join(noise) or "normal noise"
        return f"{self.filesystems} fs × {self.kinds} kind(s), {truth}, {said}, {how}"


def kinds_of(cell: Cell) -> list[str]:
    return list(WORKLOAD)[: cell.kinds]


def draw(cell: Cell, trials: int, seed: int) -> np.ndarray:
    """Log kind values [trials, kinds, filesystems, rounds] for the cell."""
    rng = np.random.default_rng(seed)
    noise = recorded()
    f, r = cell.filesystems, cell.last
    kinds = kinds_of(cell)
    spread = np.ones(f)
    if cell.unequal:
        spread[0] = 3.0
        if f > 2:
            spread[-1] = 0.5
    shared = rng.standard_normal((trials, 1, r)) * cell.round_sd
    seq_sd = noise.sequence_sd * cell.spread if cell.sequence_sd is None else cell.sequence_sd
    shared = shared + rng.standard_normal((trials, f, r)) * seq_sd
    first = noise.first_round if cell.first_round is None else cell.first_round
    if first:
        who = rng.integers(0, f, trials)
        shared[np.arange(trials), who, 0] += first
    if cell.drift:
        position = rng.permuted(np.tile(np.arange(f), (trials, r, 1)), axis=-1)  # [T, R, F]
        when = np.arange(r)[None, None, :] + position.transpose(0, 2, 1) / f
        shared = shared + cell.drift * when
    gain = np.zeros(f)
    gain[: cell.faster] = math.log1p(cell.effect)
    out = np.empty((trials, len(kinds), f, r))
    for k, kind in enumerate(kinds):
        if cell.kind_sd is not None:
            values = rng.standard_normal((trials, f, r)) * cell.kind_sd * spread[None, :, None]
            out[:, k] = values + shared - gain[None, :, None]
            continue
        tasks = KIND_TASKS[kind]
        base = np.array([noise.base_s[BORROWED.get(t, t)] for t in tasks])
        weight = base / base.sum()
        total = np.zeros((trials, f, r))
        for task, w, b in zip(tasks, weight, base, strict=True):
            sd = cell.task_sd if cell.task_sd is not None else noise.spread(task) * cell.spread
            log = math.log(b) + rng.standard_normal((trials, f, r)) * sd * spread[None, :, None]
            if cell.stalls:
                log += (rng.random((trials, f, r)) < noise.stall_p) * math.log(RECORDED_STALL_X)
            total += w * log
        out[:, k] = total + shared - gain[None, :, None]
    return out


def simulate(cell: Cell, trials: int, seed: int = 1) -> Outcome:
    """TRIALS runs of the cell, decided by the real procedure at the run's own boundary."""
    return run_procedure(draw(cell, trials, seed), cell.design, boundary(cell.design))


def with_noise(cell: Cell, **changes: object) -> Cell:
    return replace(cell, **changes)  # type: ignore[arg-type]
