"""Plain text for a terminal: the report's document (contents.py) laid out within its width.

Width: the COLUMNS environment variable when set, else the terminal's width
when standard output is one, else 80 columns (a file, a pipe, a log: the
width every pager and mail client shows whole). Tables wider than that are
cut into several blocks of columns, each repeating the filesystem column.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsarena.report.document import (
    Banner,
    Block,
    Figure,
    Forms,
    Heading,
    Items,
    Notes,
    Paragraph,
    Section,
    Table,
)

if TYPE_CHECKING:
    from fsarena.report.comparison import Comparison
from fsarena.report.units import NBSP, glued

DEFAULT_WIDTH = 80
MIN_WIDTH = 40


def terminal_width() -> int:
    """COLUMNS, else the terminal's width when stdout is a terminal, else 80."""
    if os.environ.get("COLUMNS", "").isdigit():
        return max(MIN_WIDTH, int(os.environ["COLUMNS"]))
    if sys.stdout is not None and sys.stdout.isatty():
        return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    return DEFAULT_WIDTH


# Leading columns that name a row: repeated in every block of a table cut to fit.
KEY_HEADERS = frozenset({"task", "filesystem", "workload", "state", "path", "host"})


def layout(headers: list[str], rows: list[list[str]], width: int, left: bool = False) -> list[str]:
    """A table as lines; cut into blocks of columns to fit `width`, each block with the
    columns that name a row (the first, and those after it in KEY_HEADERS). Figures are
    right-aligned; with `left` (cells of words, style "labels") every column is left-aligned."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    keys = 1
    while keys < len(headers) - 1 and headers[keys] in KEY_HEADERS:
        keys += 1
    named = sum(widths[:keys]) + 2 * (keys - 1)
    blocks: list[list[int]] = [[]]
    used = named
    for i in range(keys, len(headers)):
        if blocks[-1] and used + 2 + widths[i] > width:
            blocks.append([])
            used = named
        blocks[-1].append(i)
        used += 2 + widths[i]
    out: list[str] = []
    for block in blocks:
        keep = [*range(keys), *block]

        def line(cells: list[str], keep: list[int] = keep) -> str:
            names = [cells[i].ljust(widths[i]) for i in range(keys)]
            rest = [(cells[i].ljust if left else cells[i].rjust)(widths[i]) for i in keep[keys:]]
            return "  ".join([*names, *rest]).rstrip()

        if out:
            out.append("")
        out += [line(headers), "  ".join("-" * widths[i] for i in keep)]
        out += [line(r) for r in rows]
    return out


def wrap(text: str, indent: str, width: int, hang: str = "  ") -> list[str]:
    """The text in lines of at most `width`, never breaking a number from its unit."""
    lines = textwrap.wrap(
        glued(text),  # textwrap breaks at ASCII whitespace only, not at NBSP
        width,
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_on_hyphens=False,  # keep --options and file names whole
        break_long_words=True,  # a path longer than the line must still fit
    )
    return [line.replace(NBSP, " ") for line in lines] or [""]


def render(comparison: Comparison, width: int | None = None) -> str:
    from fsarena.report.contents import document  # the report's machinery, when a report is made

    return render_blocks(document(comparison), width or terminal_width())


def render_blocks(blocks: Sequence[Block], width: int = DEFAULT_WIDTH) -> str:
    return "\n".join(lines(blocks, width)).rstrip() + "\n"


def render_document(blocks: Sequence[Block], title: str) -> str:
    """Any command's document for a terminal (its level-1 heading is its title)."""
    return render_blocks(blocks, terminal_width())


def lines(blocks: Sequence[Block], width: int = DEFAULT_WIDTH) -> list[str]:
    """Blocks as lines: one blank line between them; what was not measured under the title."""
    out: list[str] = []
    for block in blocks:
        found = _top(block, width)
        if not found:
            continue
        if out and out[-1] and not isinstance(block, Banner):
            out.append("")
        out += found
    return out


def _top(block: Block, width: int) -> list[str]:
    if isinstance(block, Heading):
        return [block.text]
    if isinstance(block, Banner):
        return [line for t in banner_lines(block) for line in wrap(t, "", width)]
    if isinstance(block, Section):
        return _section(block, width)
    if isinstance(block, Paragraph):
        return wrap(_labelled(block), "", width)
    if isinstance(block, Notes) and not block.title:
        return [line for note in block.lines for line in wrap(note, "", width)]
    if isinstance(block, Forms):  # a terminal reads the short form
        return lines(block.short, width)
    return _inner(block, width, None)


def banner_lines(banner: Banner) -> list[str]:
    """The headline, the reasons counted, and what fixes them."""
    out = [banner.headline]
    if banner.reasons:
        n = len(banner.reasons)
        out.append(f"Why ({n} distinct reasons):" if n > 1 else "Why (1 reason):")
        out.extend(f"- {line}" for line in banner.reasons)
    out.extend(f"Fix: {fix}" for fix in banner.fixes)
    return out


def _heading(heading: Heading) -> str:
    if heading.level <= 2:
        return heading.text.upper()
    return f"{heading.text}  [{heading.tag}]" if heading.tag else heading.text


def _section(section: Section, width: int) -> list[str]:
    out: list[str] = []
    previous: Block | None = None
    for block in section.blocks:
        if isinstance(block, Section) and out and out[-1]:  # sections within: a blank between
            out.append("")
        out += _inner(block, width, previous)
        previous = block
    return [_heading(section.heading), *out] if out else []


def _labelled(p: Paragraph) -> str:
    return f"{p.label}: {p.text}" if p.label else p.text


def _inner(block: Block, width: int, previous: Block | None) -> list[str]:
    """A block inside a section: prose indented, tables from the margin."""
    if isinstance(block, Paragraph):
        if block.style == "method":
            return [*wrap(block.text, "  ", width, ""), ""]
        if block.style == "group":  # a driver group's rows: a blank line ends the group above
            gap = [""] if isinstance(previous, Table) else []
            return [
                *gap,
                *wrap(f"[{block.label}]", "  ", width),
                *wrap(block.text, "  ", width, ""),
            ]
        if block.style == "verdict":
            return wrap(f"{block.label.lower()}: {block.text}", "  ", width)
        return wrap(_labelled(block), "  ", width)
    if isinstance(block, Items):
        return _items(block, width)
    if isinstance(block, Notes):
        if block.title:
            notes = [line for n in block.lines for line in wrap(f"- {n}", "    ", width)]
            return [f"  {block.title}:", *notes]
        return [line for note in block.lines for line in wrap(note, "  ", width)]
    if isinstance(block, Table):
        if block.detail:
            return []
        if block.style == "text":  # cells of prose: one entry a row
            return [line for row in block.rows for line in _entry(block.headers, row, width)]
        left = block.style == "labels"
        return layout(list(block.headers), [list(r) for r in block.rows], width, left)
    if isinstance(block, Figure):
        return block.drawing.lines(width)
    if isinstance(block, Section):
        return _section(block, width)
    if isinstance(block, Forms):  # a terminal reads the short form
        out: list[str] = []
        for inner in block.short:
            out += _inner(inner, width, previous)
            previous = inner
        return out
    return []  # Heading and Banner belong at the top


def _entry(headers: Sequence[str], row: Sequence[str], width: int) -> list[str]:
    rest = "; ".join(f"{h}: {c}" for h, c in zip(headers[1:], row[1:], strict=True))
    return wrap(f"- {row[0]}: {rest}", "  ", width, "    ")


def _items(block: Items, width: int) -> list[str]:
    out = []
    for item in block.items:
        if block.style == "list":
            out += wrap(
                f"- {item.title}: {item.text}" if item.title else f"- {item.text}", "  ", width
            )
            continue
        head = f"{item.title}: {item.text}" if item.text else f"{item.title}:"
        out.extend(wrap(head, "  ", width))
        for detail in item.details:
            out.extend(wrap(f"- {detail}", "      ", width))
    return out
