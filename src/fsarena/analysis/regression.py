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
What the gate could have seen is said before its verdict: for every pair tested, the
smallest slowdown its own test finds with POWER (80 %) at its own level (ALPHA / m,
one-sided), at these repetitions and this spread. It is the standard minimum
detectable effect of a t test: on the log scale, (t(1 - ALPHA / m, df) + t(POWER,
df)) × se, with se and Welch's df from the two groups' winsorized variances, as the
test computes them. A gate that tested nothing, or that could not have found a
slowdown of the size it was asked about on some pair, has not passed: it is
INCONCLUSIVE, with its own exit code.
The false-alarm rate is measured on simulated noise in bench/regression_gate.py
and pinned by tests/unit/test_regression_gate.py, as is the detectable slowdown.
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
POWER = 0.80  # the detectable slowdown is the one the gate's test finds this often

# How a gate ends (`fsarena compare --fail-on-regression`): 0 no regression, and every pair
# could show one of the size asked for; 1 a regression; INCONCLUSIVE: nothing tested, or
# some pair could not have shown a slowdown of the size asked for (a pass it cannot vouch
# for). 2 is bad input, as everywhere.
INCONCLUSIVE = 4


@dataclass(frozen=True)
class PairChange:
    """One filesystem on one task, new against baseline; ratio > 1 is worse."""

    task: str
    filesystem: str
    metric: str
    n_base: int
    n_new: int
    ratio: float  # new / baseline, oriented: 1.12 is 12 % worse (nan: not measured in both)
    lower: float  # simultaneous one-sided 95 % lower bound of ratio (nan: untestable)
    gap: float  # |geometric mean new - baseline| in the metric's raw units
    # The smallest slowdown (a fraction: 0.3 is 30 %) the test finds with POWER at its
    # level, at these n and this spread (nan: untestable; 0: no spread at all).
    detectable: float = math.nan
    untested: str = ""  # why the pair was not tested ("" when it was)

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
    level: float = 1 - ALPHA  # each test's one-sided confidence (1 - ALPHA / m)

    @property
    def tested(self) -> tuple[PairChange, ...]:
        return tuple(p for p in self.pairs if p.testable)

    @property
    def regressions(self) -> tuple[PairChange, ...]:
        return tuple(
            p for p in self.tested if p.lower > 1 and p.ratio > 1 + self.threshold and p.matters
        )

    @property
    def blind(self) -> tuple[PairChange, ...]:
        """Pairs tested that could not have shown a slowdown of the threshold (with POWER)."""
        return tuple(p for p in self.tested if p.detectable > self.threshold)

    @property
    def failed(self) -> bool:
        return bool(self.regressions)

    @property
    def inconclusive(self) -> bool:
        """No regression, but no pass either: nothing tested, or some pair blind to PCT."""
        return not self.failed and (not self.tested or bool(self.blind))

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else INCONCLUSIVE if self.inconclusive else 0


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


def _yuen(base: Sequence[float], new: Sequence[float]) -> tuple[float, float, float]:
    """Yuen–Welch on logs: (trimmed-mean difference new - base, its standard error, df).

    Standard error 0 (and df inf) for two groups without spread.
    """
    (mb, vb, hb), (mn, vn, hn) = trimmed(base), trimmed(new)
    db = (len(base) - 1) * vb / (hb * (hb - 1))
    dn = (len(new) - 1) * vn / (hn * (hn - 1))
    se2 = db + dn
    if se2 == 0:
        return mn - mb, 0.0, math.inf
    df = se2**2 / (db**2 / (hb - 1) + dn**2 / (hn - 1))
    return mn - mb, math.sqrt(se2), df


def lower_bound(base: Sequence[float], new: Sequence[float], level: float) -> tuple[float, float]:
    """Yuen–Welch on logs: (trimmed-mean difference new - base, its one-sided lower bound).

    The bound is nan with fewer than two samples kept in a group. Two groups without
    spread give the exact difference as their bound (a deterministic figure).
    """
    if len(base) < 2 or len(new) < 2:
        mb, mn = statistics.fmean(base), statistics.fmean(new)
        return mn - mb, math.nan
    diff, se, df = _yuen(base, new)
    if se == 0:
        return diff, diff
    from scipy import stats as sps

    return diff, diff - float(sps.t.ppf(level, df)) * se


def detectable(
    base: Sequence[float], new: Sequence[float], level: float, power: float = POWER
) -> float:
    """The slowdown (a fraction) the one-sided test at `level` finds with `power`, at these
    n and this spread: exp((t(level, df) + t(power, df)) × se) - 1 (nan: untestable)."""
    if len(base) < 2 or len(new) < 2:
        return math.nan
    _, se, df = _yuen(base, new)
    if se == 0:
        return 0.0
    from scipy import stats as sps

    return math.expm1((float(sps.t.ppf(level, df)) + float(sps.t.ppf(power, df))) * se)


def _samples(session: Session, filesystem: str, task: str, metric: str) -> list[float]:
    return [
        v
        for r in session.runs
        if r.status == "ok" and r.filesystem == filesystem and r.task == task
        if (v := r.value(metric)) is not None
    ]


Found = tuple[str, str, str, list[float] | None, list[float], str]


def _found(base: Session, new: Session) -> list[Found]:
    """Every (task, filesystem) NEW measured: its metric, both sides' oriented logs, and why
    it cannot be tested ("" when it can)."""
    columns, base_columns = headline_columns(new), headline_columns(base)
    base_filesystems = set(base.filesystems())
    found: list[Found] = []
    for task in new.tasks():
        metric = columns.get(task, [""])[0]
        if metric not in METRICS:
            continue
        higher = METRICS[metric].better == "higher"
        for fs in new.filesystems():
            n = _oriented_logs(_samples(new, fs, task, metric), higher)
            if n is None:
                continue  # NEW did not measure it: nothing to gate
            b = _oriented_logs(_samples(base, fs, task, metric), higher)
            why = ""
            if task not in base.tasks() or fs not in base_filesystems:
                why = "not in BASE"
            elif base_columns.get(task, [""])[0] != metric:
                why = "judged on another metric in BASE"
            elif b is None:
                why = "no successful run in BASE"
            elif len(b) < 2 or len(n) < 2:
                why = "fewer than 2 successful runs on a side"
            found.append((task, fs, metric, b, n, why))
    return found


def gate(base: Session, new: Session, threshold: float, alpha: float = ALPHA) -> Gate:
    """Every (filesystem, task) both sessions measured, tested at alpha / m each."""
    found = _found(base, new)
    m = sum(1 for *_, why in found if not why)
    level = 1 - alpha / max(m, 1)
    pairs = [_pair(task, fs, metric, b, n, why, level) for task, fs, metric, b, n, why in found]
    return Gate(threshold, tuple(pairs), level)


# Why a pair of NEW has nothing to be compared with in BASE (no test, no estimate).
UNMATCHED = ("not in BASE", "judged on another metric in BASE", "no successful run in BASE")


def _pair(
    task: str,
    fs: str,
    metric: str,
    b: list[float] | None,
    n: list[float],
    why: str,
    level: float,
) -> PairChange:
    if b is None or why in UNMATCHED:
        nan = math.nan
        return PairChange(task, fs, metric, len(b or []), len(n), nan, nan, 0.0, untested=why)
    sign = -1.0 if METRICS[metric].better == "higher" else 1.0
    diff, low = lower_bound(b, n, level)
    center = trimmed(b)[0] if len(b) >= 2 else statistics.fmean(b)
    gap = abs(math.exp(sign * (center + diff)) - math.exp(sign * center))
    bound = math.exp(low) if not math.isnan(low) else math.nan
    return PairChange(
        task, fs, metric, len(b), len(n), math.exp(diff), bound, gap,
        detectable(b, n, level), why,
    )  # fmt: skip


def _pct(fraction: float) -> str:
    value = 100 * fraction
    return f"{value:.1f} %" if value < 10 else f"{value:,.0f} %"


def _where(p: PairChange) -> str:
    return f"{p.task} on {p.filesystem}"


def _ns(pairs: Sequence[PairChange]) -> str:
    """The repetitions a side, as "n = 3 and 3" (or ranges where pairs differ)."""

    def span(values: set[int]) -> str:
        return str(min(values)) if len(values) == 1 else f"{min(values)}-{max(values)}"

    return f"n = {span({p.n_base for p in pairs})} and {span({p.n_new for p in pairs})}"


def scope_line(result: Gate) -> str:
    """What was tested, at which level, and what was not, with why."""
    tested, untested = result.tested, [p for p in result.pairs if not p.testable]
    line = (
        f"tested: {len(tested)} task × filesystem pairs, each one-sided at "
        f"{(1 - result.level) * 100:.3g} % (95 % confidence over all of them)"
    )
    if untested:
        reasons: dict[str, int] = {}
        for p in untested:
            reasons[p.untested or "untestable"] = reasons.get(p.untested or "untestable", 0) + 1
        said = ", ".join(f"{n} {why}" for why, n in reasons.items())
        line += f"; not tested: {len(untested)} ({said})"
    return line


def detectable_line(result: Gate) -> str:
    """The smallest slowdown the gate could have found, said before its verdict."""
    tested = sorted(result.tested, key=lambda p: p.detectable)
    if not tested:
        return "detectable: nothing (no pair was tested)"
    middle, best, worst = tested[len(tested) // 2], tested[0], tested[-1]
    line = (
        f"detectable: at {_ns(tested)} and this spread, the gate finds a slowdown of "
        f"{_pct(middle.detectable)} on the median pair ({POWER * 100:.0f} % power at its level)"
    )
    if len(tested) > 1:
        line += (
            f"; {_pct(best.detectable)} at best ({_where(best)}), "
            f"{_pct(worst.detectable)} at worst ({_where(worst)})"
        )
    return line


def gate_lines(result: Gate, labels: tuple[str, str]) -> list[str]:
    """What a CI log shows: what was tested and could be seen, then the verdict, then each
    regression with its bound (or each pair too noisy for the threshold)."""
    base, new = labels
    pct = f"{result.threshold * 100:g} %"
    out = [scope_line(result), detectable_line(result)]
    if result.failed:
        out.append(f"REGRESSION: {len(result.regressions)} above {pct} from {base} to {new}")
        for p in sorted(result.regressions, key=lambda p: -p.ratio):
            metric = METRICS[p.metric]
            word = "slower" if metric.unit == "s" and metric.better == "lower" else "worse"
            out.append(
                f"- {_where(p)} ({p.metric}): {p.worse_by() * 100:.1f} % {word} "
                f"(at least {(p.lower - 1) * 100:.1f} %; n = {p.n_base} and {p.n_new})"
            )
        return out
    if not result.tested:
        out.append(
            f"INCONCLUSIVE: nothing was tested from {base} to {new}: no task × filesystem "
            f"pair has 2 or more successful runs in both; this gate vouches for nothing"
        )
        return out
    if result.blind:
        blind = sorted(result.blind, key=lambda p: -p.detectable)
        out.append(
            f"INCONCLUSIVE: no regression above {pct} from {base} to {new}, but "
            f"{len(blind)} of {len(result.tested)} pairs could not have shown a {pct} "
            f"slowdown ({POWER * 100:.0f} % power): more repetitions on both sides, or a larger "
            "--fail-on-regression, would"
        )
        out += [f"- {_where(p)}: {_pct(p.detectable)} or more" for p in blind[:5]]
        if len(blind) > 5:
            out.append(f"- and {len(blind) - 5} more")
        return out
    out.append(f"no regression above {pct} from {base} to {new}")
    return out
