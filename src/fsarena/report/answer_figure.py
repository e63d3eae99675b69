"""The answer drawn: every filesystem against the recommended one, per kind of work.

The figure's model, read from the Answer alone: each panel is one family the
words were judged on (the overall comparison behind the recommendation, then
each weighed kind), and each mark is one pair of that family's ranking, with
the interval the verdict tested (analysis.answer.Judged), turned to read
"this filesystem against the reference". Nothing is recomputed, so the picture
cannot say other than the words: a mark is filled when the verdict found a
difference and hollow when it did not (a tie: its interval crosses 1×); the
band is the practical threshold within which the answer says "no difference
that matters".

The reference is the recommended filesystem; with no recommendation (the
answer is open or equal), the best estimate of the comparison the
recommendation was judged on, and the figure says it is not a recommendation.
No figure without an interval to draw (one repetition): points alone would
look like a result.

Renderers (answer_svg for the HTML page, answer_chars for the terminal) draw
this model and know nothing of the page around it; `alt` is its text
alternative and `caption` its legend. A document block of a figure (an SVG, a
text rendering and alt text) takes answer_svg.svg(f), answer_chars.lines(f,
width) and alt(f) as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fsarena.analysis.answer import EQUAL, OPEN, OVERALL, UNTESTED, WIN, Answer, Judged
from fsarena.analysis.phrases import names, number
from fsarena.analysis.ranking import Pair
from fsarena.kinds import KINDS

OVERALL_TITLE = "overall (weighted)"
# The shared scales, narrowest first: the first whose ends hold every mark, interval and
# band is drawn; its ticks are round ratios. Beyond the last, an end is drawn clipped.
SCALES: tuple[tuple[float, ...], ...] = (
    (0.9, 1.0, 1.1),
    (0.8, 1.0, 1.25),
    (0.67, 1.0, 1.5),
    (0.5, 1.0, 2.0),
    (0.2, 0.5, 1.0, 2.0, 5.0),
    (0.1, 0.3, 1.0, 3.0, 10.0),
    (0.05, 0.2, 1.0, 5.0, 20.0),
    (0.01, 0.1, 1.0, 10.0, 100.0),
)


@dataclass(frozen=True)
class Mark:
    """One filesystem against the reference in one panel: how many times the reference's
    value (lower is better, as the verdicts compare), with the verdict's interval."""

    filesystem: str
    ratio: float  # > 1: behind the reference; < 1: ahead of it (nan: no ratio)
    low: float  # the interval, same orientation (nan: none; 0 or inf: beyond any ratio)
    high: float
    differs: bool  # the verdict's own call: the pair is significant

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))


@dataclass(frozen=True)
class Panel:
    """One family: the overall comparison or one weighed kind of work."""

    key: str  # OVERALL or a kind
    title: str
    verdict: str  # its words in short: 'xfs ahead', 'not resolved', ...
    threshold: float  # the practical threshold: the band is 1 / (1 + t) to 1 + t
    n: int  # the fewest rounds of a filesystem here (one eliminated early has fewer)
    marks: tuple[Mark, ...]
    note: str = ""  # why there is no mark (the reference has no result here)
    n_most: int = 0  # the most rounds of a filesystem here

    @property
    def rounds(self) -> str:
        """'n = 10', or 'n = 7-10' when eliminated filesystems ran fewer rounds."""
        return f"n = {self.n}" if self.n_most <= self.n else f"n = {self.n}-{self.n_most}"

    @property
    def band(self) -> tuple[float, float]:
        return 1 / (1 + self.threshold), 1 + self.threshold


@dataclass(frozen=True)
class AnswerFigure:
    reference: str
    recommended: tuple[str, ...]  # the answer's; the reference is the first (else none is)
    panels: tuple[Panel, ...]
    ticks: tuple[float, ...]  # the shared scale: its ends are the first and last tick
    better: str  # 'faster' or 'better': left of 1×
    worse: str  # 'slower' or 'worse': right of 1×

    @property
    def low(self) -> float:
        return self.ticks[0]

    @property
    def high(self) -> float:
        return self.ticks[-1]

    @property
    def title(self) -> str:
        if len(self.recommended) > 1:
            others = names([fs for fs in self.recommended if fs != self.reference])
            return f"Each filesystem against {self.reference}, recommended with {others}"
        if self.recommended:
            return f"Each filesystem against {self.reference}, the recommended one"
        return f"Each filesystem against {self.reference}, the best estimate (not a recommendation)"

    @property
    def axis(self) -> str:
        return (
            f"Scale: times {self.reference}'s value, log; under 1× {self.better}, "
            f"over 1× {self.worse}"
        )

    @property
    def caption(self) -> str:
        """What the page prints under the drawing: title, scale and legend."""
        return f"{self.title}. {self.axis}; {self.legend}."

    @property
    def legend(self) -> str:
        return (
            "dot: the estimate; line: its interval as the verdict tested it; filled: a "
            f"difference, hollow: not shown to differ from {self.reference} (a tie); "
            "shaded: too small to matter"
        )


def build(answer: Answer) -> AnswerFigure | None:
    """The figure of an answer; None when it has nothing to draw (no two filesystems
    compared in a weighed kind, or no interval at all)."""
    judged = answer.judged
    deciding = judged.get(OVERALL) or next(iter(judged.values()), None)
    if deciding is None or len(deciding.ranking.order) < 2:
        return None
    reference = answer.recommended[0] if answer.recommended else deciding.ranking.order[0]
    statuses = {k.kind: k for k in answer.kinds}
    panels = []
    for key, family in judged.items():
        if key == OVERALL:
            title = OVERALL_TITLE
            verdict = _words(answer.status, answer.recommended, "recommended")
        else:
            kind = statuses.get(key)
            title = kind.title if kind else KINDS.get(key, key)
            status, winners = (kind.status, kind.winners) if kind else (UNTESTED, ())
            verdict = _words(status, winners, "ahead")
        panels.append(_panel(key, title, verdict, family, reference))
    panels.sort(key=lambda p: p.key != OVERALL)  # the recommendation's own family first
    marks = [m for p in panels for m in p.marks]
    if not any(m.has_interval for m in marks):
        return None
    words = {f.word for f in judged.values()}
    better, worse = ("faster", "slower") if words == {"faster than"} else ("better", "worse")
    return AnswerFigure(reference, answer.recommended, tuple(panels), scale(panels), better, worse)


def _words(status: str, winners: tuple[str, ...], lead: str) -> str:
    """The family's verdict in a few words, as the answer's lines say it."""
    either = " or ".join(winners)
    if status == WIN and winners:
        return f"{names(list(winners))} {lead}"
    if status == EQUAL and winners:
        return f"{either}, within the threshold"
    if status == OPEN and winners:
        return f"{either}, not told apart"
    return {
        EQUAL: "no difference that matters",
        OPEN: "not resolved",
        UNTESTED: "no verdict",
    }.get(status, "no verdict")


def _panel(key: str, title: str, verdict: str, family: Judged, reference: str) -> Panel:
    ranking = family.ranking
    n = min(ranking.n.values(), default=0)
    most = max(ranking.n.values(), default=0)
    if reference not in ranking.order:
        note = f"{reference} has no result here"
        return Panel(key, title, verdict, family.threshold, n, (), note, most)
    marks = tuple(
        _against(pair, reference)
        for fs in ranking.order
        if fs != reference and (pair := ranking.pair(reference, fs)) is not None
    )
    return Panel(key, title, verdict, family.threshold, n, marks, n_most=most)


def _against(pair: Pair, reference: str) -> Mark:
    """The pair turned to read 'the other filesystem, in times the reference's value'."""
    if pair.better == reference:
        return Mark(pair.worse, pair.ratio, pair.low, pair.high, pair.significant)
    return Mark(
        pair.better, _inverse(pair.ratio), _inverse(pair.high), _inverse(pair.low),
        pair.significant,
    )  # fmt: skip


def _inverse(x: float) -> float:
    if math.isnan(x):
        return x
    return math.inf if x == 0 else 1 / x


def scale(panels: list[Panel]) -> tuple[float, ...]:
    """The narrowest of SCALES holding every finite figure drawn, the widest otherwise."""
    values = [v for p in panels for v in p.band]
    for m in (m for p in panels for m in p.marks):
        values += [v for v in (m.ratio, m.low, m.high) if 0 < v < math.inf]
    for ticks in SCALES:
        if all(ticks[0] <= v <= ticks[-1] for v in values):
            return ticks
    return SCALES[-1]


# ---------------------------------------------------------------- words for the figure


def ratio_text(value: float) -> str:
    """A ratio as the figure prints it: '1.79×', 'over 100×', 'under 0.01×'."""
    if math.isnan(value):
        return "n/a"
    if value >= 100:
        return "over 100×"
    if value < 0.01:
        return "under 0.01×"
    return f"{value:.2f}×"


def mark_text(mark: Mark) -> str:
    """'1.79× (1.13–2.83)': the estimate and its interval, as drawn."""
    if not mark.has_interval:
        return f"{ratio_text(mark.ratio)} (no interval)"
    low, high = (ratio_text(v).removesuffix("×") for v in (mark.low, mark.high))
    return f"{ratio_text(mark.ratio)} ({low}–{high})"


def tick_text(value: float) -> str:
    return f"{value:g}×"


def alt(figure: AnswerFigure) -> str:
    """The figure in words, for a screen reader or a text alternative."""
    parts = [
        f"{figure.title}, per kind of work: each filesystem's value in times "
        f"{figure.reference}'s (under 1: {figure.better}, over 1: {figure.worse}), with "
        "the interval the verdict tested; an interval that crosses 1 is a tie."
    ]
    for panel in figure.panels:
        if panel.note:
            parts.append(f"{panel.title} ({panel.verdict}): {panel.note}.")
            continue
        each = "; ".join(
            f"{m.filesystem} {mark_text(m)}, "
            + ("a difference" if m.differs else f"not shown to differ from {figure.reference}")
            for m in panel.marks
        )
        band = f"differences within {number(100 * panel.threshold, 2)} % too small to matter"
        parts.append(f"{panel.title} ({panel.verdict}; {panel.rounds}; {band}): {each}.")
    return " ".join(parts)
