"""Comparing groups of samples: ratios, Welch's tests, Holm, and rankings. Pure functions.

Comparisons between groups (filesystems, or sessions) in rankings are robust
to this machine's heavy tails (one stalled run can last 4x the others):
- The ratio is the Hodges-Lehmann estimate: exp of the median of all pairwise
  differences of log samples. A stall moves a third of those differences at
  n = 3, never their median; a mean moves with every sample.
- The interval and the test are Welch's t on the logarithms after each group's
  samples are winsorized: a value more than WINSOR_SIGMAS robust standard
  deviations (1.4826 MAD of both groups' residuals) from its group's median
  is pulled in to that limit for the test only. The stored sample and the
  tables keep it as measured, and it is flagged as an outlier; nothing is
  dropped. Welch's t rather than a rank
  test: n is 3 to 10, and an exact Mann-Whitney test cannot reach p < 0.05 at
  n = 3 per group (its smallest two-sided p is 2 / C(6, 3) = 0.1), or pass any
  correction for several comparisons at n = 4, so it could never name a winner
  in a typical run; a bootstrap at n = 3 has 10 distinct resamples per group.
  On logs (timing noise is multiplicative), the difference of log means is the
  log of a ratio, so "significant" and "the interval excludes 1" agree.
- A tie states the smallest difference the run could have detected: the
  interval's farther end ("no difference above 6 %"), Pair.detectable.
Within one family (one task and metric, all pairs of groups) p-values are
adjusted with Holm's step-down method, which bounds the chance of declaring any
false win in the family at alpha (a verdict is a claim a reader acts on; a
false-discovery rate would allow some false wins by design). ratio_test (plain
Welch on logs, ratio of geometric means) stays for cross-session comparisons.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from fsarena.analysis.stats import CONFIDENCE

ALPHA = 0.05  # family-wise error rate of the pairwise tests, after Holm
# Rankings winsorize each group's log samples at this many robust standard
# deviations (pooled over the two groups compared) from the group's median. Chosen
# by simulation (normal log noise, 3000 pairs per n): the false-positive rate of the
# test stays at 3-7 % for n = 3..10 (nominal 5 %), and with one 4x stall in a
# group 30 % faster the difference stays significant in 85-100 % of runs at
# n >= 4 (at n = 3 two runs cannot outvote a stall: the verdict becomes a tie,
# it never flips). Plain Welch loses it at every n.
WINSOR_SIGMAS = 3.0


# ---------------------------------------------------------------- comparing two groups


@dataclass(frozen=True)
class RatioTest:
    """Welch's t-test of two groups, with the ratio a / b and its confidence interval.

    On log samples (all positive): the ratio of geometric means. With zero or
    negative samples: the test on raw values and the ratio of arithmetic means,
    without an interval (low, high are nan).
    """

    ratio: float
    low: float
    high: float
    p_value: float  # nan when a group has fewer than 2 samples
    method: Literal["welch-log", "welch", "exact", "untestable"]


def ratio_test(a: Sequence[float], b: Sequence[float]) -> RatioTest:
    """Compare group a with group b: how many times a is b, and whether they differ."""
    positive = min(a) > 0 and min(b) > 0
    xa = [math.log(v) for v in a] if positive else [float(v) for v in a]
    xb = [math.log(v) for v in b] if positive else [float(v) for v in b]
    ratio = _point_ratio(a, b, positive)
    if len(xa) < 2 or len(xb) < 2:
        return RatioTest(ratio, math.nan, math.nan, math.nan, "untestable")
    if statistics.pvariance(xa) == 0 and statistics.pvariance(xb) == 0:
        # Deterministic values (capacity): equal or different, with certainty.
        p = 1.0 if xa[0] == xb[0] else 0.0
        return RatioTest(ratio, ratio, ratio, p, "exact")
    from scipy import stats as sps

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # near-constant samples: still valid
        result = sps.ttest_ind(xa, xb, equal_var=False)
        interval = result.confidence_interval(CONFIDENCE)
    p = float(result.pvalue)
    if not positive:
        return RatioTest(ratio, math.nan, math.nan, p, "welch")
    return RatioTest(
        ratio, math.exp(float(interval.low)), math.exp(float(interval.high)), p, "welch-log"
    )


def _point_ratio(a: Sequence[float], b: Sequence[float], positive: bool) -> float:
    if positive:
        return math.exp(
            statistics.fmean(math.log(v) for v in a) - statistics.fmean(math.log(v) for v in b)
        )
    mean_b = statistics.fmean(b)
    return statistics.fmean(a) / mean_b if mean_b else math.nan


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (nan counts as 1), in the input's order."""
    m = len(p_values)
    ps = [1.0 if math.isnan(p) else p for p in p_values]
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: ps[k])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


# ---------------------------------------------------------------- ranking groups


@dataclass(frozen=True)
class Pair:
    """One pairwise comparison, oriented so that `better` is the better estimate."""

    better: str
    worse: str
    ratio: float  # how many times better, >= 1 (nan when no ratio is defined)
    low: float  # confidence interval of that ratio (nan when unknown)
    high: float
    p_value: float
    p_adjusted: float
    significant: bool
    # The largest difference the interval leaves possible, as a fraction (0.06: "no
    # difference above 6 %"): max(high, 1 / low) - 1; nan without an interval.
    detectable: float = math.nan


@dataclass(frozen=True)
class Ranking:
    """Groups ordered by estimate, their pairwise tests, and who is as good as the best."""

    order: tuple[str, ...]  # best first
    estimates: Mapping[str, float]  # medians (robust: one stall does not move them)
    n: Mapping[str, int]
    pairs: tuple[Pair, ...]
    winners: tuple[str, ...]  # the best and every group not significantly worse than it

    @property
    def all_tied(self) -> bool:
        return len(self.winners) == len(self.order)

    @property
    def detectable_difference(self) -> float:
        """Among the tied for best: the largest difference their intervals leave possible.

        A fraction (0.06: "no difference above 6 % between them"); 0 with one
        winner, nan when some tied pair has no interval.
        """
        best = self.order[0] if self.order else ""
        found = [p.detectable for g in self.winners if g != best and (p := self.pair(best, g))]
        return max(found, default=0.0)

    def pair(self, a: str, b: str) -> Pair | None:
        for p in self.pairs:
            if {p.better, p.worse} == {a, b}:
                return p
        return None


def _estimate(values: Sequence[float], geometric: bool) -> float:
    """A group's robust centre: the median (unchanged by one stall)."""
    del geometric  # the median of logs is the log of the median: one estimate for both
    return statistics.median(values)


def robust_scale(*groups: Sequence[float]) -> float:
    """Robust standard deviation of the groups' residuals from their own medians (1.4826 MAD).

    Pooled over the groups compared (a filesystem's three runs give too few on
    their own); in a group of odd size the median's own zero residual is left
    out, or it would pull the MAD down.
    """
    residuals: list[float] = []
    for group in groups:
        med = statistics.median(group)
        found = [v - med for v in group]
        if len(found) % 2:
            found.remove(min(found, key=abs))
        residuals += found
    return 1.4826 * statistics.median(abs(r) for r in residuals) if residuals else 0.0


def winsorize(values: Sequence[float], scale: float, sigmas: float = WINSOR_SIGMAS) -> list[float]:
    """Values pulled in to their median +/- sigmas * scale."""
    if scale <= 0 or len(values) < 3:
        return [float(v) for v in values]
    med = statistics.median(values)
    limit = sigmas * scale
    return [min(max(float(v), med - limit), med + limit) for v in values]


def hodges_lehmann(a: Sequence[float], b: Sequence[float]) -> float:
    """The Hodges-Lehmann shift of a over b: the median of all pairwise differences."""
    return statistics.median(x - y for x in a for y in b)


def robust_ratio_test(a: Sequence[float], b: Sequence[float]) -> RatioTest:
    """a / b as a Hodges-Lehmann ratio, with Welch's interval on winsorized logs (see above)."""
    if min(a) <= 0 or min(b) <= 0:
        return ratio_test(a, b)  # no logarithm: the plain test on raw values
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    ratio = math.exp(hodges_lehmann(la, lb))
    scale = robust_scale(la, lb)
    test = ratio_test(
        [math.exp(v) for v in winsorize(la, scale)], [math.exp(v) for v in winsorize(lb, scale)]
    )
    return RatioTest(ratio, test.low, test.high, test.p_value, test.method)


def detectable(low: float, high: float) -> float:
    """The largest difference an interval of a ratio leaves possible, as a fraction."""
    if math.isnan(low) or math.isnan(high) or low <= 0:
        return math.nan
    return max(high, 1 / low) - 1


def rank(
    samples: Mapping[str, Sequence[float]], higher_is_better: bool, alpha: float = ALPHA
) -> Ranking:
    """Rank groups by their samples; a difference counts only when significant after Holm."""
    groups = {name: list(v) for name, v in samples.items() if len(v) > 0}
    geometric = all(min(v) > 0 for v in groups.values())
    estimates = {name: _estimate(v, geometric) for name, v in groups.items()}
    sign = -1.0 if higher_is_better else 1.0
    order = tuple(sorted(groups, key=lambda g: (sign * estimates[g], g)))
    raw = []
    for better, worse in combinations(order, 2):
        # Oriented so the ratio is >= 1: worse/better for lower-is-better metrics.
        test = (
            robust_ratio_test(groups[better], groups[worse])
            if higher_is_better
            else robust_ratio_test(groups[worse], groups[better])
        )
        raw.append((better, worse, test))
    adjusted = holm([t.p_value for _, _, t in raw])
    pairs = tuple(
        Pair(b, w, t.ratio, t.low, t.high, t.p_value, p, p < alpha, detectable(t.low, t.high))
        for (b, w, t), p in zip(raw, adjusted, strict=True)
    )
    best = order[0] if order else ""
    winners = tuple(g for g in order if g == best or not _significant(pairs, best, g))
    return Ranking(
        order=order,
        estimates=estimates,
        n={g: len(v) for g, v in groups.items()},
        pairs=pairs,
        winners=winners,
    )


def _significant(pairs: Sequence[Pair], a: str, b: str) -> bool:
    return any(p.significant for p in pairs if {p.better, p.worse} == {a, b})
