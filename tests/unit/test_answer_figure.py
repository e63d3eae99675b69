"""The answer drawn (report/answer_figure.py, answer_svg.py, answer_chars.py): the marks are
the verdict's own pairs and intervals, ties read as ties, and it fits a phone or 80 columns."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fsarena.analysis.answer import OPEN, OVERALL, WIN, Answer, Judged, kind_threshold
from fsarena.analysis.evidence import Index
from fsarena.analysis.kinds import PRACTICAL
from fsarena.analysis.ranking import rank
from fsarena.analysis.scope import verdict_scope
from fsarena.report import answer_chars, answer_figure, answer_svg, build
from fsarena.report.answer_figure import AnswerFigure, Mark, Panel
from fsarena.session.file import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DRAWN = ("three-filesystems", "session-v1")  # the recorded sessions with an answer to draw


def _drawn(fixture: str) -> tuple[Answer, AnswerFigure]:
    comparison = build(load(FIXTURES / f"{fixture}.json"))
    assert comparison.verdicts is not None
    figure = answer_figure.build(comparison.verdicts.answer)
    assert figure is not None
    return comparison.verdicts.answer, figure


@pytest.mark.parametrize("fixture", DRAWN)
def test_every_mark_is_the_verdicts_own_pair_turned_to_the_reference(fixture: str) -> None:
    answer, figure = _drawn(fixture)
    assert [p.key for p in figure.panels] == [OVERALL, *(k for k in answer.judged if k != OVERALL)]
    for panel in figure.panels:
        ranking = answer.judged[panel.key].ranking
        assert {m.filesystem for m in panel.marks} == set(ranking.order) - {figure.reference}
        for mark in panel.marks:
            pair = ranking.pair(figure.reference, mark.filesystem)
            assert pair is not None
            if pair.better == figure.reference:
                assert (mark.ratio, mark.low, mark.high) == (pair.ratio, pair.low, pair.high)
            else:  # the other filesystem is ahead: the same interval, read from the reference
                assert mark.ratio == pytest.approx(1 / pair.ratio)
                assert (mark.low, mark.high) == pytest.approx((1 / pair.high, 1 / pair.low))
            assert mark.differs == pair.significant
    # The figures the words print are the figures drawn.
    marks = {(p.key, m.filesystem): m for p in figure.panels for m in p.marks}
    for kind in answer.kinds:
        if kind.status == WIN and kind.runner_up:
            mark = marks[(kind.kind, kind.runner_up)]
            assert (mark.ratio, mark.low, mark.high) == (kind.ratio, kind.low, kind.high)
    if answer.recommended:
        overall = figure.panels[0].marks[0]
        assert (overall.ratio, overall.low, overall.high) == (answer.ratio, answer.low, answer.high)


@pytest.mark.parametrize("fixture", DRAWN)
def test_the_band_is_the_threshold_the_words_were_judged_against(fixture: str) -> None:
    session = load(FIXTURES / f"{fixture}.json")
    comparison = build(session)
    assert comparison.verdicts is not None
    figure = answer_figure.build(comparison.verdicts.answer)
    assert figure is not None
    index = Index(verdict_scope(session))
    verdicts = {v.kind: v for v in comparison.verdicts.kinds}
    for panel in figure.panels:
        expected = PRACTICAL if panel.key == OVERALL else kind_threshold(index, verdicts[panel.key])
        assert panel.threshold == expected
        assert panel.band == pytest.approx((1 / (1 + expected), 1 + expected))


@pytest.mark.parametrize("fixture", DRAWN)
def test_ties_are_drawn_as_ties(fixture: str) -> None:
    """A hollow mark exactly when the verdict found no difference: its interval crosses 1×."""
    answer, figure = _drawn(fixture)
    marks = [m for p in figure.panels for m in p.marks]
    for mark in marks:
        assert mark.differs == (not mark.low <= 1 <= mark.high), mark
    ties = sum(not m.differs for m in marks)
    text = "\n".join(answer_chars.lines(figure, 80))
    rows = text.split("\n")[3:-2]
    assert sum(r.count("○") for r in rows) == ties
    assert sum(r.count("●") for r in rows) == len(marks) - ties
    svg = answer_svg.svg(figure)
    assert svg.count(f'fill="{answer_svg.INK}" stroke') == len(marks) - ties
    assert svg.count('fill="#ffffff" stroke') == ties
    if fixture == "three-filesystems":  # nothing resolved: every mark a tie, no recommendation
        assert ties == len(marks) and answer.status == OPEN
        assert "not a recommendation" in figure.title


def test_the_reference_is_the_recommended_one_and_a_faster_one_is_left_of_it() -> None:
    """The recommendation can pass over the best estimate (a filesystem not recommendable):
    the figure is drawn against the recommended one, and the faster one reads under 1×."""
    ranking = rank({"a": [1.0, 1.01, 0.99, 1.0], "b": [2.0, 2.02, 1.98, 2.0]}, False)
    assert ranking.order[0] == "a"
    answer = Answer(
        "b ...", (), "", (), recommended=("b",), status=WIN,
        judged={"large_files": Judged(ranking, 0.05, "faster than")},
    )  # fmt: skip
    figure = answer_figure.build(answer)
    assert figure is not None and figure.reference == "b" and figure.recommended == ("b",)
    assert figure.title.endswith("the recommended one")
    (mark,) = figure.panels[0].marks
    assert mark.filesystem == "a" and mark.differs
    assert mark.ratio == pytest.approx(0.5, rel=0.02) and mark.high < 1
    assert (figure.better, figure.worse) == ("faster", "slower")


def test_no_figure_without_an_interval_to_draw() -> None:
    """One repetition each: points alone would look like a result; nothing is drawn."""
    ranking = rank({"a": [1.0], "b": [2.0]}, False)
    assert math.isnan(ranking.pairs[0].low)
    answer = Answer(
        "none ...", (), "", (), judged={"large_files": Judged(ranking, 0.05, "faster than")}
    )
    assert answer_figure.build(answer) is None
    assert answer_figure.build(Answer("No answer: ...", (), "", ())) is None


def test_no_figure_where_the_answer_has_no_two_filesystems() -> None:
    session = load(FIXTURES / "session-v1.json")
    plan = session.plan.model_copy(update={"filesystems": ["ext4"]})
    runs = [r for r in session.runs if r.filesystem == "ext4"]
    comparison = build(session.model_copy(update={"plan": plan, "runs": runs}))
    assert comparison.verdicts is None or answer_figure.build(comparison.verdicts.answer) is None


def _wide() -> AnswerFigure:
    """An interval beyond every scale, and one inside it."""
    marks = (
        Mark("ext4", 1.3, 0.0, math.inf, False),
        Mark("btrfs-with-a-long-name", 1.5, 1.2, 1.9, True),
    )
    panel = Panel("large_files", "large files", "not resolved", 0.1, 2, marks)
    return AnswerFigure("xfs", (), (panel,), answer_figure.scale([panel]), "faster", "slower")


def test_an_interval_off_the_scale_is_drawn_clipped_and_told_in_words() -> None:
    figure = _wide()
    assert figure.ticks == (0.5, 1.0, 2.0)  # the narrowest holding 1.2-1.9 and the band
    row = next(line for line in answer_chars.lines(figure, 80) if line.lstrip().startswith("ext4"))
    plot = row.split("ext4", 1)[1].split("1.30×")[0].strip()
    assert plot.startswith("◀") and plot.endswith("▶")
    assert "1.30× (under 0.01–over 100)" in row
    assert answer_svg.svg(figure).count("<path ") == 2  # two arrowheads


@pytest.mark.parametrize("width", [40, 60, 80, 132])
@pytest.mark.parametrize("fixture", DRAWN)
def test_the_terminal_figure_fits_the_width_on_one_shared_scale(fixture: str, width: int) -> None:
    _, figure = _drawn(fixture)
    lines = answer_chars.lines(figure, width)
    assert max(map(len, lines)) <= width
    names = {m.filesystem for p in figure.panels for m in p.marks}
    rows = [line for line in lines if line.strip().split(" ")[0] in names]
    assert len(rows) == sum(len(p.marks) for p in figure.panels)
    # The reference (1×) is one column for every row: every interval is on one scale.
    (column,) = {i for r in rows for i, c in enumerate(r) if c in "│┼"}
    assert all(row[column] in "│┼●○" for row in rows)
    ticks = next(line for line in lines if f"{figure.reference} = 1×" in line)
    label = ticks.index(f"{figure.reference} = 1×")
    assert label <= column < label + len(f"{figure.reference} = 1×")


@pytest.mark.parametrize("fixture", DRAWN)
def test_the_svg_is_accessible_and_tells_every_figure_in_words(fixture: str) -> None:
    _, figure = _drawn(fixture)
    svg = answer_svg.svg(figure)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("role") == "img"
    title, desc = (root.find(f"{ns}{tag}") for tag in ("title", "desc"))
    assert title is not None and desc is not None
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert title.text == figure.title and desc.text == answer_figure.alt(figure)
    assert "<script" not in svg and "href" not in svg
    for panel in figure.panels:
        assert panel.title in (desc.text or "")
        for mark in panel.marks:
            told = answer_figure.mark_text(mark)
            assert told in (desc.text or "") and f">{told}<" in svg
    labels = [t for t in root.iter(f"{ns}text")]
    assert f"{figure.reference} = 1×" in [t.text for t in labels]


def _luminance(colour: str) -> float:
    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_its_encodings_survive_grayscale() -> None:
    """A difference against a tie is filled against hollow (ink against white); the band
    and the grid are light, the ink dark: told apart by lightness alone."""
    white = _luminance("#ffffff")
    assert white - _luminance(answer_svg.INK) > 0.8
    assert 0.05 < white - _luminance(answer_svg.BAND) < 0.2
    assert _luminance(answer_svg.BAND) - _luminance(answer_svg.INK) > 0.6
    assert _luminance(answer_svg.GREY) < 0.5  # secondary words still read on white
    assert re.fullmatch(r"#[0-9a-f]{6}", answer_svg.REF)


def test_a_tie_crosses_the_reference_column_and_a_difference_stays_off_it() -> None:
    """Columns are coarse (here about 7 % each): an interval of 1.03-1.07× must still read
    as not reaching 1×, and one of 0.99-1.89× as crossing it."""
    near = (
        Mark("differs", 1.05, 1.03, 1.07, True),
        Mark("ties", 1.37, 0.99, 1.89, False),
        Mark("ahead", 0.95, 0.93, 0.97, True),
    )
    wide = (Mark("wide", 1.14, 0.38, 3.4, False),)
    panels = (
        Panel(OVERALL, "overall (weighted)", "not resolved", 0.05, 6, near),
        Panel("listing_search", "listing and search", "not resolved", 0.05, 6, wide),
    )
    figure = AnswerFigure("ext4", (), panels, answer_figure.scale(list(panels)), "x", "y")
    assert figure.ticks[0] <= 0.38 and figure.ticks[-1] >= 3.4
    lines = answer_chars.lines(figure, 80)
    rows = {line.split()[0]: line for line in lines if line.startswith("    ")}
    (column,) = {i for r in rows.values() for i, c in enumerate(r) if c in "│┼"}
    assert rows["differs"][column] == "│" and "┼" not in rows["differs"]
    assert rows["ahead"][column] == "│" and "┼" not in rows["ahead"]
    assert rows["ties"][column] in "┼○" and rows["ties"][column - 1] in "├─"
    assert rows["wide"][column] in "┼○"


def test_a_panel_says_the_range_of_rounds_when_some_were_eliminated() -> None:
    """Seen in a default run: the drawing said 'n = 7' (btrfs, out after 7 rounds) beside
    a recommendation that said 'n = 10' (xfs and ext4 ran all ten)."""
    marks = (Mark("ext4", 1.12, 1.02, 1.24, True), Mark("btrfs", 1.25, 1.02, 1.54, True))
    eliminated = Panel("large_files", "large files", "xfs ahead", 0.05, 7, marks, n_most=10)
    every = Panel("large_files", "large files", "xfs ahead", 0.05, 10, marks, n_most=10)
    assert (eliminated.rounds, every.rounds) == ("n = 7-10", "n = 10")
    figure = AnswerFigure("xfs", ("xfs",), (eliminated,), answer_figure.scale([eliminated]),
                          "faster", "slower")  # fmt: skip
    assert "n = 7-10" in answer_svg.svg(figure)
    assert any("n = 7-10" in line for line in answer_chars.lines(figure, 80))
