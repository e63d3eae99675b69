"""Markdown tables, for issues, wikis and mailing lists."""

from __future__ import annotations

from fsarena.report.table import Comparison, grid, header_lines


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def render(comparison: Comparison) -> str:
    session = comparison.session
    out = ["# fsarena results", "", *(f"- {line}" for line in header_lines(session)), ""]
    for table in comparison.tables:
        out.append(f"## {table.task} ({table.kind})")
        out.append("")
        if table.description:
            out.extend([table.description, ""])
        headers, rows = grid(table)
        out.append("| " + " | ".join(_escape(h) for h in headers) + " |")
        out.append("|" + "|".join(["---", *["---:"] * (len(headers) - 1)]) + "|")
        out.extend("| " + " | ".join(_escape(c) for c in row) + " |" for row in rows)
        out.append("")
    if comparison.failures:
        out.extend(["## Failed or skipped runs", ""])
        for f in comparison.failures:
            out.append(
                f"- **{f.filesystem} {f.task}** (repetition {f.repetition}): "
                f"{f.status}: {_escape(f.error)}"
            )
        out.append("")
    if session.warnings:
        out.extend(["## Warnings", ""])
        out.extend(f"- **{w.code}**: {w.message}" for w in session.warnings)
    return "\n".join(out).rstrip() + "\n"
