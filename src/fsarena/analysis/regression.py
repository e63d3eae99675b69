"""The regression gate: did any task get worse from a baseline session to a new one?

What a CI job or a kernel upgrade asks: "is anything slower by more than PCT %,
and is that more than noise?". The answer is a list a log can show and an exit
code a job can act on.

Method, for every (filesystem, task) that both sessions measured successfully:
- the task's headline metric (the first column of its table, as the reports
  judge it), oriented so that a ratio above 1 is worse (more time, fewer
  transactions per second);
- Yuen's test (Welch's t on 20 %-trimmed means with winsorized variances, the
  standard robust form) on the logs of the two groups of samples, one-sided in
  the direction "worse": the sessions' runs are independent samples (no pairing
  across sessions), and this machine's timings are heavy-tailed, so one stall in
  five runs must not decide. The ratio printed is that of the trimmed means,
  the estimator the bound is about;
- Bonferroni over every pair tested: each pair is tested at ALPHA / m. So when
  nothing changed, the chance that the gate fails a job is at most ALPHA (5 %)
  for the whole comparison, however many tasks and filesystems it covers, and
  each regression's printed lower bound holds simultaneously with all the
  others at 95 % confidence;
- a pair is a regression when that lower bound is above 1 (significantly
  worse) AND the point estimate is worse by more than the threshold ("slower
  and significant", as CI gates word it) AND by more than the metric's absolute
  floor (10 ms for times, as everywhere in the reports). A change smaller than
  these never fails a job, however certain.
The false-alarm rate is measured on simulated noise in bench/regression_gate.py
and pinned by tests/unit/test_regression_gate.py.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from fsarena.analysis.adaptive import headline_columns
from fsarena.measure.metrics import METRICS
from fsarena.session.file import Session

ALPHA = 0.05  # the whole gate's false-alarm rate when nothing changed


@dataclass(frozen=True)
class PairChange:
    """One filesystem on one task, new against baseline; ratio > 1 is worse."""

    task: str
    filesystem: str
    metric: str
    n_base: int
    n_new: int
    ratio: float  # new / baseline, oriented: 1.12 is 12 % worse
    lower: float  # simultaneous one-sided 95 % lower bound of ratio (nan: untestable)
    gap: float  # |geometric mean new - baseline| in the metric's raw units

    @property
    def matters(self) -> bool:
        """Above the metric's absolute floor (10 ms for times): below it no job fails."""
        return self.gap > METRICS[self.metric].practical_abs

    @property
    def testable(self) -> bool:
        return not math.isnan(self.lower)

    def worse_by(self) -> float:
        """The point estimate as a fraction: 0.12 is 12 % worse."""
        return self.ratio - 1


@dataclass(frozen=True)
class Gate:
    threshold: float  # a fraction: 0.05 is 5 %
    pairs: tuple[PairChange, ...]

    @property
    def tested(self) -> tuple[PairChange, ...]:
        return tuple(p for p in self.pairs if p.testable)

    @property
    def regressions(self) -> tuple[PairChange, ...]:
        return tuple(
            p for p in self.tested if p.lower > 1 and p.ratio > 1 + self.threshold and p.matters
        )

    @property
    def failed(self) -> bool:
        return bool(self.regressions)


def _oriented_logs(values: Sequence[float], higher_is_better: bool) -> list[float] | None:
    if not values or min(values) <= 0:
        return None
    return [-math.log(v) if higher_is_better else math.log(v) for v in values]


TRIM = 0.2  # Yuen's test: 20 % trimmed from each end, so one stall in five cannot decide


def trimmed(values: Sequence[float]) -> tuple[float, float, int]:
    """Yuen's pieces: the trimmed mean, the winsorized variance and h (values kept)."""
    xs = sorted(values)
    n = len(xs)
    g = int(TRIM * n)
    kept = xs[g : n - g]
    wins = [kept[0]] * g + kept + [kept[-1]] * g
    mean = math.fsum(wins) / n
    variance = math.fsum((x - mean) ** 2 for x in wins) / (n - 1)
    return statistics.fmean(kept), variance, len(kept)


def lower_bound(base: Sequence[float], new: Sequence[float], level: float) -> tuple[float, float]:
    """Yuen–Welch on logs: (trimmed-mean difference new - base, its one-sided lower bound).

    The bound is nan with fewer than two samples kept in a group. Two groups without
    spread give the exact difference as their bound (a deterministic figure).
    """
    if len(base) < 2 or len(new) < 2:
        mb, mn = statistics.fmean(base), statistics.fmean(new)
        return mn - mb, math.nan
    (mb, vb, hb), (mn, vn, hn) = trimmed(base), trimmed(new)
    diff = mn - mb
    db = (len(base) - 1) * vb / (hb * (hb - 1))
    dn = (len(new) - 1) * vn / (hn * (hn - 1))
    se2 = db + dn
    if se2 == 0:
        return diff, diff
    df = se2**2 / (db**2 / (hb - 1) + dn**2 / (hn - 1))
    from scipy import stats as sps

    return diff, diff - float(sps.t.ppf(level, df)) * math.sqrt(se2)


def _samples(session: Session, filesystem: str, task: str, metric: str) -> list[float]:
    return [
        v
        for r in session.runs
        if r.status == "ok" and r.filesystem == filesystem and r.task == task
        if (v := r.value(metric)) is not None
    ]


def gate(base: Session, new: Session, threshold: float, alpha: float = ALPHA) -> Gate:
    """Every (filesystem, task) both sessions measured, tested at alpha / m each."""
    columns = headline_columns(new)
    base_columns = headline_columns(base)
    found: list[tuple[str, str, str, list[float], list[float]]] = []
    for task in new.tasks():
        metric = columns.get(task, [""])[0]
        if metric not in METRICS or base_columns.get(task, [""])[0] != metric:
            continue
        higher = METRICS[metric].better == "higher"
        for fs in new.filesystems():
            b = _oriented_logs(_samples(base, fs, task, metric), higher)
            n = _oriented_logs(_samples(new, fs, task, metric), higher)
            if b is not None and n is not None:
                found.append((task, fs, metric, b, n))
    m = sum(1 for *_, b, n in found if len(b) >= 2 and len(n) >= 2)
    level = 1 - alpha / max(m, 1)
    pairs = []
    for task, fs, metric, b, n in found:
        sign = -1.0 if METRICS[metric].better == "higher" else 1.0
        diff, low = lower_bound(b, n, level)
        center = trimmed(b)[0] if len(b) >= 2 else statistics.fmean(b)
        gap = abs(math.exp(sign * (center + diff)) - math.exp(sign * center))
        pairs.append(
            PairChange(
                task,
                fs,
                metric,
                len(b),
                len(n),
                math.exp(diff),
                math.exp(low) if not math.isnan(low) else math.nan,
                gap,
            )
        )
    return Gate(threshold, tuple(pairs))


def gate_lines(result: Gate, labels: tuple[str, str]) -> list[str]:
    """What a CI log shows: the verdict first, then each regression with its bound."""
    base, new = labels
    tested = result.tested
    untested = len(result.pairs) - len(tested)
    scope = (
        f"{len(tested)} task × filesystem pairs tested (95 % confidence over all of them"
        + (f"; {untested} with fewer than 2 runs on a side not tested" if untested else "")
        + ")"
    )
    pct = f"{result.threshold * 100:g} %"
    if not result.failed:
        return [f"no regression above {pct} from {base} to {new}: {scope}"]
    out = [f"REGRESSION: {len(result.regressions)} above {pct} from {base} to {new}: {scope}"]
    for p in sorted(result.regressions, key=lambda p: -p.ratio):
        metric = METRICS[p.metric]
        word = "slower" if metric.unit == "s" and metric.better == "lower" else "worse"
        out.append(
            f"- {p.task} on {p.filesystem} ({p.metric}): {p.worse_by() * 100:.1f} % {word} "
            f"(at least {(p.lower - 1) * 100:.1f} %; n = {p.n_base} and {p.n_new})"
        )
    return out
