"""Comparing groups of samples: ratios, Yuen-Welch tests, Bonferroni, rankings. Pure functions.

Comparisons between groups (filesystems, or sessions) in rankings are robust
to this machine's heavy tails (one stalled run can last 4x the others):
- The test, the ratio and its interval are one estimator's: Yuen's trimmed
  t-test on the logarithms (Yuen 1974; Wilcox, "Introduction to Robust
  Estimation and Hypothesis Testing"): the ratio is exp of the difference of
  the groups' 20 % trimmed means, its interval uses the winsorized variances
  and Welch's degrees of freedom with h - 1 per group (h: values kept after
  trimming). The printed ratio is always inside its printed interval. At n = 3
  and 4 nothing is trimmed (floor(0.2 n) = 0): a stall there widens the
  interval, so it can turn a win into a tie, never a tie into a win.
  Stored samples and tables keep every value as measured.
  Yuen-Welch rather than a rank test: n is 3 to 10, and an exact Mann-Whitney
  test cannot reach p < 0.05 at n = 3 per group (its smallest two-sided p is
  2 / C(6, 3) = 0.1). On logs (timing noise is multiplicative), a difference of
  log means is the log of a ratio, so "significant" and "the interval excludes
  1" agree.
- A tie states the largest difference the run leaves possible: the interval's
  farther end ("no difference above 6 %"), Pair.detectable.
Within one family (all pairs of groups on one task and metric, or one kind)
the tests are Bonferroni-adjusted and the intervals widened to match, which
bounds the chance of declaring any false win in the family at alpha (a verdict
is a claim a reader acts on). ratio_test (plain Welch on logs, ratio of
geometric means) stays for cross-session comparisons.
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

ALPHA = 0.05  # family-wise error rate of the pairwise tests (Bonferroni within a family)
# Yuen's test trims this fraction of each group's log samples at each end (floor(0.2 n):
# none at n = 3-4, one at n = 5-9, two at n = 10-14): the standard choice (Wilcox).
TRIM = 0.2


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
    method: Literal["welch-log", "yuen-log", "welch", "exact", "untestable"]


def ratio_test(a: Sequence[float], b: Sequence[float]) -> RatioTest:
    """Compare group a with group b: how many times a is b, and whether they differ."""
    positive = min(a) > 0 and min(b) > 0
    xa = [math.log(v) for v in a] if positive else [float(v) for v in a]
    xb = [math.log(v) for v in b] if positive else [float(v) for v in b]
    ratio = point_ratio(a, b)
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


def point_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """How many times a is b: the ratio of their geometric means (of their means where a value
    is not positive): ratio_test's estimate, without its test (no scipy)."""
    if min(a) > 0 and min(b) > 0:
        return math.exp(
            statistics.fmean(math.log(v) for v in a) - statistics.fmean(math.log(v) for v in b)
        )
    mean_b = statistics.fmean(b)
    return statistics.fmean(a) / mean_b if mean_b else math.nan


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
    estimates: Mapping[str, float]  # 20 % trimmed (geometric) means: the ratios' own centres
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
        found = [
            p.detectable
            for a, b in combinations(self.winners, 2)
            if (p := self.pair(a, b)) is not None
        ]
        return max(found, default=0.0)

    def pair(self, a: str, b: str) -> Pair | None:
        for p in self.pairs:
            if {p.better, p.worse} == {a, b}:
                return p
        return None


def _estimate(values: Sequence[float], geometric: bool) -> float:
    """A group's centre, the one its ratios use: the 20 % trimmed mean (of logs when positive)."""
    if geometric:
        return math.exp(trimmed([math.log(v) for v in values]).mean)
    return trimmed(values).mean


@dataclass(frozen=True)
class Trimmed:
    """One group's 20 % trimmed mean and the squared standard error Yuen's test gives it."""

    mean: float
    d: float  # (n - 1) * winsorized variance / (h * (h - 1))
    h: int  # the values left after trimming


def trimmed(values: Sequence[float], trim: float = TRIM) -> Trimmed:
    """The trimmed mean of VALUES (g = floor(trim * n) cut at each end) and its Yuen variance."""
    xs = sorted(float(v) for v in values)
    n = len(xs)
    g = int(trim * n)
    h = n - 2 * g
    kept = xs[g : n - g]
    winsorized = [xs[g]] * g + kept + [xs[n - g - 1]] * g
    var = statistics.variance(winsorized) if n > 1 else math.nan
    return Trimmed(statistics.fmean(kept), (n - 1) * var / (h * (h - 1)) if h > 1 else math.nan, h)


def yuen_test(
    xa: Sequence[float], xb: Sequence[float], confidence: float = CONFIDENCE
) -> RatioTest:
    """Yuen-Welch test of log samples: a / b as exp(difference of 20 % trimmed means).

    The interval is the same estimator's (Yuen 1974: winsorized variances, Welch's
    degrees of freedom with h - 1 per group), so the ratio always lies inside it.
    """
    from scipy import stats as sps

    ta, tb = trimmed(xa), trimmed(xb)
    diff = ta.mean - tb.mean
    if ta.h < 2 or tb.h < 2:
        return RatioTest(math.exp(diff), math.nan, math.nan, math.nan, "untestable")
    se2 = ta.d + tb.d
    if se2 == 0:
        p = 1.0 if diff == 0 else 0.0
        return RatioTest(math.exp(diff), math.exp(diff), math.exp(diff), p, "exact")
    df = se2**2 / (ta.d**2 / (ta.h - 1) + tb.d**2 / (tb.h - 1))
    se = math.sqrt(se2)
    p = float(2 * sps.t.sf(abs(diff) / se, df))
    q = float(sps.t.ppf(1 - (1 - confidence) / 2, df))
    return RatioTest(math.exp(diff), _exp(diff - q * se), _exp(diff + q * se), p, "yuen-log")


def _exp(x: float) -> float:
    """exp, infinite past a float's range: at n = 2 and a strict level (df near 1) the
    interval's end can be beyond any ratio (seen in a real default run: an OverflowError)."""
    return math.exp(x) if x < 700 else math.inf


def robust_ratio_test(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> RatioTest:
    """a / b by Yuen's trimmed test on logs (see above); raw Welch when a value is not positive."""
    if min(a) <= 0 or min(b) <= 0:
        return ratio_test(a, b)  # no logarithm: the plain test on raw values
    return yuen_test([math.log(v) for v in a], [math.log(v) for v in b], confidence)


def detectable(low: float, high: float) -> float:
    """The largest difference an interval of a ratio leaves possible, as a fraction
    (infinite when an end is beyond a float's range; nan without an interval)."""
    if math.isnan(low) or math.isnan(high):
        return math.nan
    if low <= 0:
        return math.inf
    return max(high, 1 / low) - 1


def rank(
    samples: Mapping[str, Sequence[float]], higher_is_better: bool, alpha: float = ALPHA
) -> Ranking:
    """Rank groups by their samples; a difference counts only when significant at ALPHA overall.

    Bonferroni over the family's pairs: each pair is tested at alpha / m and its
    interval has confidence 1 - alpha / m, so "significant" and "the interval
    excludes 1" agree, and a tie's stated bound holds for all pairs at once.
    Callers that spend their error rate over more families (kinds, looks) pass
    their share as ALPHA.
    """
    groups = {name: list(v) for name, v in samples.items() if len(v) > 0}
    geometric = all(min(v) > 0 for v in groups.values())
    estimates = {name: _estimate(v, geometric) for name, v in groups.items()}
    sign = -1.0 if higher_is_better else 1.0
    order = tuple(sorted(groups, key=lambda g: (sign * estimates[g], g)))
    m = max(1, len(order) * (len(order) - 1) // 2)
    level = alpha / m
    raw = []
    for better, worse in combinations(order, 2):
        # Oriented so the ratio is >= 1: worse/better for lower-is-better metrics.
        test = (
            robust_ratio_test(groups[better], groups[worse], 1 - level)
            if higher_is_better
            else robust_ratio_test(groups[worse], groups[better], 1 - level)
        )
        raw.append((better, worse, test))
    pairs = tuple(
        Pair(b, w, t.ratio, t.low, t.high, t.p_value, _bonferroni(t.p_value, m),
             _bonferroni(t.p_value, m) < alpha, detectable(t.low, t.high))
        for b, w, t in raw
    )  # fmt: skip
    best = order[0] if order else ""
    winners = tuple(g for g in order if g == best or not _significant(pairs, best, g))
    return Ranking(
        order=order,
        estimates=estimates,
        n={g: len(v) for g, v in groups.items()},
        pairs=pairs,
        winners=winners,
    )


def _bonferroni(p: float, m: int) -> float:
    return 1.0 if math.isnan(p) else min(1.0, p * m)


def _significant(pairs: Sequence[Pair], a: str, b: str) -> bool:
    return any(p.significant for p in pairs if {p.better, p.worse} == {a, b})
