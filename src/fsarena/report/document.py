"""A report as a document: the blocks every format renders, defined once.

`contents.document(comparison)` decides what a report says and in which order,
as a tuple of these blocks; text, Markdown and HTML only lay them out (as
hyperfine's export/markup.rs lays out one table for every markup). A new
section is a producer that returns blocks and one line in `document`; a new
format is a renderer of these types and one row in `formats.FORMATS`.

The blocks are data (frozen, no rendering in them). A few carry a `style`, a
word that says what the block is for ("lead": the recommendation; "method":
how something was done, read on demand; "list": items one line each): a
renderer may lay such a block out its own way, never leave it out. `detail`
marks reference material a terminal report does not print (the tool versions);
it is the one thing a format may skip. Where a page has room for more than a
report read top to bottom (a wider table of a task, its chart's neighbours, the
whole provenance), the document says both as `Forms`: text and Markdown lay out
the short form, HTML the full one; neither is left out of the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Drawing(Protocol):
    """What a figure draws: SVG for a page, lines for a terminal ([] when it has none)."""

    def svg(self) -> str: ...

    def lines(self, width: int) -> list[str]: ...


@dataclass(frozen=True)
class Heading:
    """A section's title. Level 1 is the report's own; `tag` qualifies it ("[kind]")."""

    text: str
    level: int = 2
    tag: str = ""
    anchor: str = ""  # an id pages link to ("answer", "task-mkfs"); "" for none


@dataclass(frozen=True)
class Paragraph:
    """Prose. `label` leads it ("Age", "Verdict"); `style`: "lead", "method" or ""."""

    text: str
    label: str = ""
    style: str = ""


@dataclass(frozen=True)
class Item:
    """One entry: a title, its text and the details that say why."""

    title: str
    text: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Items:
    """Entries with their details (verdicts, warnings); style "list": one line each."""

    items: tuple[Item, ...]
    style: str = ""
    anchor: str = ""


@dataclass(frozen=True)
class Table:
    """Headers and rows of cells, the first column naming the row; style "kv": key, value."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    # "" (figures), "text" (cells of prose), "labels" (short words and figures with their
    # marks, left-aligned), "flags" (last column: flags), "kv"
    style: str = ""
    title: str = ""
    detail: bool = False


@dataclass(frozen=True)
class Notes:
    """Short remarks, each its own bullet, under an optional title ("Caveats")."""

    lines: tuple[str, ...]
    title: str = ""
    style: str = ""


@dataclass(frozen=True)
class Banner:
    """What was not measured, said first: the headline, the reasons and the fixes."""

    headline: str
    reasons: tuple[str, ...]
    fixes: tuple[str, ...]


@dataclass(frozen=True)
class Figure:
    """A drawing with its title and the words a reader without it gets (alt text)."""

    name: str  # file-safe: the chart files are NAME.svg and NAME.png
    title: str
    alt: str
    drawing: Drawing
    png: bytes | None = None
    caption: str = ""  # what a page prints under the drawing; "" for the title


@dataclass(frozen=True)
class Forms:
    """One content in two forms: `short` for a report read top to bottom (text, Markdown),
    `full` for a page with room for wide tables and folds to keep reference in (HTML)."""

    short: tuple[Block, ...]
    full: tuple[Block, ...]


@dataclass(frozen=True)
class Section:
    """A heading and what belongs under it; pages make it a <section>."""

    heading: Heading
    blocks: tuple[Block, ...]
    anchor: str = ""
    style: str = ""

    @property
    def title(self) -> str:
        return self.heading.text

    @property
    def headers(self) -> tuple[str, ...]:
        """The first table's headers (a table section's), () without a table."""
        return next((b.headers for b in self.blocks if isinstance(b, Table)), ())

    @property
    def rows(self) -> tuple[tuple[str, ...], ...]:
        return next((b.rows for b in self.blocks if isinstance(b, Table)), ())

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(line for b in self.blocks if isinstance(b, Notes) for line in b.lines)


Block = Heading | Paragraph | Items | Table | Notes | Banner | Figure | Forms | Section


def table_section(
    title: str, headers: list[str], rows: list[list[str]], notes: list[str]
) -> Section:
    """A titled table with its notes below (aging, power loss): no table when it has no rows."""
    table = Table(tuple(headers), tuple(tuple(r) for r in rows))
    blocks: tuple[Block, ...] = (*((table,) if rows else ()), Notes(tuple(notes)))
    return Section(Heading(title, level=3), blocks)
