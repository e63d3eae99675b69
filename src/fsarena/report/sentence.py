"""One task's verdict in one sentence, with the metric's practical threshold applied.

phrases.describe says who is significantly better; a person also needs to know
whether it matters. A win whose difference is under the metric's practical
threshold (measure.METRICS: practical_rel and practical_abs) reads "no
practical difference" with the two figures; a deterministic percentage
(capacity) differs in percentage points, with no interval (it has none).
"""

from __future__ import annotations

import math

from fsarena.analysis.evidence import TaskResult
from fsarena.analysis.phrases import describe, metric_word, names, number
from fsarena.analysis.ranking import Pair, Ranking
from fsarena.measure.metrics import METRICS, Metric
from fsarena.report.units import value_text


def matters(metric: Metric, better: float, worse: float) -> bool:
    """Whether the difference between two estimates exceeds the metric's practical threshold."""
    gap = abs(better - worse)
    base = min(abs(better), abs(worse))
    relative = gap / base if base else math.inf
    return relative > metric.practical_rel and gap > metric.practical_abs


def _behind(ranking: Ranking) -> list[Pair]:
    best = ranking.order[0]
    return [p for fs in ranking.order if fs not in ranking.winners if (p := ranking.pair(best, fs))]


def _exact_points(ranking: Ranking, metric: Metric) -> str:
    """'ext4: 8.61 percentage points more capacity than xfs (84.7 % against 76.1 %)'."""
    best, est = ranking.order[0], ranking.estimates
    parts = [
        f"{number(abs(est[best] - est[p.worse]))} percentage points more {metric.label} than "
        f"{p.worse} ({number(est[best])} % against {number(est[p.worse])} %)"
        for p in _behind(ranking)
    ]
    lead = best if len(ranking.winners) == 1 else f"{names(sorted(ranking.winners))} tie for best"
    return f"{lead}: {', '.join(parts)}"


def task_sentence(result: TaskResult) -> str:
    """The verdict on one task and metric, as every report prints it."""
    metric, ranking = METRICS[result.metric], result.ranking
    if len(ranking.order) >= 2 and not ranking.all_tied:
        best, est = ranking.order[0], ranking.estimates
        behind = _behind(ranking)
        if behind and not any(matters(metric, est[best], est[p.worse]) for p in behind):
            figures = ", ".join(f"{fs} {value_text(metric, est[fs])}" for fs in ranking.order)
            return f"no practical difference ({figures}; {threshold_text(metric)})"
        if metric.exact and metric.unit == "%":
            return _exact_points(ranking, metric)
    return describe(ranking, metric_word(metric))


def threshold_text(metric: Metric) -> str:
    """The practical threshold in words: 'a difference must exceed 5 % and 100 major faults'."""
    parts = [f"{number(100 * metric.practical_rel)} %"] if metric.practical_rel else []
    if metric.practical_abs:
        size = value_text(metric, metric.practical_abs)
        parts.append(size if metric.unit else f"{size} {metric.label}")
    return f"a difference must exceed {' and '.join(parts) or 'zero'} to matter"
