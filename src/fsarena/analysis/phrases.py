"""How results read in prose: ratios with their intervals, 'faster than', ties.

Shared by the verdicts and every report, so a result reads the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fsarena.analysis.ranking import ALPHA, Pair, Ranking
from fsarena.measure.metrics import Metric


def ratio_text(pair: Pair) -> str:
    """'1.32× (1.25–1.40)', or '1.32×' when the interval is unknown."""
    if math.isnan(pair.ratio):
        return "n/a"
    # An exact comparison (deterministic values: capacity) has no interval to show.
    known = not (math.isnan(pair.low) or math.isnan(pair.high) or pair.low == pair.high)
    text = f"{_num(pair.ratio, _digits(pair) if known else 2)}×"
    return f"{text} ({interval_text(pair)})" if known else text


def interval_text(pair: Pair) -> str:
    """'1.20–1.48': a ratio's interval with the decimals ratio_text gives it (never '1.2–1.48')."""
    digits = _digits(pair)
    return f"{_num(pair.low, digits)}–{_num(pair.high, digits)}"


def _digits(pair: Pair) -> int:
    """Decimals of a ratio and its interval: a third when the interval is too narrow for two."""
    return 3 if pair.high - pair.low < 0.02 and pair.ratio < 10 else 2


def number(value: float, digits: int = 3) -> str:
    """A number for people: `digits` significant digits (integer digits are never rounded
    away), one thousands separator (","), never an exponent, trailing zeros dropped."""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value))) + 1
    decimals = min(max(0, digits - magnitude), 12)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _num(x: float, digits: int = 2) -> str:
    if math.isinf(x):
        return "∞"
    return f"{x:.{digits}f}" if x < 100 else f"{x:.0f}"


def metric_word(metric: Metric) -> str:
    """How 'better' reads for a metric: 'faster than', 'less CPU time than', ..."""
    if metric.name == "wall_s":
        return "faster than"
    if metric.better == "lower":
        return f"{'less' if metric.unit == 's' else 'lower'} {metric.label} than"
    return f"higher {metric.label} than"


def names(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def describe(ranking: Ranking, word: str) -> str:
    """One sentence: the winners with their ratios over the rest, or a tie."""
    order = ranking.order
    if len(order) < 2:
        return f"only {names(order) or 'no filesystem'} measured: nothing to compare"
    if ranking.all_tied and max(ranking.n.values(), default=0) < 2:
        # One sample each: no test can tell a difference from noise, so "tie" would overclaim.
        return f"no verdict for {names(sorted(order))}: one repetition each (run -n 3 or more)"
    if ranking.all_tied:
        n = sorted(set(ranking.n.values()))
        return (
            f"tie between {names(sorted(order))}: no difference is significant "
            f"(p ≥ {ALPHA} after Bonferroni over its pairs, n = {'/'.join(map(str, n))})"
        )
    best = order[0]
    behind = [g for g in order if g not in ranking.winners]
    versus = []
    for other in behind:
        pair = ranking.pair(best, other)
        if pair is not None:
            versus.append(_versus(ranking, pair, word, other))
    exact = all(p.low == p.high for p in ranking.pairs)  # deterministic figures: no contest
    if len(ranking.winners) == 1:
        return f"{best}{'' if exact else ' wins'}: {', '.join(versus)}"
    return f"{tied_for_best(ranking, 'tie')}; {best}: " + ", ".join(versus)


def difference_size(relative: float) -> str:
    """24 % below 100 %, then as a factor ('2.5×'): 'a 240 % difference' reads worse."""
    return f"{number(100 * relative, 2)} %" if relative < 1 else f"{number(1 + relative)}×"


def tied_for_best(ranking: Ranking, verb: str = "tied") -> str:
    """'ext2 and ext4 tie for best (no difference above 36 % between them)'.

    A tie for best is a verdict only with the difference it rules out (issue 14):
    the largest one the tied pairs' 95 % intervals leave possible. Without an
    interval (deterministic figures, one repetition) there is none to state.
    """
    lead = f"{names(sorted(ranking.winners))} {verb} for best"
    found = ranking.detectable_difference
    if math.isfinite(found) and found > 0:
        lead += f" (no difference above {difference_size(found)} between them)"
    return lead


def _versus(ranking: Ranking, pair: Pair, word: str, other: str) -> str:
    """'1.32× (1.25–1.40) faster than ext3', or the two estimates when no ratio exists."""
    if math.isnan(pair.ratio):
        best, worse = ranking.estimates[pair.better], ranking.estimates[other]
        return f"{word} {other} ({number(best)} against {number(worse)})"
    return f"{ratio_text(pair)} {word} {other}"
