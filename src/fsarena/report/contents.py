"""What a report says, in which order: the one function that lays out every report.

`document(comparison)` returns the blocks of report.document; each format
(formats.FORMATS) renders them and decides nothing about order or content.
The producers live beside what they describe (outcome, answer, articles,
aging, powerloss, groups, prose); this module only puts their blocks in order.
"""

from __future__ import annotations

from fsarena.report import aging, answer_figure, articles, compression, outcome, powerloss, prose
from fsarena.report.answer import build as build_answer
from fsarena.report.answer_drawing import AnswerDrawing
from fsarena.report.comparison import Comparison, comparison_line, header_lines
from fsarena.report.document import (
    Block,
    Figure,
    Heading,
    Item,
    Items,
    Notes,
    Paragraph,
    Section,
    Table,
)
from fsarena.report.groups import explanations, split
from fsarena.report.rows import TaskTable
from fsarena.session.file import Session

TITLE = "fsarena results"


def document(comparison: Comparison) -> tuple[Block, ...]:
    """The report: what was not measured, the answer, how it was measured, the evidence."""
    session = comparison.session
    blocks: list[Block] = [Heading(TITLE, level=1)]
    if banner := outcome.banner(session):  # what was not measured, before anything else
        blocks.append(banner)
    blocks.append(answer_section(comparison))
    if line := aging.verdict(session):
        blocks.append(Paragraph(f"{line} See 'Aged ... beside fresh' below.", label="Age"))
    blocks.append(Notes(tuple(header_lines(session)), style="provenance"))
    blocks += [Paragraph(words) for words in explanations(session)]
    blocks += verdicts_section(comparison)
    blocks += body(comparison)
    blocks += articles.blocks(session)
    blocks.append(provenance_section(session))
    return tuple(blocks)


def answer_section(comparison: Comparison) -> Section:
    """The recommendation, one line per decided kind of work, the ties, the caveats."""
    answer = build_answer(comparison)
    lead = Paragraph(
        answer.recommendation, label="" if answer.empty else "Recommendation", style="lead"
    )
    kinds = [Item(k.title, k.text) for k in answer.kinds]
    if answer.ties:
        kinds.append(Item("", answer.ties))
    blocks: list[Block] = [lead]
    if drawn := answer_figure.build(answer):  # the answer drawn, right under its words
        alt = answer_figure.alt(drawn)
        blocks.append(
            Figure("answer", drawn.title, alt, AnswerDrawing(drawn), caption=drawn.caption)
        )
    blocks.append(Items(tuple(kinds), style="list"))
    if answer.tune:  # fsarena tune: each filesystem's best configuration against its defaults
        title = "Tuning (against each filesystem's defaults)"
        blocks.append(Notes(tuple(answer.tune), title=title))
    if answer.stopped:  # why the rounds ended (plan.stopping)
        blocks.append(Paragraph(answer.stopped, label="Rounds"))
    if answer.caveats:
        blocks.append(Notes(tuple(answer.caveats), title="Caveats", style="caveats"))
    return Section(Heading("Answer", anchor="answer"), tuple(blocks), anchor="answer")


def verdicts_section(comparison: Comparison) -> list[Block]:
    kinds = prose.verdicts(comparison)
    if not kinds:
        return []
    items = tuple(Item(k.title, k.text, k.details) for k in kinds)
    return [
        Section(
            Heading("Verdicts in detail", anchor="verdicts"),
            (Paragraph(prose.METHOD, style="method"), Items(items)),
            anchor="verdicts",
        )
    ]


def body(comparison: Comparison) -> list[Block]:
    """The tables, device ceiling, aging, compression and power loss, failures and warnings."""
    out: list[Block] = [task_section(comparison, table) for table in comparison.tables]
    if ceilings := prose.ceiling_rows(comparison):
        out.append(
            Section(
                Heading("Device ceiling"),
                (Table(tuple(prose.CEILING_HEADERS), _rows(ceilings)),),
            )
        )
    out += aging.sections(comparison.session)
    out += compression.sections(comparison.session)
    out += powerloss.sections(comparison.session)
    if comparison.failures:
        runs = tuple(
            Item(f"{f.filesystem} {f.task}", f"repetition {f.repetition}: {f.status}: {f.error}")
            for f in comparison.failures
        )
        out.append(
            Section(Heading("Failed, invalid or skipped runs"), (Items(runs, style="list"),))
        )
    if warnings := prose.warnings(comparison):
        items = tuple(Item(w.title, w.text, w.details) for w in warnings)
        out.append(Section(Heading("Warnings", anchor="warnings"), (Items(items),)))
    return out


def task_section(comparison: Comparison, table: TaskTable) -> Section:
    """One task: what it does, its rows per driver group, and its verdict."""
    blocks: list[Block] = []
    if table.description:
        blocks.append(Paragraph(table.description))
    for part in split(comparison.session, table):  # by driver group (one if all kernel)
        if part.title:
            blocks.append(Paragraph(part.explanation, label=part.title, style="group"))
        blocks.append(Table(tuple(part.headers), _rows(part.cells)))
    if line := comparison_line(comparison, table):
        blocks.append(Paragraph(line, label="Verdict", style="verdict"))
    heading = Heading(table.task, level=3, tag=table.kind, anchor=f"task-{table.task}")
    return Section(heading, tuple(blocks), anchor=f"task-{table.task}")


def provenance_section(session: Session) -> Section:
    """Each filesystem's mkfs and mount options as run, and the tools' versions."""
    blocks: list[Block] = []
    if session.profiles_as_run:
        rows = tuple(
            (
                name,
                p.driver or "",
                "`" + " ".join(p.mkfs) + "`",
                ",".join(p.mount_options) or "defaults",
            )
            for name, p in sorted(session.profiles_as_run.items())
        )
        headers = ("filesystem", "driver", "mkfs", "mount options")
        blocks.append(Table(headers, rows, title="Filesystems as run", detail=True))
    if session.tool_versions:
        tools = tuple((tool, version) for tool, version in sorted(session.tool_versions.items()))
        blocks.append(Table(("tool", "version"), tools, title="Tool versions", detail=True))
    return Section(
        Heading("Environment and provenance", anchor="provenance"), tuple(blocks), "provenance"
    )


def _rows(cells: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(row) for row in cells)
