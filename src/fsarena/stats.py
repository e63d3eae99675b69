"""Descriptive statistics over raw samples: pure functions, nothing of fsarena imported.

Statistics are computed when a session is read, never stored. Times are
averaged arithmetically, rates harmonically (a harmonic mean of MB/s equals
total bytes / total time over equal-sized runs, as mmtests does).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scipy import stats as sps


@dataclass(frozen=True)
class Summary:
    """n, centre, spread and a 95 % confidence interval of the mean."""

    n: int
    mean: float
    median: float
    stdev: float  # sample standard deviation (n - 1); 0 when n == 1
    min: float
    max: float
    ci_low: float  # Student's t interval of the mean; equal to the mean when n == 1
    ci_high: float

    @property
    def cv(self) -> float:
        """Coefficient of variation, stdev / mean (0 when the mean is 0)."""
        return self.stdev / abs(self.mean) if self.mean else 0.0

    @property
    def ci_half_width_rel(self) -> float:
        """CI half-width relative to the mean (inf when unknown: n == 1)."""
        if self.n < 2:
            return math.inf
        return (self.ci_high - self.ci_low) / 2 / abs(self.mean) if self.mean else 0.0


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Student's t confidence interval of the arithmetic mean."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, mean
    sem = statistics.stdev(values) / math.sqrt(n)
    half = float(sps.t.ppf((1 + confidence) / 2, n - 1)) * sem
    return mean - half, mean + half


def harmonic_mean(values: Sequence[float]) -> float:
    if any(v <= 0 for v in values):
        return statistics.fmean(values)  # undefined for non-positive rates: fall back
    return statistics.harmonic_mean(values)


def summarize(
    values: Sequence[float], mean_kind: Literal["arithmetic", "harmonic"] = "arithmetic"
) -> Summary:
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
    return Summary(
        n=len(data),
        mean=mean,
        median=statistics.median(data),
        stdev=statistics.stdev(data) if len(data) > 1 else 0.0,
        min=min(data),
        max=max(data),
        ci_low=low,
        ci_high=high,
    )
