"""The HTML report: one self-contained offline file, verdicts first, charts inlined as SVG.

Nothing is fetched when it is opened: no scripts, no web fonts, no external
stylesheets or images (a test opens it in chromium with the network blocked).
The same charts can also be written as PNG and SVG files beside it; the page
then links to them (links are not fetched).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

from fsarena.report.document import Block, Figure, Forms, Section
from fsarena.report.units import glued

if TYPE_CHECKING:
    from fsarena.report.charts import Chart
    from fsarena.report.comparison import Comparison


def _glue(value: object) -> object:
    """Every text printed into the page, with non-breaking spaces between numbers and units."""
    if isinstance(value, str) and not isinstance(value, Markup):  # Markup: charts, our HTML
        return glued(value)
    return value


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("fsarena.report", "templates"),
    autoescape=True,
    finalize=_glue,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
# The kind of a document block (Paragraph, Figure, ...): the macros render by kind.
_ENV.filters["block_type"] = lambda block: type(block).__name__


def render(comparison: Comparison) -> str:
    """The report with its charts inlined (no chart files)."""
    html, _ = bundle(comparison, None)
    return html


def bundle(comparison: Comparison, asset_dir: str | None) -> tuple[str, list[Chart]]:
    """The report's document as a page, and with asset_dir its charts as files (the page
    links them)."""
    # The report's machinery (statistics, matplotlib's charts) loads here, not with the
    # module: a page of other blocks (`fsarena share view`) needs the template alone.
    from fsarena.report import charts, contents
    from fsarena.report.drawing import draw_all

    blocks = contents.document(comparison)
    drawn = [(f, d) for f in figures(blocks) if isinstance(d := f.drawing, charts.ChartDrawing)]
    # Every chart now, on every core: the page inlines the SVGs, the files are the PNGs.
    draw_all([d for _, d in drawn], png=asset_dir is not None)
    html = page(blocks, _title(comparison), asset_dir)
    if asset_dir is None:
        return html, []
    return html, [charts.chart(f, png=True) for f, _ in drawn]


def page(blocks: Sequence[Block], title: str, asset_dir: str | None = None) -> str:
    """A document as one page: its title, its blocks, links to its sections."""
    context = {"title": title, "blocks": blocks, "nav": navigation(blocks), "asset_dir": asset_dir}
    return template("report.html.j2").render(context)


def render_document(blocks: Sequence[Block], title: str) -> str:
    """Any command's document as one page (its charts drawn here, one by one)."""
    return page(blocks, title)


def navigation(blocks: Sequence[Block]) -> list[tuple[str, str]]:
    """A link to each section with an anchor after the first (the answer, on screen)."""
    sections = [b for b in blocks if isinstance(b, Section)]
    found = [(a, s.title) for s in sections if (a := s.anchor or s.heading.anchor)]
    return found[1:]


def figures(blocks: Sequence[Block]) -> Iterator[Figure]:
    """Every figure a page shows, in order (a page lays out the full form)."""
    for block in blocks:
        if isinstance(block, Figure):
            yield block
        elif isinstance(block, Section):
            yield from figures(block.blocks)
        elif isinstance(block, Forms):
            yield from figures(block.full)


def template(name: str) -> jinja2.Template:
    return _ENV.get_template(name)


def _title(comparison: Comparison) -> str:
    fs = comparison.session.filesystems()
    return f"fsarena: {', '.join(fs)} — {comparison.session.plan.suite}"
