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
from functools import cached_property, partial
from typing import Any, cast

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap, ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from fsarena.analysis.phrases import number
from fsarena.measure.metrics import METRICS, Metric
from fsarena.report import document
from fsarena.report.comparison import Comparison, Row, TaskTable
from fsarena.report.sentence import matters
from fsarena.report.units import Unit, column_unit

RC: dict[str, Any] = {
    "svg.hashsalt": "fsarena",  # deterministic ids
    "svg.fonttype": "none",  # text as text: small, selectable, no embedded glyphs
    "font.family": "DejaVu Sans",  # ships with matplotlib: identical PNGs everywhere
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")
# Behind the best: light to dark (a sequential scheme, safe for colour-blind readers).
HEAT = LinearSegmentedColormap.from_list("fsarena", ["#fff7bc", "#fe9929", "#993404"])
BEST_COLOUR = "#2c6db5"  # best or tied for best: another hue and lightness than any of HEAT
BEST = ListedColormap([BEST_COLOUR])
HEAT_CAP = 3.0  # ratios to the best beyond this share the darkest colour


@dataclass(frozen=True)
class Chart:
    """One chart: a file-safe name, a title, its SVG (for inlining) and, when asked, PNG."""

    name: str
    title: str
    svg: str
    png: bytes | None = None


class ChartDrawing:
    """A chart as a document's drawing, drawn when a page first asks for it: text and
    Markdown never do (the tables say what it shows), so they never pay for matplotlib."""

    def __init__(self, draw: Callable[[], Figure]) -> None:
        self._draw = draw

    @cached_property
    def _figure(self) -> Figure:
        with _style():
            return self._draw()

    @cached_property
    def _svg_text(self) -> str:
        with _style():
            return _svg(self._figure)

    @cached_property
    def _png_bytes(self) -> bytes:
        with _style():
            return _png(self._figure)

    def svg(self) -> str:
        return self._svg_text

    def png(self) -> bytes:
        return self._png_bytes

    def drawn(self, png: bool) -> bool:
        """Whether its SVG (and, if asked, its PNG) is drawn already."""
        return "_svg_text" in self.__dict__ and (not png or "_png_bytes" in self.__dict__)

    def keep(self, svg: str, png: bytes | None) -> None:
        """What another process drew of it (fsarena.report.drawing), kept as if drawn here."""
        self.__dict__["_svg_text"] = svg
        if png is not None:
            self.__dict__["_png_bytes"] = png

    def lines(self, width: int) -> list[str]:
        return []


def figure(name: str, title: str, draw: Callable[[], Figure]) -> document.Figure:
    """A chart as a Figure block of the report's document, its title as its alt text."""
    return document.Figure(name, title, title, ChartDrawing(draw))


def chart(figure: document.Figure, png: bool = False) -> Chart:
    """A chart figure drawn now: its SVG and, when asked, its PNG (files beside a page)."""
    drawing = figure.drawing
    assert isinstance(drawing, ChartDrawing)
    return Chart(figure.name, figure.title, drawing.svg(), drawing.png() if png else None)


def direction_text(metric: Metric) -> str:
    return "lower is better" if metric.better == "lower" else "higher is better"


def axis_label(metric: Metric, unit: Unit | None = None) -> str:
    label = unit.label if unit is not None else metric.unit
    return f"{metric.label}{f' ({label})' if label else ''} — {direction_text(metric)}"


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
    """One chart drawn now (the store's history page)."""
    return chart(figure(name, title, draw), png)


# ---------------------------------------------------------------- per task


def _ci(row: Row, metric: Metric, unit: Unit) -> tuple[float, float, float] | None:
    s = row.stats.get(metric.name)
    if s is None:
        return None
    low = s.ci_low if math.isfinite(s.ci_low) else s.mean
    high = s.ci_high if math.isfinite(s.ci_high) else s.mean
    return s.mean * unit.factor, low * unit.factor, high * unit.factor


def _marks_legend(ax: Axes, outliers: bool, exact: bool) -> None:
    """What every mark means, below the plot."""
    handles: list[Any] = [Patch(facecolor="#999", label="mean")]
    if not exact:
        handles += [
            Line2D([], [], color="#222", marker="|", markersize=8, label="95 % CI"),
            Line2D([], [], color="#222", marker="o", mfc="white", ls="", ms=4, label="each run"),
        ]
    if outliers:
        handles.append(
            Line2D([], [], color="#c62828", marker="o", mfc="white", ls="", ms=4, label="outlier")
        )
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.32),
        ncols=len(handles),
        frameon=False,
        fontsize=8,
    )


def task_figure(
    table: TaskTable, samples: dict[str, list[tuple[int, float]]], colour: dict[str, str]
) -> Figure:
    """Bars of the headline mean per filesystem (value written on each), 95 % CI error bars,
    every sample as a dot; a legend names every mark."""
    metric = METRICS[table.columns[0]]
    rows = [r for r in table.rows if metric.name in r.stats]
    unit = column_unit(metric, [r.stats[metric.name].mean for r in rows])
    fig = Figure(figsize=(6.4, 0.45 * max(len(rows), 2) + 1.5))
    ax = fig.add_subplot()
    for y, row in enumerate(rows):
        mean, low, high = _ci(row, metric, unit) or (0.0, 0.0, 0.0)
        ax.barh(y, mean, color=colour.get(row.filesystem, PALETTE[0]), alpha=0.85, height=0.6)
        points = samples.get(row.filesystem, [])
        xs = [v * unit.factor for _, v in points]
        if not metric.exact:
            ax.errorbar(
                mean, y, xerr=[[max(mean - low, 0)], [max(high - mean, 0)]], color="#222", capsize=4
            )
            edge = ["#c62828" if rep in row.outliers else "#222" for rep, _ in points]
            ax.scatter(xs, [y] * len(xs), s=14, facecolors="white", edgecolors=edge, zorder=3)
        label = unit.text(mean / unit.factor) + (" unstable" if row.unstable else "")
        ax.annotate(
            label,
            (max(high, *xs, mean) if not metric.exact else mean, y),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
            color="#c62828" if row.unstable else "#222",
        )
    ax.set_yticks(range(len(rows)), [r.filesystem for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(axis_label(metric, unit))
    what = "value" if metric.exact else "mean, 95 % CI and every run"
    ax.set_title(f"{table.task}: {what}", loc="left", fontsize=10)
    ax.set_xlim(left=0)
    ax.margins(x=0.18)
    _marks_legend(ax, any(r.outliers for r in rows), metric.exact)
    return fig


# ---------------------------------------------------------------- heat map


def heat_figure(
    tasks: Sequence[str],
    filesystems: Sequence[str],
    ratios: dict[tuple[str, str], float],
    best: set[tuple[str, str]],
) -> Figure:
    """Filesystems x tasks, each cell its headline relative to the best (1 = best).

    Colour and label say the same thing: a cell that is best or tied for best (not
    significantly worse than the best) is blue with its ratio and "best"/"tie"; the
    others are shaded by how far behind they are, light to dark (YlOrBr: sequential
    in lightness, readable with any colour vision).
    """
    fig = Figure(figsize=(max(4.5, 0.62 * len(tasks) + 1.8), 0.5 * len(filesystems) + 2.6))
    ax = fig.add_subplot()
    grid = [
        [
            math.nan if (fs, t) in best else min(ratios.get((fs, t), math.nan), HEAT_CAP)
            for t in tasks
        ]
        for fs in filesystems
    ]
    tied = [[1.0 if (fs, t) in best else math.nan for t in tasks] for fs in filesystems]
    # Vector cells (pcolormesh), not a raster image: crisp, and no embedded PNG in the SVG.
    cells: dict[str, Any] = {"edgecolors": "white", "linewidth": 1.0}
    image = ax.pcolormesh(
        np.ma.masked_invalid(np.array(grid, dtype=float)),
        cmap=HEAT,
        vmin=1.0,
        vmax=HEAT_CAP,
        **cells,
    )
    ax.pcolormesh(np.ma.masked_invalid(np.array(tied, dtype=float)), cmap=BEST, **cells)
    for i, fs in enumerate(filesystems):
        for j, t in enumerate(tasks):
            value = ratios.get((fs, t))
            top = (fs, t) in best
            text = "–" if value is None else f"{value:.2f}"
            if top and value is not None:
                text += "\nbest" if value == 1.0 else "\ntie"
            dark = top or (value is not None and value > 1 + 0.6 * (HEAT_CAP - 1))
            ax.text(
                j + 0.5,
                i + 0.5,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "#222",
                fontweight="bold" if top else "normal",
            )
    ax.set_xticks([j + 0.5 for j in range(len(tasks))], tasks, rotation=45, ha="right")
    ax.set_yticks([i + 0.5 for i in range(len(filesystems))], filesystems)
    ax.invert_yaxis()
    ax.tick_params(length=0)
    ax.spines[:].set_visible(False)
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if bar.solids is not None:
        bar.solids.set_rasterized(False)  # vector gradient: no embedded PNG in the SVG
    bar.set_label(f"× the best, significantly worse (≥ {HEAT_CAP:g} same colour)")
    ax.legend(
        handles=[
            Patch(facecolor=BEST_COLOUR, label="best, or tied for best (no significant difference)")
        ],
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
        frameon=False,
        fontsize=8,
    )
    ax.set_title(
        "Each task relative to the best filesystem (1.00 = best)", loc="left", fontsize=10, pad=22
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
    """Per task, one bar per filesystem of a metric's mean (raw values), its value on top."""
    unit = column_unit(metric, values.values())
    shown = {k: v * unit.factor for k, v in values.items()}
    fig = Figure(figsize=(max(5.0, 0.55 * len(tasks) * max(len(filesystems), 2) / 2 + 2), 3.6))
    ax = fig.add_subplot()
    _grouped(ax, tasks, filesystems, shown, colour)
    ax.set_ylabel(axis_label(metric, unit))
    ax.margins(y=0.18)
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
        bars = ax.bar(xs, ys, width=width, label=fs, color=colour.get(fs, PALETTE[0]))
        labels = [number(y) if (fs, t) in values else "" for y, t in zip(ys, tasks, strict=True)]
        ax.bar_label(bars, labels=labels, rotation=90, padding=2, fontsize=7.5)
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
    """Mean of a metric per (filesystem, task), raw, by the metric's mean kind."""
    from fsarena.analysis.stats import summarize

    out = {}
    for task in tasks:
        for fs, points in _samples(comparison, task, metric.name).items():
            out[(fs, task)] = summarize([v for _, v in points], metric.mean).mean
    return out


def heat_map(comparison: Comparison) -> document.Figure | None:
    """Every task relative to the best filesystem; None for fewer than two filesystems."""
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
        winners = result.ranking.winners if result else ()
        if result and not any(matters(metric, means[winners[0]], m) for m in means.values()):
            winners = tuple(means)  # no practical difference: every one is as good as the best
        best.update((fs, table.task) for fs in winners)
    filesystems = [
        fs for fs in comparison.session.filesystems() if any((fs, t) in ratios for t in tasks)
    ]
    if not tasks or len(filesystems) < 2:  # one filesystem is "best" at everything: no map
        return None
    title = "Heat map: every task relative to the best filesystem"
    return figure("heatmap", title, lambda: heat_figure(tasks, filesystems, ratios, best))


def _grouped_chart(
    comparison: Comparison, name: str, title: str, metric_name: str, tasks: Sequence[str]
) -> document.Figure | None:
    metric = METRICS[metric_name]
    values = _means(comparison, metric, tasks)
    if not values:
        return None
    filesystems = [fs for fs in comparison.session.filesystems() if any(k[0] == fs for k in values)]
    used = [t for t in tasks if any(k[1] == t for k in values)]
    colour = colours(comparison)
    return figure(
        name, title, lambda: grouped_figure(title, metric, used, filesystems, values, colour)
    )


def task_chart(comparison: Comparison, table: TaskTable) -> document.Figure | None:
    """The task's headline metric per filesystem: mean, interval and every run."""
    metric = table.columns[0]
    samples = _samples(comparison, table.task, metric)
    if not samples:
        return None
    draw = partial(task_figure, table, samples, colours(comparison))
    return figure(f"task-{table.task}", f"{table.task}: {METRICS[metric].label}", draw)


def overview(comparison: Comparison) -> list[document.Figure]:
    """The whole comparison's CPU, device bytes and space, task by task."""
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
    found = (_grouped_chart(comparison, *spec) for spec in extra)
    return [f for f in found if f is not None]


def build(comparison: Comparison, png: bool = False) -> list[Chart]:
    """Heat map, one chart per task, then CPU, device bytes and space charts, drawn now."""
    found = [heat_map(comparison), *(task_chart(comparison, t) for t in comparison.tables)]
    return [chart(f, png) for f in [*found, *overview(comparison)] if f is not None]
