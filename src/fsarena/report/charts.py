"""Charts of a comparison, drawn with matplotlib as SVG (inlined in HTML) and PNG files.

Every chart works for any metric in METRICS by its unit, direction and mean
kind. Output is deterministic: fixed SVG ids (svg.hashsalt), no dates in the
metadata, text kept as text (svg.fonttype none) so the page's fonts render it
and nothing is fetched. Figures are built without pyplot: no global state, no
display backend.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure

from fsarena.measure import METRICS, Metric
from fsarena.report.table import Comparison, Row, TaskTable, shown

RC: dict[str, Any] = {
    "svg.hashsalt": "fsarena",  # deterministic ids
    "svg.fonttype": "none",  # text as text: small, selectable, no embedded glyphs
    "font.family": "DejaVu Sans",  # ships with matplotlib: identical PNGs everywhere
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")
HEAT = LinearSegmentedColormap.from_list("fsarena", ["#2e7d32", "#fff59d", "#c62828"])
HEAT_CAP = 3.0  # ratios to the best beyond this share the darkest colour


@dataclass(frozen=True)
class Chart:
    """One chart: a file-safe name, a title, its SVG (for inlining) and, when asked, PNG."""

    name: str
    title: str
    svg: str
    png: bytes | None = None


def direction_text(metric: Metric) -> str:
    return "lower is better" if metric.better == "lower" else "higher is better"


def axis_label(metric: Metric) -> str:
    unit = f" ({metric.unit})" if metric.unit else ""
    return f"{metric.label}{unit} — {direction_text(metric)}"


def colours(comparison: Comparison) -> dict[str, str]:
    """One colour per filesystem, the same in every chart."""
    names = comparison.session.filesystems()
    return {fs: PALETTE[i % len(PALETTE)] for i, fs in enumerate(names)}


@contextmanager
def _style() -> Iterator[None]:
    with matplotlib.rc_context(cast(Any, RC)):
        yield


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buf.getvalue()
    # Inline SVG needs neither the XML declaration nor the DOCTYPE.
    text = re.sub(r"<\?xml[^>]*\?>\s*", "", text)
    text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text)
    return text.strip()


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None}, bbox_inches="tight")
    return buf.getvalue()


def render(name: str, title: str, draw: Callable[[], Figure], png: bool) -> Chart:
    with _style():
        fig = draw()
        return Chart(name, title, _svg(fig), _png(fig) if png else None)


# ---------------------------------------------------------------- per task


def _ci(row: Row, metric: Metric) -> tuple[float, float, float] | None:
    s = row.stats.get(metric.name)
    if s is None:
        return None
    low = s.ci_low if math.isfinite(s.ci_low) else s.mean
    high = s.ci_high if math.isfinite(s.ci_high) else s.mean
    return shown(s.mean, metric), shown(low, metric), shown(high, metric)


def task_figure(
    table: TaskTable, samples: dict[str, list[tuple[int, float]]], colour: dict[str, str]
) -> Figure:
    """Bars of the headline mean per filesystem, 95 % CI error bars, every sample as a dot."""
    metric = METRICS[table.columns[0]]
    rows = [r for r in table.rows if metric.name in r.stats]
    fig = Figure(figsize=(6.4, 0.45 * max(len(rows), 2) + 1.1))
    ax = fig.add_subplot()
    for y, row in enumerate(rows):
        mean, low, high = _ci(row, metric) or (0.0, 0.0, 0.0)
        ax.barh(y, mean, color=colour.get(row.filesystem, PALETTE[0]), alpha=0.85, height=0.6)
        ax.errorbar(
            mean, y, xerr=[[max(mean - low, 0)], [max(high - mean, 0)]], color="#222", capsize=4
        )
        points = samples.get(row.filesystem, [])
        xs = [shown(v, metric) for _, v in points]
        edge = ["#c62828" if rep in row.outliers else "#222" for rep, _ in points]
        ax.scatter(xs, [y] * len(xs), s=14, facecolors="white", edgecolors=edge, zorder=3)
        if row.unstable:
            ax.annotate(
                "unstable",
                (max(high, *xs, mean), y),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
                color="#c62828",
            )
    ax.set_yticks(range(len(rows)), [r.filesystem for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(axis_label(metric))
    ax.set_title(f"{table.task}: mean, 95 % CI and every run", loc="left", fontsize=10)
    ax.set_xlim(left=0)
    ax.margins(x=0.12)
    return fig


# ---------------------------------------------------------------- heat map


def heat_figure(
    tasks: Sequence[str],
    filesystems: Sequence[str],
    ratios: dict[tuple[str, str], float],
    best: set[tuple[str, str]],
) -> Figure:
    """Filesystems x tasks, each cell its headline relative to the best (1 = best)."""
    fig = Figure(figsize=(max(4.5, 0.62 * len(tasks) + 1.8), 0.5 * len(filesystems) + 2.2))
    ax = fig.add_subplot()
    grid = [
        [min(ratios[(fs, t)], HEAT_CAP) if (fs, t) in ratios else math.nan for t in tasks]
        for fs in filesystems
    ]
    # Vector cells (pcolormesh), not a raster image: crisp, and no embedded PNG in the SVG.
    image = ax.pcolormesh(
        np.ma.masked_invalid(np.array(grid, dtype=float)),
        cmap=HEAT,
        vmin=1.0,
        vmax=HEAT_CAP,
        edgecolors="white",
        linewidth=1.0,
    )
    for i, fs in enumerate(filesystems):
        for j, t in enumerate(tasks):
            value = ratios.get((fs, t))
            text = "–" if value is None else f"{value:.2f}"
            weight = "bold" if (fs, t) in best else "normal"
            ax.text(
                j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=7.5, fontweight=weight
            )
    ax.set_xticks([j + 0.5 for j in range(len(tasks))], tasks, rotation=45, ha="right")
    ax.set_yticks([i + 0.5 for i in range(len(filesystems))], filesystems)
    ax.invert_yaxis()
    ax.tick_params(length=0)
    ax.spines[:].set_visible(False)
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if bar.solids is not None:
        bar.solids.set_rasterized(False)  # vector gradient: no embedded PNG in the SVG
    bar.set_label(f"× the best (≥ {HEAT_CAP:g} same colour)")
    ax.set_title(
        "Each task relative to the best filesystem (1.00 = best; bold: best or tied for best)",
        loc="left",
        fontsize=10,
    )
    return fig


# ---------------------------------------------------------------- grouped bars


def grouped_figure(
    title: str,
    metric: Metric,
    tasks: Sequence[str],
    filesystems: Sequence[str],
    values: dict[tuple[str, str], float],
    colour: dict[str, str],
) -> Figure:
    """Per task, one bar per filesystem of a metric's mean (already in display units)."""
    fig = Figure(figsize=(max(5.0, 0.55 * len(tasks) * max(len(filesystems), 2) / 2 + 2), 3.4))
    ax = fig.add_subplot()
    _grouped(ax, tasks, filesystems, values, colour)
    ax.set_ylabel(axis_label(metric))
    ax.set_title(title, loc="left", fontsize=10)
    ax.legend(fontsize=8, frameon=False, ncols=min(len(filesystems), 4))
    return fig


def _grouped(
    ax: Axes,
    tasks: Sequence[str],
    filesystems: Sequence[str],
    values: dict[tuple[str, str], float],
    colour: dict[str, str],
) -> None:
    width = 0.8 / max(len(filesystems), 1)
    for k, fs in enumerate(filesystems):
        xs = [i + (k - (len(filesystems) - 1) / 2) * width for i in range(len(tasks))]
        ys = [values.get((fs, t), 0.0) for t in tasks]
        ax.bar(xs, ys, width=width, label=fs, color=colour.get(fs, PALETTE[0]))
    ax.set_xticks(range(len(tasks)), tasks, rotation=40, ha="right")


# ---------------------------------------------------------------- all charts of a comparison


def _samples(comparison: Comparison, task: str, metric: str) -> dict[str, list[tuple[int, float]]]:
    found: dict[str, list[tuple[int, float]]] = {}
    for run in comparison.session.runs:
        if run.status == "ok" and run.task == task and (v := run.value(metric)) is not None:
            found.setdefault(run.filesystem, []).append((run.repetition, v))
    return found


def _means(
    comparison: Comparison, metric: Metric, tasks: Sequence[str]
) -> dict[tuple[str, str], float]:
    """Mean of a metric per (filesystem, task), in display units, by the metric's mean kind."""
    from fsarena.stats import summarize

    out = {}
    for task in tasks:
        for fs, points in _samples(comparison, task, metric.name).items():
            out[(fs, task)] = shown(summarize([v for _, v in points], metric.mean).mean, metric)
    return out


def _heat(comparison: Comparison, png: bool) -> Chart | None:
    ratios: dict[tuple[str, str], float] = {}
    best: set[tuple[str, str]] = set()
    tasks = []
    for table in comparison.tables:
        metric = METRICS[table.columns[0]]
        means = {
            r.filesystem: r.stats[metric.name].mean for r in table.rows if metric.name in r.stats
        }
        if not means or min(means.values()) <= 0:
            continue
        tasks.append(table.task)
        top = min(means.values()) if metric.better == "lower" else max(means.values())
        for fs, mean in means.items():
            ratios[(fs, table.task)] = mean / top if metric.better == "lower" else top / mean
        result = comparison.verdicts.task(table.task, metric.name) if comparison.verdicts else None
        best.update((fs, table.task) for fs in (result.ranking.winners if result else ()))
    if not tasks:
        return None
    filesystems = [
        fs for fs in comparison.session.filesystems() if any((fs, t) in ratios for t in tasks)
    ]
    title = "Heat map: every task relative to the best filesystem"
    return render("heatmap", title, lambda: heat_figure(tasks, filesystems, ratios, best), png)


def _grouped_chart(
    comparison: Comparison, name: str, title: str, metric_name: str, tasks: Sequence[str], png: bool
) -> Chart | None:
    metric = METRICS[metric_name]
    values = _means(comparison, metric, tasks)
    if not values:
        return None
    filesystems = [fs for fs in comparison.session.filesystems() if any(k[0] == fs for k in values)]
    used = [t for t in tasks if any(k[1] == t for k in values)]
    colour = colours(comparison)
    return render(
        name, title, lambda: grouped_figure(title, metric, used, filesystems, values, colour), png
    )


def build(comparison: Comparison, png: bool = False) -> list[Chart]:
    """Heat map, one chart per task, then CPU, device bytes and space charts."""
    colour = colours(comparison)
    found = [c for c in [_heat(comparison, png)] if c]
    for table in comparison.tables:
        metric = table.columns[0]
        samples = _samples(comparison, table.task, metric)
        if samples:
            found.append(
                render(
                    f"task-{table.task}",
                    f"{table.task}: {METRICS[metric].label}",
                    partial(task_figure, table, samples, colour),
                    png,
                )
            )
    timed = [t.task for t in comparison.tables if t.timed]
    space = [t for t in comparison.tables if t.kind == "space"]
    extra = [
        ("cpu", "CPU: the tasks' own processes, (user + sys) / wall", "cpu_pct", timed),
        ("device-written", "Bytes written to the device", "device_write_bytes", timed),
        ("device-read", "Bytes read from the device", "device_read_bytes", timed),
    ]
    for metric_name in sorted({t.columns[0] for t in space}):
        tasks = [t.task for t in space if t.columns[0] == metric_name]
        extra.append(
            (f"space-{metric_name}", f"Space: {METRICS[metric_name].label}", metric_name, tasks)
        )
    for name, title, metric_name, tasks in extra:
        chart = _grouped_chart(comparison, name, title, metric_name, tasks, png)
        if chart is not None:
            found.append(chart)
    return found
