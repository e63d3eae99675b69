"""The spread of the hosts' ratios, drawn: a box plot per key, on one log scale, yours marked.

Inline SVG for a page (a 400-unit viewBox whose text stays about 11 px on a
390 px phone, the page's own font, nothing fetched) and lines of characters for
a terminal. A row with MIN_HOSTS hosts or more is a box: the line runs from the
lowest host to the highest, the box from the 25th to the 75th percentile, the
bar is the median. A row with fewer hosts shows each host as a hollow dot and
no box: too few for percentiles. Yours is a filled diamond. Deterministic: the
same rows draw the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from fsarena.analysis.phrases import number

WIDTH = 400
FONT = 12
LABEL_H = 15  # a row's label line
PLOT_H = 16  # its plot line
HEAD = 30
NUMBERS = 96  # the column of figures on the right: "0.493×, 8 hosts"
LEFT = 8
INK, GREY, GRID, BOX, REF, YOURS = "#1d1d1d", "#6b6b6b", "#c8c8c8", "#dbe6f2", "#2c6db5", "#c0392b"
OUTLINED = {"stroke": "#ffffff", "stroke_width": "3", "paint_order": "stroke"}
NICE = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0, 1.25, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)


@dataclass(frozen=True)
class Row:
    """One key's hosts: their values, the percentiles they support, and yours if placed."""

    label: str
    values: tuple[float, ...]  # one per host, sorted
    percentiles: dict[int, float]  # {} under MIN_HOSTS hosts
    mine: float | None = None


@dataclass(frozen=True)
class BoxPlot:
    """The rows of one section, the name of what 1x is, and the figure's words."""

    rows: tuple[Row, ...]
    reference: str  # "ext4 = 1×"
    title: str
    alt: str

    def svg(self) -> str:
        return svg(self)

    def lines(self, width: int) -> list[str]:
        return lines(self, width)


def bounds(plot: BoxPlot) -> tuple[float, float]:
    """The scale's ends: every value shown and 1×, widened to the nearest nice ratios."""
    shown = [v for r in plot.rows for v in (*r.values, *([r.mine] if r.mine else []))]
    low, high = min([1.0, *shown]), max([1.0, *shown])
    low = max((n for n in NICE if n <= low / 1.05), default=NICE[0])
    high = min((n for n in NICE if n >= high * 1.05), default=NICE[-1])
    return low, high


class _Scale:
    def __init__(self, low: float, high: float, start: float, end: float) -> None:
        self.lo, self.hi, self.start, self.end = math.log(low), math.log(high), start, end

    def __call__(self, value: float) -> float:
        t = (math.log(max(value, 1e-12)) - self.lo) / (self.hi - self.lo)
        return round(self.start + min(1.0, max(0.0, t)) * (self.end - self.start), 1)


def _text(x: float, y: float, words: str, anchor: str = "start", **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(words)}</text>'


def ratio_text(value: float) -> str:
    return f"{number(value)}×"


def svg(plot: BoxPlot) -> str:
    low, high = bounds(plot)
    right = WIDTH - NUMBERS
    x = _Scale(low, high, LEFT + 4, right - 6)
    ticks = [t for t in NICE if low <= t <= high]
    height = HEAD + len(plot.rows) * (LABEL_H + PLOT_H) + 6
    body = [_tick(t, x, plot.reference, low, high) for t in _spaced(ticks, x)]
    for t in ticks:
        if t == 1.0:
            body.append(_line(x(t), HEAD, x(t), height - 4, stroke=REF, width=1.4))
        else:
            body.append(_line(x(t), HEAD, x(t), height - 4, stroke=GRID, width=0.8, dash="2 3"))
    for i, row in enumerate(plot.rows):
        body += _row(row, x, right, HEAD + i * (LABEL_H + PLOT_H))
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="share-boxplot" role="img" '
            f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-size="{FONT}" '
            # as wide as the column up to 32rem: 11 px text on a phone, 15 px on a desktop
            'style="width:100%;max-width:32rem;height:auto">',
            f"<title>{escape(plot.title)}</title>",
            f"<desc>{escape(plot.alt)}</desc>",
            *body,
            "</svg>",
        ]
    )


def _line(
    x1: float,
    y1: float,
    x2: float,
    y2: float,
    stroke: str = INK,
    width: float = 1.2,
    dash: str = "",
) -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{stroke}" '
        f'stroke-width="{width}"{dashed}/>'
    )


def _tick(t: float, x: _Scale, reference: str, low: float, high: float) -> str:
    """A tick's label: its ratio, or at 1× what 1× is (the baseline)."""
    words, colour = (reference, REF) if t == 1.0 else (ratio_text(t), GREY)
    return _text(x(t), 24, words, _anchor(t, low, high), fill=colour, font_size="11")


def _anchor(tick: float, low: float, high: float) -> str:
    return "start" if tick == low else "end" if tick == high else "middle"


def _spaced(ticks: list[float], x: _Scale) -> list[float]:
    """The ticks whose labels have room: 1× first, then the ends, then the rest."""
    chosen: list[float] = []
    for t in sorted(ticks, key=lambda t: (t != 1.0, t not in (ticks[0], ticks[-1]))):
        if all(abs(x(t) - x(c)) >= 44 for c in chosen):
            chosen.append(t)
    return sorted(chosen)


def _row(row: Row, x: _Scale, right: float, top: float) -> list[str]:
    mid = top + LABEL_H + PLOT_H / 2 - 2
    # the label keeps a white outline: the grid and the 1× line never cross its letters
    out = [_text(LEFT, top + 12, row.label, font_weight="600", **OUTLINED)]
    p = row.percentiles
    if p and row.values:
        a, b = x(row.values[0]), x(row.values[-1])
        q1, q3, med = x(p.get(25, p[50])), x(p.get(75, p[50])), x(p[50])
        out += [
            _line(a, mid, b, mid),
            _line(a, mid - 4, a, mid + 4),
            _line(b, mid - 4, b, mid + 4),
            f'<rect x="{q1}" y="{mid - 5}" width="{round(max(q3 - q1, 1.0), 1)}" height="10" '
            f'fill="{BOX}" stroke="{INK}" stroke-width="1.2"/>',
            _line(med, mid - 6, med, mid + 6, width=2.4),
        ]
        words = f"{ratio_text(p[50])}, {len(row.values)} hosts"
    else:
        out += [
            f'<circle cx="{x(v)}" cy="{mid}" r="3.2" fill="#ffffff" stroke="{INK}" '
            'stroke-width="1.3"/>'
            for v in row.values
        ]
        words = f"{len(row.values)} host{'s' if len(row.values) != 1 else ''}"
    if row.mine is not None:
        m = x(row.mine)
        out.append(
            f'<path d="M{m} {mid - 6}L{m + 5} {mid}L{m} {mid + 6}L{m - 5} {mid}Z" fill="{YOURS}" '
            'stroke="#ffffff" stroke-width="1"/>'
        )
    out.append(_text(WIDTH - 2, mid + 4, words, "end", fill=GREY, font_size="11"))
    return out


# ---------------------------------------------------------------- terminal


def lines(plot: BoxPlot, width: int) -> list[str]:
    """A row a line (its label, its plot, its median) where the width has room for a plot of
    MIN_COLS; else its label on a line of its own above its plot. One log scale for all."""
    low, high = bounds(plot)
    label = max((len(r.label) for r in plot.rows), default=0)
    beside = width - 2 - label - 2 - WORDS >= MIN_COLS
    cols = (
        min(60, width - 2 - label - 2 - WORDS)
        if beside
        else max(MIN_COLS, min(60, width - WORDS - 4))
    )
    x = _Scale(low, high, 0, cols - 1)
    indent = "  " + (" " * (label + 2) if beside else "")
    out = [indent + _axis(plot, x, cols, low, high)]
    for row in plot.rows:
        plotted, words = _chars(row, x, cols, round(x(1.0)))
        if beside:
            out.append(f"  {row.label.ljust(label)}  {plotted}  {words}")
        else:
            out += [f"  {row.label}", f"  {plotted}  {words}"]
    return [*out, *LEGEND]


MIN_COLS = 24  # the narrowest plot a row beside its label may have
WORDS = 22  # "0.493× median, 8 hosts"
LEGEND = (
    "  ├─[ ┃ ]─┤ the lowest host, 25th percentile, median, 75th, the highest;",
    "  o a host (too few hosts for a box); ◆ yours; │ 1×",
)


def _axis(plot: BoxPlot, x: _Scale, cols: int, low: float, high: float) -> str:
    """The scale's ends and what 1× is, placed where they fall."""
    axis = [" "] * cols
    for t, words in ((low, ratio_text(low)), (high, ratio_text(high))):
        at = round(x(t))
        start = at if t == low else at - len(words) + 1
        axis[start : start + len(words)] = words
    ref, one = plot.reference, round(x(1.0))
    start = max(0, min(cols - len(ref), one - len(ref) // 2))
    if all(c == " " for c in axis[max(0, start - 1) : start + len(ref) + 1]):
        axis[start : start + len(ref)] = ref
    return "".join(axis).rstrip()


def _chars(row: Row, x: _Scale, cols: int, one: int) -> tuple[str, str]:
    """The row's plot in characters, and its words (the median and hosts, or how few)."""
    cells = [" "] * cols
    cells[one] = "│"
    p = row.percentiles
    if p and row.values:
        a, b = round(x(row.values[0])), round(x(row.values[-1]))
        for i in range(a, b + 1):
            cells[i] = "─"
        cells[a], cells[b] = "├", "┤"
        cells[round(x(p.get(25, p[50])))] = "["
        cells[round(x(p.get(75, p[50])))] = "]"
        cells[round(x(p[50]))] = "┃"
        words = f"{ratio_text(p[50])} median, {len(row.values)} hosts"
    else:
        for v in row.values:
            cells[round(x(v))] = "o"
        n = len(row.values)
        words = f"{n} host{'s' if n != 1 else ''}: too few"
    if row.mine is not None:
        cells[round(x(row.mine))] = "◆"
    return "".join(cells), words
