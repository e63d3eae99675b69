"""The history of one task on one filesystem as a document: what it shows, a chart, a table.

`document` says it as the report's blocks (report/document.py), laid out by the
renderer of each document format of report/formats.py, as every command's are:
the page is the report's page (report/html.py), with the chart inline as SVG.
The chart is drawn with matplotlib like the session reports' (report.charts: the
same style, deterministic SVG), one point per session with its 95 % interval,
labelled with the host and kernel, in time order; only a page draws it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsarena.measure.metrics import METRICS
from fsarena.report import render_document
from fsarena.report.document import Block, Figure, Heading, Paragraph, Table
from fsarena.store.query import Point, history_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure as Plot


def _figure(points: list[Point], title: str, metric_name: str) -> Plot:
    from matplotlib.figure import Figure as Plot

    from fsarena.report.charts import axis_label

    metric = METRICS[metric_name]
    fig = Plot(figsize=(max(5.0, 0.9 * len(points) + 2), 3.6))
    ax = fig.add_subplot()
    xs = list(range(len(points)))
    means = [p.summary.mean * metric.scale for p in points]
    below = [(p.summary.mean - p.summary.ci_low) * metric.scale for p in points]
    above = [(p.summary.ci_high - p.summary.mean) * metric.scale for p in points]
    ax.errorbar(xs, means, yerr=[below, above], fmt="o-", capsize=4)
    ax.set_xticks(xs)
    labels = [f"{p.created_at[:16]}\n{p.hostname} {p.kernel}" for p in points]
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(axis_label(metric))
    ax.set_title(title)
    return fig


class _Chart:
    """The history's chart as a document's drawing: matplotlib loads when a page asks."""

    def __init__(self, points: list[Point], title: str, metric: str) -> None:
        self._args = (points, title, metric)

    def svg(self) -> str:
        from fsarena.report.charts import render

        points, title, metric = self._args
        return render("history", title, lambda: _figure(points, title, metric), png=False).svg

    def lines(self, width: int) -> list[str]:
        return []  # a terminal reads the table


def document(points: list[Point], task: str, filesystem: str, metric: str) -> tuple[Block, ...]:
    title = f"{task} on {filesystem}"
    intro, headers, rows = history_table(points, task, filesystem, metric)
    chart = Figure(
        "history", title, f"{intro}: one point per session", _Chart(points, title, metric)
    )
    table = Table(tuple(headers), tuple(tuple(r) for r in rows))
    return (Heading(f"History of {title}", level=1), Paragraph(intro), chart, table)


def render(points: list[Point], task: str, filesystem: str, metric: str, fmt: str) -> str:
    """The history in a document format of report/formats.py."""
    blocks = document(points, task, filesystem, metric)
    return render_document(fmt, blocks, f"fsarena history: {task} on {filesystem}")
