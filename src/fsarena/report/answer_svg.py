"""The drawn answer (answer_figure) as inline SVG: small multiples on one shared log scale.

Written by hand rather than with matplotlib: the figure must read on a phone,
so it is drawn for a 400-unit viewBox whose text stays about 11 px at 390 px
wide, and its text is the page's own (no font, no script, nothing fetched).
Encodings survive grayscale and colour blindness: a difference is a filled
dot, a tie a hollow one; the band of differences too small to matter is a light
grey; the reference line is the only coloured stroke and is also labelled.
Deterministic: the same answer draws the same bytes.
"""

from __future__ import annotations

import math
from html import escape

from fsarena.report.answer_figure import AnswerFigure, Mark, Panel, alt, mark_text, tick_text

WIDTH = 400
FONT = 12  # px in the viewBox: about 11 px on a 390 px phone
CHAR = 6.9  # a character's mean width at FONT, for laying out columns
HEAD = 36  # the direction words and the tick labels above the panels
TITLE_H = 18  # a panel's title line
ROW_H = 19
GAP = 8
NUMBERS = 122  # the column of figures on the right, at least: wider for wider figures
NUMBER_CHAR = 6.6  # a figure's character at its 11.5 px
# Text over the grid and the reference line keeps a white outline, so a line never crosses it.
INK, GREY, GRID, BAND, REF = "#1d1d1d", "#6b6b6b", "#c8c8c8", "#e2e2e2", "#2c6db5"


def svg(figure: AnswerFigure, ident: str = "answer-figure") -> str:
    """The figure as one <svg> element with its title and description (role img).

    Every text stays inside the viewBox: the figures' column is as wide as its widest
    figure, and a panel's title wraps to a second line (its verdict) when one is too short.
    """
    names = [m.filesystem for p in figure.panels for m in p.marks]
    left = min(140.0, max(44.0, CHAR * max(map(len, names), default=4) + 14))
    figures = [mark_text(m) for p in figure.panels for m in p.marks]
    numbers = max(NUMBERS, NUMBER_CHAR * max(map(len, figures), default=0) + 8)
    right = WIDTH - numbers
    x = _Scale(figure, left + 6, right - 6)
    body: list[str] = []
    y = HEAD
    for panel in figure.panels:
        body += _panel(figure, panel, x, left, right, y)
        y += _title_height(panel) + ROW_H * max(1, len(panel.marks)) + GAP
    height = y - GAP + 2
    title, desc = f"{ident}-title", f"{ident}-desc"
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="answer-figure" role="img" '
            f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
            f'aria-labelledby="{title} {desc}" font-size="{FONT}">',
            f'<title id="{title}">{escape(figure.title)}</title>',
            f'<desc id="{desc}">{escape(alt(figure))}</desc>',
            *_head(figure, x),
            *body,
            "</svg>",
        ]
    )


class _Scale:
    """Ratio to x on the shared log scale, clamped to the plot."""

    def __init__(self, figure: AnswerFigure, start: float, end: float) -> None:
        self.start, self.end = round(start, 1), round(end, 1)
        self.low, self.high = figure.low, figure.high
        self.lo, self.hi = math.log(figure.low), math.log(figure.high)

    def __call__(self, value: float) -> float:
        if value <= 0:
            return self.start
        if math.isinf(value):
            return self.end
        t = (math.log(value) - self.lo) / (self.hi - self.lo)
        return round(self.start + min(1.0, max(0.0, t)) * (self.end - self.start), 1)


def _text(x: float, y: float, words: str, anchor: str = "start", **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y}" text-anchor="{anchor}"{extra}>{escape(words)}</text>'


def _head(figure: AnswerFigure, x: _Scale) -> list[str]:
    """Direction words; the ticks' labels, with the reference's name at 1×."""
    out = [
        _text(x.start, 12, f"◀ {figure.better}", fill=GREY),
        _text(x.end, 12, f"{figure.worse} ▶", "end", fill=GREY),
    ]
    taken: list[tuple[float, float]] = []
    for tick in sorted(figure.ticks, key=lambda t: (t != 1.0, t not in (figure.low, figure.high))):
        # 1× first, then the ends, then the inner ticks where they have room.
        at = x(tick)
        words = f"{figure.reference} = 1×" if tick == 1.0 else tick_text(tick)
        wide = len(words) * CHAR * (1.08 if tick == 1.0 else 0.95)
        anchor = "start" if tick == figure.low else "end" if tick == figure.high else "middle"
        start = at if anchor == "start" else at - wide if anchor == "end" else at - wide / 2
        if any(start < b + 9 and a < start + wide + 9 for a, b in taken):
            continue
        taken.append((start, start + wide))
        if tick == 1.0:
            out.append(_text(at, 29, words, anchor, fill=REF, font_weight="700"))
        else:
            out.append(_text(at, 29, words, anchor, fill=GREY))
    return out


def _said(panel: Panel) -> str:
    return f"{panel.verdict} · {panel.rounds}"


def _two_lines(panel: Panel) -> bool:
    """Whether the title and its verdict need two lines to stay inside the drawing."""
    return CHAR * len(f"{panel.title} · {_said(panel)}") > WIDTH - 4


def _title_height(panel: Panel) -> int:
    return TITLE_H * (2 if _two_lines(panel) else 1)


def _panel(
    figure: AnswerFigure, panel: Panel, x: _Scale, left: float, right: float, top: float
) -> list[str]:
    """Its title; under its rows the band, the grid and the reference line; its marks."""
    y0 = top + _title_height(panel)
    y1 = y0 + ROW_H * max(1, len(panel.marks)) - 2
    low, high = panel.band
    title = f'<tspan font-weight="700">{escape(panel.title)}</tspan>'
    if _two_lines(panel):
        head = (
            f'<text x="0" y="{top + 13}">{title}</text>'
            f'<text x="0" y="{top + 13 + TITLE_H}" fill="{GREY}">{escape(_said(panel))}</text>'
        )
    else:
        head = (
            f'<text x="0" y="{top + 13}">{title}'
            f'<tspan fill="{GREY}"> · {escape(_said(panel))}</tspan></text>'
        )
    out = [
        head,
        f'<rect x="{x(low)}" y="{y0}" width="{round(x(high) - x(low), 1)}" '
        f'height="{y1 - y0}" fill="{BAND}"/>',
    ]
    for tick in figure.ticks:
        if tick != 1.0:
            out.append(
                f'<line x1="{x(tick)}" y1="{y0}" x2="{x(tick)}" y2="{y1}" stroke="{GRID}" '
                'stroke-width="0.8" stroke-dasharray="2 3"/>'
            )
    out.append(
        f'<line class="reference" x1="{x(1.0)}" y1="{y0 - 2}" x2="{x(1.0)}" y2="{y1 + 2}" '
        f'stroke="{REF}" stroke-width="1.6"/>'
    )
    if panel.note:
        out.append(_text(left + 6, y0 + 14, panel.note, fill=GREY))
    for i, mark in enumerate(panel.marks):
        out += _mark(mark, x, left, right, y0 + i * ROW_H + ROW_H / 2)
    return out


def _fitted(name: str, room: float) -> str:
    """The name, shortened in its middle ("btrfs-com…nodiscard") to fit ROOM units."""
    fits = max(5, int(room / CHAR))
    if len(name) <= fits:
        return name
    head = (fits - 1) // 2
    return f"{name[:head]}…{name[-(fits - 1 - head) :]}"


def _mark(mark: Mark, x: _Scale, left: float, right: float, mid: float) -> list[str]:
    shown = _fitted(mark.filesystem, left - 4)
    label = _text(left, mid + 4, shown, "end")
    if shown != mark.filesystem:  # the whole name on hover and for screen readers
        label = label.replace("</text>", f"<title>{escape(mark.filesystem)}</title></text>")
    out = [label]
    if mark.has_interval:
        a, b = x(mark.low), x(mark.high)
        out.append(
            f'<line x1="{a}" y1="{mid}" x2="{b}" y2="{mid}" stroke="{INK}" stroke-width="1.6"/>'
        )
        out.append(_end(a, mid, clipped=mark.low < x.low, left=True))
        out.append(_end(b, mid, clipped=mark.high > x.high, left=False))
    if not math.isnan(mark.ratio):
        fill = INK if mark.differs else "#ffffff"
        out.append(
            f'<circle cx="{x(mark.ratio)}" cy="{mid}" r="4" fill="{fill}" stroke="{INK}" '
            'stroke-width="1.6"/>'
        )
    out.append(_text(right + 4, mid + 4, mark_text(mark), font_size="11.5"))
    return out


def _end(at: float, mid: float, clipped: bool, left: bool) -> str:
    """A whisker's end: a cap, or an arrowhead where the interval runs off the scale."""
    if not clipped:
        return (
            f'<line x1="{at}" y1="{mid - 4}" x2="{at}" y2="{mid + 4}" stroke="{INK}" '
            'stroke-width="1.6"/>'
        )
    tip = at - 6 if left else at + 6
    return f'<path d="M{at} {mid - 4}L{tip} {mid}L{at} {mid + 4}Z" fill="{INK}"/>'
