"""The report is one document: every format shows its sections in the order contents.py gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.report import build, markdown, text
from fsarena.report.contents import document
from fsarena.report.document import Figure, Heading, Notes, Paragraph, Section, Table
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
