"""Plain-text report for a terminal: the answer first, every line within the terminal's width.

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

from fsarena.report import aging, answer_chars, answer_figure, articles, outcome, prose
from fsarena.report.answer import Answer
from fsarena.report.answer import build as build_answer
from fsarena.report.groups import explanations, split
from fsarena.report.powerloss import sections
from fsarena.report.table import Comparison, comparison_line, header_lines
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


def layout(headers: list[str], rows: list[list[str]], width: int) -> list[str]:
    """A table as lines; cut into blocks of columns to fit `width`, each block with the
    columns that name a row (the first, and those after it in KEY_HEADERS)."""
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
            rest = [cells[i].rjust(widths[i]) for i in keep[keys:]]
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


def _items(items: list[prose.Item], width: int) -> list[str]:
    out = []
    for item in items:
        head = f"{item.title}: {item.text}" if item.text else f"{item.title}:"
        out.extend(wrap(head, "  ", width))
        for detail in item.details:
            out.extend(wrap(f"- {detail}", "      ", width))
    return out


def answer_lines(answer: Answer, width: int) -> list[str]:
    """The answer block: recommendation, one line per decided kind, the ties, the caveats."""
    first = answer.recommendation if answer.empty else f"Recommendation: {answer.recommendation}"
    out = ["ANSWER", *wrap(first, "  ", width)]
    if drawn := answer_figure.build(answer):  # the answer drawn, right under its words
        out += answer_chars.lines(drawn, width)
    for kind in answer.kinds:
        out += wrap(f"- {kind.title}: {kind.text}", "  ", width)
    if answer.ties:
        out += wrap(f"- {answer.ties}", "  ", width)
    if answer.caveats:
        out.append("  Caveats:")
        out += [line for c in answer.caveats for line in wrap(f"- {c}", "    ", width)]
    return [*out, ""]


def _verdicts(comparison: Comparison, width: int) -> list[str]:
    kinds = prose.verdicts(comparison)
    if not kinds:
        return []
    return [
        "VERDICTS IN DETAIL",
        *wrap(prose.METHOD, "  ", width, ""),
        "",
        *_items(kinds, width),
        "",
    ]


def render(comparison: Comparison, width: int | None = None) -> str:
    width = width or terminal_width()
    groups = [
        line for words in explanations(comparison.session) for line in (*wrap(words, "", width), "")
    ]
    provenance = [line for h in header_lines(comparison.session) for line in wrap(h, "", width)]
    # What was not measured comes first: the one thing a reader of a failed run needs.
    told = [line for t in outcome.lines(comparison.session) for line in wrap(t, "", width)]
    head = ["fsarena results", *told, "", *answer_lines(build_answer(comparison), width)]
    if line := aging.verdict(comparison.session):
        head += [*wrap(f"Age: {line} See 'Aged ... beside fresh' below.", "", width), ""]
    head += [*provenance, "", *groups, *_verdicts(comparison, width)]
    against = articles.text_lines(comparison.session, width)
    return "\n".join([*head, *body(comparison, width), "", *against]).rstrip() + "\n"


def body(comparison: Comparison, width: int = DEFAULT_WIDTH) -> list[str]:
    """The tables, device ceiling, failures and warnings: everything after the verdicts."""
    out: list[str] = []
    for table in comparison.tables:
        out.append(f"{table.task}  [{table.kind}]")
        if table.description:
            out.extend(wrap(table.description, "  ", width))
        for i, part in enumerate(split(comparison.session, table)):  # by driver group
            if part.title:
                if i:  # a blank line ends the group above: its last table is no heading's
                    out.append("")
                out.extend(wrap(f"[{part.title}]", "  ", width))
                out.extend(wrap(part.explanation, "  ", width, ""))
            out.extend(layout(part.headers, part.cells, width))
        if line := comparison_line(comparison, table):
            out.extend(wrap(f"verdict: {line}", "  ", width))
        out.append("")
    if ceilings := prose.ceiling_rows(comparison):
        out.extend(["DEVICE CEILING", *layout(prose.CEILING_HEADERS, ceilings, width), ""])
    for section in [*aging.sections(comparison.session), *sections(comparison.session)]:
        out.append(section.title)
        if section.rows:
            out.extend(layout(section.headers, section.rows, width))
        out.extend(line for note in section.notes for line in wrap(note, "  ", width))
        out.append("")
    if comparison.failures:
        out.append("FAILED, INVALID OR SKIPPED RUNS")
        for f in comparison.failures:
            text = f"{f.filesystem} {f.task} repetition {f.repetition}: {f.status}: {f.error}"
            out.extend(wrap(text, "  ", width))
        out.append("")
    if warnings := prose.warnings(comparison):
        out.extend(["WARNINGS", *_items(warnings, width)])
    return out
