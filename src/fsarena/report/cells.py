"""The cells of a task's table, for people: one unit per column, three significant digits.

Shared by the text, Markdown and HTML exporters. The headline metric of a timed
task carries its spread (mean ± sd and min–max in text; mean, 95 % CI, CV and
min–max in HTML); a deterministic metric (measure.METRICS exact: capacity) is
shown as measured, with no spread, interval or flag, since it has none.
"""

from __future__ import annotations

import math

from fsarena.measure.metrics import METRICS, Metric
from fsarena.report.comparison import Row, TaskTable, row_flags
from fsarena.report.flags import pct_text
from fsarena.report.units import Unit, column_unit

DASH = "–"


def units(table: TaskTable) -> dict[str, Unit]:
    """Per column, the unit its rows' means call for."""
    return {
        name: column_unit(
            METRICS[name], [r.stats[name].mean for r in table.rows if name in r.stats]
        )
        for name in table.columns
    }


def header(metric: Metric, unit: Unit) -> str:
    return f"{metric.label} ({unit.label})" if unit.label else metric.label


def spread(table: TaskTable) -> bool:
    """Whether the headline column carries a spread: timed and not deterministic."""
    return table.timed and not METRICS[table.columns[0]].exact


def _n(row: Row) -> str:
    not_ok = [
        f"{count} {label}"
        for count, label in (
            (row.n_failed, "failed"),
            (row.n_invalid, "invalid"),
            (row.n_skipped, "skipped"),
        )
        if count
    ]
    return f"{row.n_ok} ({', '.join(not_ok)})" if not_ok else str(row.n_ok)


def _mean(row: Row, name: str, unit: Unit) -> str:
    s = row.stats.get(name)
    return unit.text(s.mean) if s is not None else DASH


def _range(row: Row, name: str, unit: Unit) -> str:
    s = row.stats.get(name)
    return f"{unit.text(s.min)}–{unit.text(s.max)}" if s is not None else DASH


def _with_flags(
    table: TaskTable, headers: list[str], rows: list[list[str]]
) -> tuple[list[str], list[list[str]]]:
    flags = [", ".join(row_flags(row, table)) for row in table.rows]
    if spread(table) and any(flags):
        return [*headers, "flags"], [[*c, f] for c, f in zip(rows, flags, strict=True)]
    return headers, rows


def grid(table: TaskTable) -> tuple[list[str], list[list[str]]]:
    """Headers and cells for text and Markdown: every column of the task in one table."""
    unit, first = units(table), table.columns[0]
    headers = ["filesystem", "n"]
    if spread(table):
        headers += [f"{header(METRICS[first], unit[first])} mean ± sd", "min–max"]
    rest = table.columns[1:] if spread(table) else table.columns
    headers += [header(METRICS[c], unit[c]) for c in rest]
    rows = []
    for row in table.rows:
        cells = [row.filesystem, _n(row)]
        if spread(table):
            s = row.stats.get(first)
            sd = f" ± {unit[first].text(s.stdev)}" if s is not None and s.n > 1 else ""
            cells += [_mean(row, first, unit[first]) + sd, _range(row, first, unit[first])]
        cells += [_mean(row, c, unit[c]) for c in rest]
        rows.append(cells)
    return _with_flags(table, headers, rows)


def _ci(row: Row, name: str, unit: Unit) -> str:
    s = row.stats.get(name)
    if s is None or s.n < 2 or not math.isfinite(s.ci_high):
        return DASH
    return f"{unit.text(s.ci_low)}–{unit.text(s.ci_high)}"


def headline_grid(table: TaskTable) -> tuple[list[str], list[list[str]]]:
    """The HTML's main table of a task: the headline metric with its spread and flags."""
    unit, first = units(table), table.columns[0]
    if not spread(table):
        return grid(table)
    headers = ["filesystem", "n", f"{header(METRICS[first], unit[first])} mean", "95 % CI"]
    headers += ["CV", "min–max"]
    rows = []
    for row in table.rows:
        s = row.stats.get(first)
        cv = f"{pct_text(100 * s.cv)} %" if s is not None and s.n > 1 else DASH
        rows.append(
            [
                row.filesystem,
                _n(row),
                _mean(row, first, unit[first]),
                _ci(row, first, unit[first]),
                cv,
                _range(row, first, unit[first]),
            ]
        )
    return _with_flags(table, headers, rows)


def other_grid(table: TaskTable) -> tuple[list[str], list[list[str]]]:
    """The HTML's second table of a timed task: the means of its other metrics."""
    if not spread(table) or len(table.columns) < 2:
        return [], []
    unit = units(table)
    headers = ["filesystem", *(header(METRICS[c], unit[c]) for c in table.columns[1:])]
    rows = [[r.filesystem, *(_mean(r, c, unit[c]) for c in table.columns[1:])] for r in table.rows]
    return headers, rows
