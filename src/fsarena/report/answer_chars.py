"""The drawn answer (answer_figure) in characters, for the terminal: one line per
filesystem per kind, every interval on one shared log scale, within the width given.

    ├──●──┤  an interval with its estimate: ● a difference, ○ not shown to differ
    │ ┼      the reference (1×), and where an interval crosses it
    ◀ ▶      an interval running off the scale
    ░        too small to matter (the practical threshold), where wide enough to show
"""

from __future__ import annotations

import math
import textwrap

from fsarena.report.answer_figure import AnswerFigure, Mark, mark_text, tick_text

MIN_PLOT = 16  # narrower than this, the scale cannot tell a tie from a difference


def lines(figure: AnswerFigure, width: int, indent: str = "  ") -> list[str]:
    """The figure as lines of at most `width` characters."""
    marks = [m for p in figure.panels for m in p.marks]
    name_w = max((len(m.filesystem) for m in marks), default=4)
    num_w = max((len(mark_text(m)) for m in marks), default=0)
    lead = len(indent) + 2 + name_w + 1
    figures = width - lead - 2 - num_w >= MIN_PLOT  # else the figures give way to the scale
    plot = max(MIN_PLOT, width - lead - (2 + num_w if figures else 0))
    col = _Columns(figure, plot)
    pad = " " * lead
    out = _wrap(f"{figure.title}:", width, indent)
    out.append(pad + _words(figure, col))
    out.append(pad + _ticks(figure, col))
    for panel in figure.panels:
        out += _wrap(f"{panel.title} · {panel.verdict} · {panel.rounds}", width, indent)
        if panel.note:
            out += _wrap(panel.note, width, indent + "  ")
        for mark in panel.marks:
            row = _row(mark, col, panel.band)
            told = f"  {mark_text(mark)}" if figures else ""
            out.append(f"{indent}  {mark.filesystem.ljust(name_w)} {row}{told}")
    out += _wrap(
        "● a difference, ○ not shown to differ (a tie), ├─┤ the interval the verdict "
        "tested, ░ too small to matter",
        width,
        indent,
    )
    return [line.rstrip() for line in out]


def _wrap(text: str, width: int, indent: str) -> list[str]:
    return textwrap.wrap(
        text, width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
    )


class _Columns:
    """Ratio to column on the shared log scale, clamped to the plot."""

    def __init__(self, figure: AnswerFigure, plot: int) -> None:
        self.plot = plot
        self.low, self.high = figure.low, figure.high
        self.lo, self.hi = math.log(figure.low), math.log(figure.high)

    def __call__(self, value: float) -> int:
        if value <= 0:
            return 0
        if math.isinf(value):
            return self.plot - 1
        t = (math.log(value) - self.lo) / (self.hi - self.lo)
        return round(min(1.0, max(0.0, t)) * (self.plot - 1))


def _put(cells: list[str], at: int, text: str) -> bool:
    """Write text at `at` if it fits and every cell it takes (and one either side) is free."""
    at = max(0, min(at, len(cells) - len(text)))
    span = range(max(0, at - 1), min(len(cells), at + len(text) + 1))
    if len(text) > len(cells) or any(cells[i] != " " for i in span):
        return False
    cells[at : at + len(text)] = list(text)
    return True


def _words(figure: AnswerFigure, col: _Columns) -> str:
    cells = [" "] * col.plot
    _put(cells, 0, f"◀ {figure.better}")
    _put(cells, col.plot, f"{figure.worse} ▶")
    return "".join(cells).rstrip()


def _ticks(figure: AnswerFigure, col: _Columns) -> str:
    cells = [" "] * col.plot
    for tick in sorted(figure.ticks, key=lambda t: t != 1.0):  # 1× first: it must show
        text = f"{figure.reference} = 1×" if tick == 1.0 else tick_text(tick)
        _put(cells, col(tick) - len(text) // 2, text)
    return "".join(cells).rstrip()


def _row(mark: Mark, col: _Columns, band: tuple[float, float]) -> str:
    cells = [" "] * col.plot
    for i in range(col(band[0]), col(band[1]) + 1):
        if col(band[1]) > col(band[0]):  # a band narrower than a column is not drawn
            cells[i] = "░"
    ref = col(1.0)
    cells[ref] = "│"
    a, b = 0, col.plot - 1
    if mark.has_interval:
        a, b = col(mark.low), col(mark.high)
        # Whatever the rounding to columns, an interval that crosses 1× is drawn across the
        # reference's column and one that excludes 1× off it: a tie reads as a tie.
        if mark.low < 1 <= ref and a >= ref:
            a = ref - 1
        if mark.low > 1 and a <= ref < col.plot - 1:
            a = ref + 1
        if mark.high > 1 and b <= ref < col.plot - 1:
            b = ref + 1
        if mark.high < 1 <= ref and b >= ref:
            b = ref - 1
        a, b = min(a, b), max(a, b)
        for i in range(a, b + 1):
            cells[i] = "┼" if i == ref else "─"
        cells[a] = "◀" if mark.low < col.low else "├"
        cells[b] = "▶" if mark.high > col.high else "┤"
    if not math.isnan(mark.ratio):  # the estimate lies in its interval: so drawn
        cells[min(max(col(mark.ratio), a), b)] = "●" if mark.differs else "○"
    return "".join(cells)
