"""Plain-text tables for a terminal."""

from __future__ import annotations

from fsarena.report.table import Comparison, grid, header_lines


def _layout(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def render(comparison: Comparison) -> str:
    session = comparison.session
    out = ["fsarena results", *header_lines(session), ""]
    for table in comparison.tables:
        title = f"{table.task}  [{table.kind}]"
        out.append(title)
        if table.description:
            out.append(f"  {table.description}")
        headers, rows = grid(table)
        out.extend(_layout(headers, rows))
        out.append("")
    if comparison.failures:
        out.append("FAILED OR SKIPPED RUNS")
        for f in comparison.failures:
            out.append(
                f"  {f.filesystem} {f.task} repetition {f.repetition}: {f.status}: {f.error}"
            )
        out.append("")
    for w in session.warnings:
        out.append(f"warning [{w.code}]: {w.message}")
    return "\n".join(out).rstrip() + "\n"
