"""Compression told as it is: per writing task, each configuration's time beside the space it saved.

Read back from the runs of compressing configurations and their uncompressed peers
(run/space.py recorded them): the task's median time, the logical bytes it wrote
against the bytes that reached the device, and compsize's disk usage against the
uncompressed size of what the task added. The space saved is stated two ways: from
the files (compsize: 1 - disk / uncompressed) and from the device (1 - device bytes /
logical bytes, metadata and log included). The data's compressibility is what its
dataset declares.

The best trade-offs are the Pareto front of (median time, space added): a
configuration is on it when no other was both as fast and as small, one of them
strictly. Medians only: whether two times differ beyond noise is the verdict
tables' business, and the report says so. Neither the device ratio nor compsize's
figures are ranked "higher is better": only space used is an outcome (less is better).

The model (build) and its renderers (sections for every format, a picture
that pages draw) are one concept, apart from the comparison tables, so the
report's document can place them as a figure block.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from fsarena.report import charts, document
from fsarena.report.comparison import fmt
from fsarena.report.document import Section, table_section
from fsarena.session.file import Run, Session

# Said once beside every compression table: why a fast compressing run is not invalid.
CEILING_NOTE = (
    "A compressing configuration is checked against the device's raw ceiling on the "
    "bytes that reached the device, not the bytes its files hold: writing or reading "
    "its files faster than the raw device can is what compression buys, not a sign of "
    "caching, so it is never marked invalid for it."
)
PARETO_NOTE = (
    "Best trade-off (*): no other configuration was both as fast (median time) and as "
    "small (space the task added, by compsize), one of them strictly. Medians only: "
    "whether two times differ beyond noise is what the task's table and verdict say."
)


@dataclass(frozen=True)
class Point:
    """One configuration on one task: medians over its successful repetitions."""

    configuration: str
    setting: str  # the compression mount option, or "none"
    n: int
    time_s: float
    logical_bytes: float | None
    device_bytes: float | None
    disk_added_bytes: float | None  # compsize: what the task added on disk
    uncompressed_added_bytes: float | None
    best: bool = False  # on the Pareto front of (time, space)

    @property
    def space_bytes(self) -> float | None:
        """The space the picture and the front use: compsize's, else the device's bytes."""
        return self.disk_added_bytes if self.disk_added_bytes is not None else self.device_bytes

    @property
    def saved_pct(self) -> float | None:
        """Space saved by compression on the files the task added (compsize)."""
        if not self.uncompressed_added_bytes or self.disk_added_bytes is None:
            return None
        return 100 * (1 - self.disk_added_bytes / self.uncompressed_added_bytes)

    @property
    def device_per_logical(self) -> float | None:
        if not self.logical_bytes or self.device_bytes is None:
            return None
        return self.device_bytes / self.logical_bytes


@dataclass(frozen=True)
class TaskFigure:
    """One writing task's configurations, with what its data is to a compressor."""

    task: str
    data: str  # the dataset's compressibility, in words
    points: tuple[Point, ...]


def configurations(session: Session) -> list[str]:
    """The filesystems whose space was accounted: compressing ones and their peers."""
    profiles = session.profiles_as_run
    compressing = {p.fstype for p in profiles.values() if p.compresses}
    return [
        name
        for name in session.filesystems()
        if name in profiles
        and profiles[name].fstype in compressing
        and not profiles[name].aged
        and profiles[name].compress_options
    ]


def setting(session: Session, name: str) -> str:
    """The configuration's compression option as mounted, or "none"."""
    profile = session.profiles_as_run[name]
    found = [o for o in profile.mount_options if o.split("=")[0] in profile.compress_options]
    return ",".join(found) or "none"


def build(session: Session) -> list[TaskFigure]:
    """Every task that wrote a known payload, with space figures, in the plan's task
    order; [] when no configuration compressed."""
    names = configurations(session)
    if not names:
        return []
    figures = []
    for task in session.plan.tasks:
        points = [p for name in names if (p := _point(session, name, task)) is not None]
        if len(points) >= 2 and any(p.space_bytes is not None for p in points):
            figures.append(TaskFigure(task, _data(session, task), tuple(_front(points))))
    return figures


def _point(session: Session, name: str, task: str) -> Point | None:
    runs = [r for r in session.runs if (r.filesystem, r.task, r.status) == (name, task, "ok")]
    # Tasks that write a known payload: a delete "adds" negative space, which no
    # trade-off of compression explains.
    if not runs or _median(runs, "logical_write_bytes") is None:
        return None
    return Point(
        configuration=name,
        setting=setting(session, name),
        n=len(runs),
        time_s=statistics.median(r.timed_s / max(1, len(r.timed_executions)) for r in runs),
        logical_bytes=_median(runs, "logical_write_bytes"),
        device_bytes=_median(runs, "device_write_bytes"),
        disk_added_bytes=_median(runs, "compsize_disk_added_bytes"),
        uncompressed_added_bytes=_median(runs, "compsize_uncompressed_added_bytes"),
    )


def _median(runs: Sequence[Run], metric: str) -> float | None:
    found = [v for r in runs if (v := r.value(metric)) is not None]
    return statistics.median(found) if found else None


def _front(points: list[Point]) -> list[Point]:
    """The points, those no other point dominates in (time, space) marked best."""

    def dominated(p: Point) -> bool:
        if p.space_bytes is None:
            return True
        return any(
            q.space_bytes is not None
            and q.time_s <= p.time_s
            and q.space_bytes <= p.space_bytes
            and (q.time_s < p.time_s or q.space_bytes < p.space_bytes)
            for q in points
        )

    return [replace(p, best=not dominated(p)) for p in points]


def _data(session: Session, task: str) -> str:
    """What the task's datasets are to a compressor, as their specs declare it."""
    said = []
    for name in session.plan.info(task).datasets:
        record = session.datasets.get(name)
        if record is None:
            continue
        words = record.spec.compressibility or "not stated by the dataset"
        said.append(f"{name}: {words}")
    return "; ".join(said) or "not stated"


# ---------------------------------------------------------------- text and Markdown

HEADERS = [
    "configuration",
    "setting",
    "n",
    "time s",
    "written MB",
    "device MB",
    "device/written",
    "added MB (compsize)",
    "saved %",
    "best",
]


def _mb(value: float | None) -> str:
    return "-" if value is None else fmt(value / 1e6, 4)


def rows(figure: TaskFigure) -> list[list[str]]:
    return [
        [
            p.configuration,
            p.setting,
            str(p.n),
            fmt(p.time_s, 3),
            _mb(p.logical_bytes),
            _mb(p.device_bytes),
            "-" if (r := p.device_per_logical) is None else f"{r:.2f}",
            _mb(p.disk_added_bytes),
            "-" if (s := p.saved_pct) is None else f"{s:.1f}",
            "*" if p.best else "",
        ]
        for p in figure.points
    ]


def sections(session: Session) -> list[Section]:
    """One section per writing task with space figures: its picture (drawn on pages only),
    the table, the data, the method."""
    out: list[Section] = []
    for figure in build(session):
        notes = [f"Data: {figure.data}.", PARETO_NOTE]
        if not out:
            notes.append(CEILING_NOTE)
        title = f"Compression: {figure.task}, time against space"
        table = table_section(title, HEADERS, rows(figure), notes)
        out.append(replace(table, blocks=(picture(figure), *table.blocks)))
    return out


# ---------------------------------------------------------------- the picture


def picture(figure: TaskFigure) -> document.Figure:
    """Time (x) against the space the task added (y), the best trade-offs joined."""
    return charts.figure(f"compression-{figure.task}", _title(figure), partial(_draw, figure))


def _title(figure: TaskFigure) -> str:
    return f"{figure.task}: time against space, per compression setting"


def _label(point: Point) -> str:
    """A point's label: the setting without the "compress=" every label would repeat."""
    if point.setting == "none":
        return "none (no compression)"
    return point.setting.replace("compress-force=", "force:").replace("compress=", "")


def _draw(figure: TaskFigure) -> Figure:
    fig = Figure(figsize=(6.4, 3.8))
    ax = fig.add_subplot()
    placed = [p for p in figure.points if p.space_bytes is not None]
    by_compsize = all(p.disk_added_bytes is not None for p in placed)
    times = [p.time_s for p in placed]
    spread = max(times) / min(times) if min(times) > 0 else 1.0
    if spread > 4:  # a slow level far off: a log axis keeps the fast ones apart
        ax.set_xscale("log")
        plain = FuncFormatter(lambda v, _: f"{v:g}")  # 20, not 2×10¹
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(plain)
        ax.tick_params(axis="x", which="minor", labelsize=6)
    front = sorted((p for p in placed if p.best), key=lambda p: p.time_s)
    ax.plot(
        [p.time_s for p in front],
        [(p.space_bytes or 0) / 1e6 for p in front],
        color=charts.BEST_COLOUR,
        linewidth=1,
        zorder=2,
        label="best trade-offs: no other both faster and smaller",
    )
    for p in placed:
        colour = charts.BEST_COLOUR if p.best else "#999999"
        y = (p.space_bytes or 0) / 1e6
        ax.scatter(p.time_s, y, s=36 if p.best else 24, color=colour, zorder=3)
    ax.set_ylim(bottom=0, top=max((p.space_bytes or 0) / 1e6 for p in placed) * 1.15 or 1)
    _labels(ax, placed)
    ax.set_xlabel("median time of the task (s) — lower is better")
    what = "space the task added (compsize)" if by_compsize else "bytes written to the device"
    ax.set_ylabel(f"{what}, MB — lower is better", fontsize=8)
    ax.legend(loc="best", fontsize=7, frameon=False)
    data = figure.data.split("; ")[0]  # the first dataset's words; the page states them all
    ax.set_title(f"{figure.task} — {data if len(data) < 80 else data[:77] + '…'}", fontsize=8)
    return fig


def _labels(ax: Axes, points: list[Point]) -> None:
    """Each point's label beside it, moved up or down where it would cover another's."""
    ax.figure.canvas.draw()  # data-to-pixel transforms are final only once drawn
    taken: list[tuple[float, float]] = []
    for p in sorted(points, key=lambda p: p.space_bytes or 0):
        x, y = ax.transData.transform((p.time_s, (p.space_bytes or 0) / 1e6))
        dy = 0.0
        step = 11.0  # pixels: one line of 7-point text at the figure's dpi
        for attempt in range(12):
            dy = step * ((attempt + 1) // 2) * (1 if attempt % 2 else -1) if attempt else 0.0
            if all(abs(x - tx) > 70 or abs(y + dy - ty) > step for tx, ty in taken):
                break
        taken.append((x, y + dy))
        ax.annotate(
            _label(p),
            (p.time_s, (p.space_bytes or 0) / 1e6),
            textcoords="offset pixels",
            xytext=(6, dy - 3),
            fontsize=7,
            color="#222222" if p.best else "#666666",
            arrowprops={"arrowstyle": "-", "color": "#bbbbbb", "linewidth": 0.5} if dy else None,
        )
