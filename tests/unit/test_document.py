"""The report is one document: every format shows its sections in the order contents.py gives."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from fsarena.report import build, charts, contents, html, markdown, text
from fsarena.report.comparison import Comparison
from fsarena.report.contents import document
from fsarena.report.document import (
    Block,
    Figure,
    Forms,
    Heading,
    Notes,
    Paragraph,
    Section,
    Table,
)
from fsarena.session.file import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _positions(page: str, needles: list[str]) -> list[int]:
    found = [page.find(n) for n in needles]
    assert -1 not in found, [n for n, at in zip(needles, found, strict=True) if at < 0]
    return found


@pytest.mark.parametrize("fixture", ["session-v2", "three-filesystems"])
def test_text_and_markdown_show_the_documents_sections_in_its_order(fixture: str) -> None:
    comparison = build(load(FIXTURES / f"{fixture}.json"))
    blocks = document(comparison)
    sections = [b for b in blocks if isinstance(b, Section) and b.heading.level == 2]
    # A section of charts alone (the heat map) is drawn on pages; text and Markdown have the
    # numbers in the tables.
    sections = [s for s in sections if not all(isinstance(b, Figure) for b in s.blocks)]
    provenance = next(b for b in blocks if isinstance(b, Notes) and b.style == "provenance")
    # The provenance lines sit after the answer and before the verdicts in every format.
    titles = [s.heading.text for s in sections if s.heading.text != "Environment and provenance"]
    first = provenance.lines[0]
    order = [titles[0], first, *titles[1:]]
    flat = text.render(comparison, 200)
    assert _positions(flat, [t.upper() if t != first else t for t in order]) == sorted(
        _positions(flat, [t.upper() if t != first else t for t in order])
    )
    page = markdown.render(comparison)
    marked = [f"## {t}" if t != first else f"- {t}" for t in order]
    assert _positions(page, marked) == sorted(_positions(page, marked))


class _Drawn:
    """A drawing as the answer's figure will be: SVG for pages, lines for a terminal."""

    def svg(self) -> str:
        return "<svg></svg>"

    def lines(self, width: int) -> list[str]:
        return [f"ext4 |==== {width}"]


def test_a_figure_draws_its_lines_in_the_terminal_and_is_left_out_of_markdown() -> None:
    blocks = (
        Heading("fsarena results", level=1),
        Section(
            Heading("Answer"), (Paragraph("ext4", style="lead"), Figure("a", "t", "alt", _Drawn()))
        ),
    )
    assert "  ext4\next4 |==== 60" in text.render_blocks(blocks, 60)
    assert "|====" not in markdown.render_blocks(blocks)


def test_reference_tables_are_for_documents_with_room_not_the_terminal() -> None:
    detail = Table(
        ("tool", "version"), (("mkfs.xfs", "6.1.0"),), title="Tool versions", detail=True
    )
    blocks = (Section(Heading("Environment and provenance"), (detail,)),)
    assert text.render_blocks(blocks).strip() == ""  # a section with nothing to show: no heading
    assert "### Tool versions" in markdown.render_blocks(blocks)


def _headings(blocks: tuple[Block, ...] | list[Block]) -> list[str]:
    """Every section heading of a document, nested ones too, in the form a page shows."""
    found = []
    for b in blocks:
        if isinstance(b, Section):
            found.append(b.heading.text)
            found += _headings(list(b.blocks))
        elif isinstance(b, Forms):
            found += _headings(list(b.full))
    return found


@pytest.mark.parametrize("fixture", ["full-v2", "three-filesystems"])
def test_the_page_shows_every_section_of_the_document(fixture: str) -> None:
    """The HTML renders the document, not a template of its own: each section's heading
    is a heading of the page, in the document's order (full-v2's power loss too)."""
    comparison = build(load(FIXTURES / f"{fixture}.json"))
    page = html.render(comparison)
    shown = [unescape(h) for h in re.findall(r"<h[23]>([^<]*?)(?: <small>|</h[23]>)", page)]
    wanted = _headings(document(comparison))
    assert [h for h in shown if h in wanted] == wanted


def test_a_new_section_is_one_producer_and_one_line_in_every_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What adding a report section takes: a producer's blocks placed by contents.document;
    no renderer or template knows it."""
    comparison = build(load(FIXTURES / "three-filesystems.json"))
    original = contents.document

    def with_one_more(c: Comparison) -> tuple[Block, ...]:
        new = Section(Heading("Throwaway", anchor="throwaway"), (Paragraph("said once"),))
        return (*original(c), new)

    # every format asks contents.document when it renders: no renderer holds its own
    monkeypatch.setattr(contents, "document", with_one_more)
    assert "THROWAWAY\n  said once" in text.render(comparison, 80)
    assert "## Throwaway\n\nsaid once" in markdown.render(comparison)
    page = html.render(comparison)
    assert '<section id="throwaway">\n<h2>Throwaway</h2>\n<p>said once</p>' in page
    assert '<a href="#throwaway">Throwaway</a>' in page  # and the page links to it


def test_text_and_markdown_never_draw_a_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Charts are Figure blocks drawn when a page asks: a terminal report pays nothing."""

    def refuse(*_: object) -> None:
        raise AssertionError("a chart was drawn")

    monkeypatch.setattr(charts, "heat_figure", refuse)
    monkeypatch.setattr(charts, "task_figure", refuse)
    monkeypatch.setattr(charts, "grouped_figure", refuse)
    comparison = build(load(FIXTURES / "three-filesystems.json"))
    assert text.render(comparison, 80) and markdown.render(comparison)
    with pytest.raises(AssertionError, match="a chart was drawn"):
        html.render(comparison)
