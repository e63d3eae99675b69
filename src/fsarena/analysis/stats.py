"""Statistics of one group of raw samples: summaries, outliers, precision. Pure functions.

Statistics are computed when a session is read, never stored. Times are
averaged arithmetically, rates harmonically (a harmonic mean of MB/s equals
total bytes / total time over equal-sized runs, as mmtests does). Comparing
groups (ratios, tests, rankings) is in analysis.ranking.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

CONFIDENCE = 0.95
# A ratio's interval spanning more than this factor (high / low) says nothing about the
# ratio (two runs of a noisy task): readable outputs say so instead of printing its
# bounds; CSV and JSON keep them. The fleet report and the aged tables use it.
TOO_WIDE = 100.0
# A sample is an outlier when it lies more than this many robust standard
# deviations (1.4826 MAD) from the median: hyperfine's threshold. Iglewicz and
# Hoaglin's 3.5 suits large samples; at n = 3 the MAD is the smaller of two
# deviations and 3.5 flags about one run in three of plain noise.
OUTLIER_SIGMAS = 10.0

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


def n_for_cv(cv: float, target_rel: float, max_n: int = 1000) -> int:
    """The smallest n whose t interval half-width, t(n-1) * cv / sqrt(n), is within target."""
    from scipy import stats as sps

    for n in range(2, max_n + 1):
        if float(sps.t.ppf((1 + CONFIDENCE) / 2, n - 1)) * cv / math.sqrt(n) <= target_rel:
            return n
    return max_n


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
    need = n_for_cv(summary.cv, target_rel)
    if need > summary.n:
        text += f"; about {need} repetitions would reach the target at this spread"
    return text
