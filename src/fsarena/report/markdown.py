"""Markdown report, for issues, wikis and mailing lists: the answer first, provenance last."""

from __future__ import annotations

from fsarena.report import aging, articles, outcome, prose
from fsarena.report.answer import Answer
from fsarena.report.answer import build as build_answer
from fsarena.report.comparison import Comparison, comparison_line, header_lines
from fsarena.report.groups import explanations, split
from fsarena.report.powerloss import sections
from fsarena.session.file import Session


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_escape(h) for h in headers) + " |"]
    out.append("|" + "|".join(["---", *["---:"] * (len(headers) - 1)]) + "|")
    out.extend("| " + " | ".join(_escape(c) for c in row) + " |" for row in rows)
    return out


def _items(items: list[prose.Item]) -> list[str]:
    out = []
    for item in items:
        out.append(f"- **{item.title}**" + (f": {item.text}" if item.text else ""))
        out.extend(f"  - {detail}" for detail in item.details)
    return out


def answer_lines(answer: Answer) -> list[str]:
    first = answer.recommendation if answer.empty else f"Recommendation: {answer.recommendation}"
    out = ["## Answer", "", f"**{first}**", ""]
    out += [f"- **{k.title}**: {k.text}" for k in answer.kinds]
    if answer.ties:
        out.append(f"- {answer.ties}")
    if answer.caveats:
        out += ["", "Caveats:", "", *(f"- {c}" for c in answer.caveats)]
    return [*out, ""]


def _verdicts(comparison: Comparison) -> list[str]:
    kinds = prose.verdicts(comparison)
    if not kinds:
        return []
    return ["## Verdicts in detail", "", prose.METHOD, "", *_items(kinds), ""]


def provenance_lines(session: Session) -> list[str]:
    """Tool versions, and each filesystem's mkfs argv and mount options, as run."""
    out = ["## Environment and provenance", "", *(f"- {h}" for h in header_lines(session)), ""]
    if session.profiles_as_run:
        out += ["### Filesystems as run", ""]
        rows = [
            [
                name,
                p.driver or "",
                "`" + " ".join(p.mkfs) + "`",
                ",".join(p.mount_options) or "defaults",
            ]
            for name, p in sorted(session.profiles_as_run.items())
        ]
        out += [*_table(["filesystem", "driver", "mkfs", "mount options"], rows), ""]
    if session.tool_versions:
        out += ["### Tool versions", ""]
        rows = [[tool, version] for tool, version in sorted(session.tool_versions.items())]
        out += [*_table(["tool", "version"], rows), ""]
    return out


def render(comparison: Comparison) -> str:
    session = comparison.session
    groups = [line for words in explanations(session) for line in (words, "")]
    told = [f"> {_escape(line)}  " for line in outcome.lines(session)]
    head = ["# fsarena results", "", *told, *([""] if told else [])]
    head += answer_lines(build_answer(comparison))
    if line := aging.verdict(session):
        head += [f"**Age.** {line}", ""]
    head += [*groups, *_verdicts(comparison)]
    against = articles.markdown_lines(session)
    tail = provenance_lines(session)
    return "\n".join([*head, *body(comparison), "", *against, *tail]).rstrip() + "\n"


def body(comparison: Comparison, level: str = "##") -> list[str]:
    """The tables, device ceiling, failures and warnings: everything after the verdicts."""
    out: list[str] = []
    for table in comparison.tables:
        out.append(f"{level} {table.task} ({table.kind})")
        out.append("")
        if table.description:
            out.extend([table.description, ""])
        for part in split(comparison.session, table):  # by driver group (one if all kernel)
            if part.title:
                out.extend([f"**{part.title}.** {part.explanation}".rstrip(), ""])
            out.extend([*_table(part.headers, part.cells), ""])
        if line := comparison_line(comparison, table):
            out.extend([f"Verdict: {line}", ""])
    if ceilings := prose.ceiling_rows(comparison):
        out.extend([f"{level} Device ceiling", "", *_table(prose.CEILING_HEADERS, ceilings), ""])
    for section in [*aging.sections(comparison.session), *sections(comparison.session)]:
        out.extend([f"{level} {section.title}", ""])
        if section.rows:
            out.extend([*_table(section.headers, section.rows), ""])
        out.extend([*(f"- {_escape(note)}" for note in section.notes), ""])
    if comparison.failures:
        out.extend([f"{level} Failed, invalid or skipped runs", ""])
        for f in comparison.failures:
            out.append(
                f"- **{f.filesystem} {f.task}** (repetition {f.repetition}): "
                f"{f.status}: {_escape(f.error)}"
            )
        out.append("")
    if warnings := prose.warnings(comparison):
        out.extend([f"{level} Warnings", "", *_items(warnings)])
    return out
