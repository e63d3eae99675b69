"""Plain-text tables for a terminal."""

from __future__ import annotations

import textwrap

from fsarena.report import aged, articles, outcome, prose
from fsarena.report.groups import explanations, split
from fsarena.report.powerloss import sections
from fsarena.report.table import Comparison, comparison_line, header_lines

WIDTH = 100


def _layout(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def _wrap(text: str, indent: str, hang: str = "  ") -> list[str]:
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_on_hyphens=False,  # keep --options and file names whole
        break_long_words=False,
    )


def _items(items: list[prose.Item]) -> list[str]:
    out = []
    for item in items:
        head = f"{item.title}: {item.text}" if item.text else f"{item.title}:"
        out.extend(_wrap(head, "  "))
        for detail in item.details:
            out.extend(_wrap(f"- {detail}", "      "))
    return out


def _verdicts(comparison: Comparison) -> list[str]:
    kinds = prose.verdicts(comparison)
    if not kinds:
        return []
    out = ["VERDICTS", *_wrap(prose.METHOD, "  ", ""), "", *_items(kinds), ""]
    return [*out, *_items(prose.recommendation(comparison)), ""]


def render(comparison: Comparison) -> str:
    groups = [
        line for words in explanations(comparison.session) for line in (*_wrap(words, ""), "")
    ]
    # The outcome first, at 80 columns: the one thing a reader of a failed run needs.
    told = [
        wrapped
        for line in outcome.lines(comparison.session)
        for wrapped in textwrap.wrap(line, 80, subsequent_indent="  ", break_on_hyphens=False)
    ]
    head = ["fsarena results", *told, *([""] if told else []), *header_lines(comparison.session)]
    head += ["", *groups]
    head += _verdicts(comparison)
    if line := aged.verdict(comparison.session):
        head += [*_wrap(f"Age: {line} See 'Aged ... beside fresh' below.", ""), ""]
    against = articles.text_lines(comparison.session)
    return "\n".join([*head, *body(comparison), "", *against]).rstrip() + "\n"


def body(comparison: Comparison) -> list[str]:
    """The tables, device ceiling, failures and warnings: everything after the verdicts."""
    out: list[str] = []
    for table in comparison.tables:
        title = f"{table.task}  [{table.kind}]"
        out.append(title)
        if table.description:
            out.append(f"  {table.description}")
        for part in split(comparison.session, table):  # by driver group (one if all kernel)
            if part.title:
                out.append(f"  [{part.title}]")
                out.extend(_wrap(part.explanation, "  ", ""))
            out.extend(_layout(part.headers, part.cells))
        if line := comparison_line(comparison, table):
            out.extend(_wrap(f"verdict: {line}", "  "))
        out.append("")
    if ceilings := prose.ceiling_rows(comparison):
        out.extend(["DEVICE CEILING", *_layout(prose.CEILING_HEADERS, ceilings), ""])
    for section in [*aged.sections(comparison.session), *sections(comparison.session)]:
        out.append(section.title)
        if section.rows:
            out.extend(_layout(section.headers, section.rows))
        out.extend(f"  {note}" for note in section.notes)
        out.append("")
    if comparison.failures:
        out.append("FAILED, INVALID OR SKIPPED RUNS")
        for f in comparison.failures:
            out.append(
                f"  {f.filesystem} {f.task} repetition {f.repetition}: {f.status}: {f.error}"
            )
        out.append("")
    if warnings := prose.warnings(comparison):
        out.extend(["WARNINGS", *_items(warnings)])
    return out
