"""Markdown for issues, wikis and mailing lists: the report's document (contents.py) laid out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsarena.report.document import (
    Banner,
    Block,
    Forms,
    Heading,
    Items,
    Notes,
    Paragraph,
    Section,
    Table,
)
from fsarena.report.text import banner_lines

if TYPE_CHECKING:
    from fsarena.report.comparison import Comparison


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def render(comparison: Comparison) -> str:
    from fsarena.report.contents import document  # the report's machinery, when a report is made

    return render_blocks(document(comparison))


def render_blocks(blocks: Sequence[Block], depth: int = 2) -> str:
    return "\n".join(lines(blocks, depth)).rstrip() + "\n"


def render_document(blocks: Sequence[Block], title: str) -> str:
    """Any command's document in Markdown (its level-1 heading is its title)."""
    return render_blocks(blocks)


def lines(blocks: Sequence[Block], depth: int = 2) -> list[str]:
    """Blocks as Markdown, each followed by a blank line; sections at heading `depth`."""
    return [line for block in blocks for line in _block(block, depth)]


def _block(block: Block, depth: int) -> list[str]:
    if isinstance(block, Heading):
        return [f"{'#' * block.level} {block.text}", ""]
    if isinstance(block, Banner):
        return [*(f"> {_escape(line)}  " for line in banner_lines(block)), ""]
    if isinstance(block, Section):
        inner = lines(block.blocks, depth + 1)
        return [f"{'#' * depth} {_heading(block.heading)}", "", *inner] if inner else []
    if isinstance(block, Paragraph):
        return [_paragraph(block), ""]
    if isinstance(block, Items):
        return [*_items(block), ""]
    if isinstance(block, Notes):
        notes = [f"- {_escape(note)}" for note in block.lines]
        return [*([f"{block.title}:", ""] if block.title else []), *notes, ""]
    if isinstance(block, Table):
        title = [f"{'#' * depth} {block.title}", ""] if block.title else []
        return [*title, *_table(block), ""]
    if isinstance(block, Forms):  # read top to bottom: the short form
        return lines(block.short, depth)
    # A figure: Markdown pasted into an issue has nowhere to put the drawing; its words
    # are in the report's text already.
    return []


def _heading(heading: Heading) -> str:
    return f"{heading.text} ({heading.tag})" if heading.tag else heading.text


def _paragraph(p: Paragraph) -> str:
    if p.style == "lead":
        return f"**{p.label}: {p.text}**" if p.label else f"**{p.text}**"
    if p.style == "aside":
        return f"_{p.text}_"
    if p.style == "verdict":
        return f"{p.label}: {p.text}"
    return f"**{p.label}.** {p.text}".rstrip() if p.label else p.text


def _table(table: Table) -> list[str]:
    align = "---" if table.style in ("text", "labels") else "---:"
    out = ["| " + " | ".join(_escape(h) for h in table.headers) + " |"]
    out.append("|" + "|".join(["---", *[align] * (len(table.headers) - 1)]) + "|")
    out.extend("| " + " | ".join(_escape(c) for c in row) + " |" for row in table.rows)
    return out


def _items(block: Items) -> list[str]:
    out = []
    for item in block.items:
        if not item.title:
            out.append(f"- {item.text}")
            continue
        out.append(f"- **{item.title}**" + (f": {item.text}" if item.text else ""))
        out.extend(f"  - {detail}" for detail in item.details)
    return out
