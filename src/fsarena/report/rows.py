"""A comparison's rows: per task a table, per filesystem a row of statistics (data only)."""

from __future__ import annotations

from dataclasses import dataclass

from fsarena.analysis.stats import Summary
from fsarena.measure.metrics import METRICS, Metric


@dataclass(frozen=True)
class Row:
    filesystem: str
    n_ok: int
    n_failed: int
    n_skipped: int
    stats: dict[str, Summary]
    errors: tuple[str, ...] = ()
    n_invalid: int = 0
    outliers: tuple[int, ...] = ()  # repetitions whose headline value is an outlier (MAD)
    unstable: bool = False  # the headline's CI is wider than the target
    unavailable: frozenset[str] = frozenset()  # stored but untrustworthy (session/file.py): "–"


@dataclass(frozen=True)
class TaskTable:
    task: str
    kind: str
    description: str
    timed: bool
    columns: tuple[str, ...]
    rows: tuple[Row, ...]

    def metric(self, name: str) -> Metric:
        return METRICS[name]
