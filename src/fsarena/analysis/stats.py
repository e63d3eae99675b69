"""Statistics over raw samples: pure functions, nothing of fsarena imported.

Statistics are computed when a session is read, never stored. Times are
averaged arithmetically, rates harmonically (a harmonic mean of MB/s equals
total bytes / total time over equal-sized runs, as mmtests does).

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

CONFIDENCE = 0.95
ALPHA = 0.05  # family-wise error rate of the pairwise tests, after Holm
# A sample is an outlier when it lies more than this many robust standard
# deviations (1.4826 MAD) from the median: hyperfine's threshold. Iglewicz and
# Hoaglin's 3.5 suits large samples; at n = 3 the MAD is the smaller of two
# deviations and 3.5 flags about one run in three of plain noise.
OUTLIER_SIGMAS = 10.0
# Rankings winsorize each group's log samples at this many robust standard
# deviations (pooled over the two groups compared) from the group's median. Chosen
# by simulation (normal log noise, 3000 pairs per n): the false-positive rate of the
# test stays at 3-7 % for n = 3..10 (nominal 5 %), and with one 4x stall in a
# group 30 % faster the difference stays significant in 85-100 % of runs at
# n >= 4 (at n = 3 two runs cannot outvote a stall: the verdict becomes a tie,
# it never flips). Plain Welch loses it at every n.
WINSOR_SIGMAS = 3.0

MeanKind = Literal["arithmetic", "harmonic"]


@dataclass(frozen=True)
class Summary:
    """n, centre, spread and a 95 % confidence interval of the mean."""

    n: int
    mean: float
    median: float
    stdev: float  # sample standard deviation (n - 1); 0 when n == 1
    min: float
    max: float
    ci_low: float  # Student's t interval of the mean; equal to the mean when n == 1;
    ci_high: float  # never below 0 when no sample is (the half-width below is not cut)
    ci_half_width: float = 0.0  # half the uncut interval: t * stdev / sqrt(n) for times

    @property
    def cv(self) -> float:
        """Coefficient of variation, stdev / mean (0 when the mean is 0)."""
        return self.stdev / abs(self.mean) if self.mean else 0.0

    @property
    def ci_half_width_rel(self) -> float:
        """CI half-width relative to the mean (inf when unknown: n == 1)."""
        if self.n < 2:
            return math.inf
        return self.ci_half_width / abs(self.mean) if self.mean else 0.0


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Student's t confidence interval of the arithmetic mean."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, mean
    sem = statistics.stdev(values) / math.sqrt(n)
    from scipy import stats as sps  # heavy: loaded only when an interval is computed

    half = float(sps.t.ppf((1 + confidence) / 2, n - 1)) * sem
    return mean - half, mean + half


def harmonic_mean(values: Sequence[float]) -> float:
    if any(v <= 0 for v in values):
        return statistics.fmean(values)  # undefined for non-positive rates: fall back
    return statistics.harmonic_mean(values)


def summarize(values: Sequence[float], mean_kind: MeanKind = "arithmetic") -> Summary:
    """Summary of raw samples; raises ValueError on an empty list."""
    if not values:
        raise ValueError("no samples to summarize")
    data = [float(v) for v in values]
    mean = harmonic_mean(data) if mean_kind == "harmonic" else statistics.fmean(data)
    low, high = t_interval(data)
    if mean_kind == "harmonic" and len(data) >= 2 and all(v > 0 for v in data):
        # CI of a harmonic mean: the t interval of 1/x, inverted.
        inv_low, inv_high = t_interval([1 / v for v in data])
        low = 1 / inv_high if inv_high > 0 else 0.0
        high = 1 / inv_low if inv_low > 0 else math.inf
    half_width = (high - low) / 2
    if low < 0 <= min(data):
        # A time or a size is never negative: a t interval reaching below zero
        # (wide spread, small n) is cut at zero rather than printed as "-0.4 s".
        low = 0.0
    return Summary(
        n=len(data),
        mean=mean,
        median=statistics.median(data),
        stdev=statistics.stdev(data) if len(data) > 1 else 0.0,
        min=min(data),
        max=max(data),
        ci_low=low,
        ci_high=high,
        ci_half_width=half_width,
    )


# ---------------------------------------------------------------- outliers


def outliers(values: Sequence[float], threshold: float = OUTLIER_SIGMAS) -> tuple[int, ...]:
    """Indices of samples far from the median (flagged, never dropped).

    The score is |x - median| / (1.4826 MAD), a robust z-score. When more than
    half the samples are equal the MAD is 0; the mean absolute deviation scaled
    by 1.2533 (its ratio to the standard deviation for normal data) stands in.
    """
    if len(values) < 3:
        return ()
    med = statistics.median(values)
    deviations = [abs(v - med) for v in values]
    mad = statistics.median(deviations)
    if mad > 0:
        scores = [d / (1.4826 * mad) for d in deviations]
    else:
        mean_ad = statistics.fmean(deviations)
        if mean_ad == 0:
            return ()
        scores = [d / (1.2533 * mean_ad) for d in deviations]
    return tuple(i for i, z in enumerate(scores) if z > threshold)


# ---------------------------------------------------------------- precision


def _relative_spread(values: Sequence[float], mean_kind: MeanKind) -> float:
    """CV of the values the interval is computed on (1/x for a harmonic mean)."""
    data = [1 / v for v in values] if mean_kind == "harmonic" and min(values) > 0 else values
    mean = statistics.fmean(data)
    return statistics.stdev(data) / abs(mean) if mean else 0.0


def repetitions_for(
    values: Sequence[float],
    target_rel: float,
    mean_kind: MeanKind = "arithmetic",
    max_n: int = 1000,
) -> int | None:
    """How many samples would bring the CI half-width to target_rel of the mean, at this spread.

    An estimate (the spread itself is uncertain at small n); None when fewer
    than 2 samples give no spread, max_n when even max_n would not do.
    """
    if len(values) < 2:
        return None
    return _n_for_cv(_relative_spread(values, mean_kind), target_rel, max_n)


def _n_for_cv(cv: float, target_rel: float, max_n: int = 1000) -> int:
    """The smallest n whose t interval half-width, t(n-1) * cv / sqrt(n), is within target."""
    from scipy import stats as sps

    for n in range(2, max_n + 1):
        if float(sps.t.ppf((1 + CONFIDENCE) / 2, n - 1)) * cv / math.sqrt(n) <= target_rel:
            return n
    return max_n


def needs_more_repetitions(
    values: Sequence[float],
    target_rel: float,
    mean_kind: MeanKind = "arithmetic",
    min_n: int = 3,
) -> bool:
    """Whether another repetition is needed to reach a CI half-width of target_rel of the mean.

    For adaptive repetitions: called after each round with a task's samples;
    fewer than min_n samples (at least 2, for a spread) always need more.
    """
    if len(values) < max(2, min_n):
        return True
    return summarize(values, mean_kind).ci_half_width_rel > target_rel


UNSTABLE_ADVICE = (
    "Make each run longer (a larger --scale) so process start-up, timer noise and short "
    "stalls weigh less; stop background work (cron, updates, indexers, other benchmarks) or "
    "use an idle machine; add repetitions (--repetitions, or --target-ci with "
    "--max-repetitions / --time-budget)."
)
SHORT_RUN_S = 1.0  # runs shorter than this are dominated by fixed costs


def instability(subject: str, summary: Summary, target_rel: float) -> str:
    """What is unstable about a result, in numbers: its interval, spread and the n needed."""
    if summary.n < 2:
        return f"{subject}: a single run, no interval (target ±{100 * target_rel:.0f} %)"
    rel = summary.ci_half_width_rel
    # A harmonic mean's interval is unbounded when the one of 1/x reaches zero.
    width = f"±{100 * rel:.1f} %" if math.isfinite(rel) else "unbounded"
    text = (
        f"{subject}: 95 % CI of the mean {width} "
        f"(target ±{100 * target_rel:.0f} %), CV {100 * summary.cv:.0f} %, n = {summary.n}"
    )
    need = _n_for_cv(summary.cv, target_rel)
    if need > summary.n:
        text += f"; about {need} repetitions would reach the target at this spread"
    return text


def unstable_advice(
    subject: str, summary: Summary, target_rel: float, run_s: float | None = None
) -> str:
    """The whole warning for a result wider than the target: the numbers and what to do."""
    text = f"unstable: {instability(subject, summary, target_rel)}."
    if run_s is not None and run_s < SHORT_RUN_S:
        text += f" Each run lasts only {1000 * run_s:.0f} ms."
    return f"{text} {UNSTABLE_ADVICE}"


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
