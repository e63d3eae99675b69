"""Which filesystem is best, and by how much at least: comparison with the best, round by
round, with elimination between rounds and one error rate spent where decisions are made.
Pure numpy, vectorized over leading axes: the answer runs it on one session, the
calibration (analysis.calibration) on thousands of simulated ones, the same code.

The question a run answers is "which is best for my workload, and by how much at least",
not "how does every pair compare":
- Claims are one-sided comparisons with the best: "g is faster than f" when f's paired
  t (analysis.blocks: within-round differences of logs, stalls set aside) against g
  passes the boundary. A filesystem shown slower than another still in the running is
  eliminated: in a decisive run it is not measured again, so the rounds go to the
  contenders (fully sequential selection, in the manner of Kim and Nelson 2001).
- The best is known, and the run stops, when one filesystem is left, or when every pair
  left is shown within the threshold of each other (5 % by default: the indifference
  zone), both in the workload (the weighted geometric mean of the weighed kinds, per
  round; the one kind when one is weighed).
- The boundary spends the error where decisions are made: at n rounds of a run that may
  look up to N times, a claim needs a one-sided p below alpha(n) = 1 - Phi(C sqrt(N / n)),
  an O'Brien-Fleming-shaped boundary (O'Brien and Fleming 1979; Lan and DeMets 1983):
  strict at the first looks, when a few rounds could mislead, close to a fixed test at
  the last. A fixed run has one look: alpha = 1 - Phi(C). The same level, as a two-sided
  interval of confidence 1 - 2 alpha(n), decides "within the threshold" (both ends inside
  +-threshold), so a claim and its printed interval cannot disagree.
- C is spent once: calibrated by simulating this very procedure (its filesystems, weighed
  kinds, looks and elimination) under no real difference, so that the chance that the
  run names any false winner, in the recommendation or in any weighed kind, at any look,
  is 5 % (analysis.calibration). Not Bonferroni over correlated families, which spent
  1 % of the 5 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fsarena.analysis.blocks import Array, Cleaned, Paired, paired

Mask = NDArray[np.bool_]
ALPHA = 0.05  # the chance of naming any false winner, over the whole run
SHAPE = 0.5  # the boundary's shape: 0 is Pocock's constant one, 0.5 O'Brien-Fleming's


@dataclass(frozen=True)
class Design:
    """What the error rate is calibrated for: the comparison's size and its looks.

    sequential: a decisive run (looks from `first` to `last` rounds, elimination between
    rounds, a stop once the best is known); else one look, at `last` rounds.
    """

    filesystems: int
    kinds: int
    first: int
    last: int
    sequential: bool

    def key(self) -> str:
        how = f"looks {self.first}-{self.last}" if self.sequential else f"fixed {self.last}"
        return f"{self.filesystems} fs, {self.kinds} kind(s), {how}"


@dataclass(frozen=True)
class Boundary:
    """The critical values of a design: C, and the last look it is scaled to."""

    constant: float
    last: int
    sequential: bool

    def alpha(self, n: NDArray[np.number] | int) -> Array:
        """The one-sided nominal level of a claim resting on n rounds."""
        from scipy import stats as sps

        n = np.maximum(np.asarray(n, dtype=float), 1.0)
        stretch = (self.last / n) ** SHAPE if self.sequential else 1.0
        return np.asarray(sps.norm.sf(self.constant * stretch))

    def critical(self, n: NDArray[np.number] | int, df: Array) -> Array:
        """The t value a claim on n rounds with df degrees of freedom must pass."""
        from scipy import stats as sps

        return np.asarray(sps.t.isf(self.alpha(n), df))


@dataclass(frozen=True)
class Verdicts:
    """Every ordered pair (f, g) of a family at one look, judged at the boundary.

    slower[f, g]: f is shown slower than g (the claim "g is faster than f");
    within[f, g]: the pair is shown within the threshold of each other;
    low, high: the interval of exp(log f - log g), the ratio of f's time to g's.
    """

    stats: Paired
    slower: Mask
    within: Mask
    low: Array
    high: Array


def judge(stats: Paired, boundary: Boundary, threshold: float, floor: float = 0.0) -> Verdicts:
    """The claims and intervals of every pair, each at its own number of rounds.

    floor: the smallest difference the family's measurements can tell (a replayed trace's
    own error, analysis.replay): a claim needs its interval wholly beyond it.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        q = boundary.critical(stats.n, stats.df)
        margin = np.where(stats.se > 0, q * stats.se, 0.0)
        low, high = stats.diff - margin, stats.diff + margin
        enough = stats.n >= 2
        slower = enough & (low > math.log1p(floor))
        bound = math.log1p(threshold)
        within = enough & (low > -bound) & (high < bound)
    return Verdicts(stats, slower, within, np.exp(low), np.exp(np.minimum(high, 700.0)))


def workload(kinds: Cleaned, weights: Array) -> Array:
    """The workload per filesystem and round: the weighted mean of the kinds' cleaned logs
    (their stalls replaced by the fit, so that one stalled kind does not cost the round).

    kinds: the cleaned kinds [..., K, F, R] (log values); weights[K], positive. One kind
    is its own workload, its stalls set aside as in its own comparisons.
    """
    if kinds.kept.shape[-3] == 1:
        return kinds.kept[..., 0, :, :]
    filled = kinds.filled
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    return np.tensordot(np.moveaxis(filled, -3, -1), w, axes=([-1], [0]))


@dataclass
class Race:
    """Who is still in the running, and when each one left (0: never), across looks."""

    alive: Mask  # [..., F]
    dropped_at: NDArray[np.int64]  # [..., F]
    stopped: Mask  # [...]
    stop_at: NDArray[np.int64]  # [...]: the look the run stopped after (0: not yet)
    resolved: Mask = field(default_factory=lambda: np.zeros((), bool))  # [...]

    @classmethod
    def start(cls, shape: tuple[int, ...], filesystems: int) -> Race:
        return cls(
            np.ones((*shape, filesystems), bool),
            np.zeros((*shape, filesystems), np.int64),
            np.zeros(shape, bool),
            np.zeros(shape, np.int64),
            np.zeros(shape, bool),
        )


def best_known(alive: Mask, within: Mask) -> Mask:
    """One filesystem left, or every pair left shown within the threshold."""
    both = alive[..., :, None] & alive[..., None, :]
    eye = np.eye(alive.shape[-1], dtype=bool)
    return np.asarray((alive.sum(-1) == 1) | np.where(both & ~eye, within, True).all((-1, -2)))


def look(
    race: Race,
    work: Array,
    n: int,
    boundary: Boundary,
    threshold: float,
    eliminate: bool,
    last: bool,
) -> Verdicts:
    """One look at n rounds of the workload work[..., F, >= n]: who is shown slower than a
    filesystem still running leaves (eliminate), and the run stops where the best is known
    or at its last look. Runs already stopped are left as they were."""
    verdicts = judge(paired(work[..., :n]), boundary, threshold)
    running = ~race.stopped
    if eliminate:
        beaten = (verdicts.slower & race.alive[..., None, :]).any(-1) & race.alive
        beaten &= running[..., None]
        race.alive = race.alive & ~beaten
        race.dropped_at = np.where(beaten, n, race.dropped_at)
    known = best_known(race.alive, verdicts.within)
    stops = running & (known | last)
    race.resolved = np.where(running, known, race.resolved)
    race.stop_at = np.where(stops, n, race.stop_at)
    race.stopped = race.stopped | stops
    return verdicts
