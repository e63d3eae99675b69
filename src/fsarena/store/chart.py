"""The history of one task on one filesystem as an HTML page with an inline SVG chart.

Drawn with matplotlib like the session reports (report.charts: the same style,
deterministic SVG), one point per session with its 95 % interval, labelled
with the host and kernel, in time order.
"""

from __future__ import annotations

import html

from matplotlib.figure import Figure

from fsarena.measure.metrics import METRICS
from fsarena.report.charts import axis_label, render
from fsarena.store.query import Point, history_text


def _figure(points: list[Point], title: str, metric_name: str) -> Figure:
    metric = METRICS[metric_name]
    fig = Figure(figsize=(max(5.0, 0.9 * len(points) + 2), 3.6))
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


def history_html(points: list[Point], task: str, filesystem: str, metric: str) -> str:
    title = f"{task} on {filesystem}"
    chart = render("history", title, lambda: _figure(points, title, metric), png=False)
    table = html.escape(history_text(points, task, filesystem, metric))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>fsarena history: {html.escape(title)}</title></head>\n<body>\n"
        f"<h1>History of {html.escape(title)}</h1>\n{chart.svg}\n<pre>{table}</pre>\n"
        "</body></html>\n"
    )
