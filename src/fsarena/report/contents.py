"""What a report says, in which order: the one function that lays out every report.

`document(comparison)` returns the blocks of report.document; each format
(formats.FORMATS) renders them and decides nothing about order or content.
The producers live beside what they describe (outcome, answer, articles,
aging, powerloss, groups, prose); this module only puts their blocks in order.
"""

from __future__ import annotations

from fsarena.analysis.scope import ranked_group, verdict_scope
from fsarena.measure.metrics import METRICS
from fsarena.report import (
    aging,
    answer_figure,
    articles,
    cells,
    charts,
    compression,
    outcome,
    powerloss,
    prose,
    provenance,
    replay,
)
from fsarena.report.answer import build as build_answer
from fsarena.report.answer_drawing import AnswerDrawing
from fsarena.report.comparison import Comparison, build, comparison_line, header_lines
from fsarena.report.document import (
    Block,
    Figure,
    Forms,
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
from fsarena.report.sentence import task_sentence

TITLE = "fsarena results"


def document(comparison: Comparison) -> tuple[Block, ...]:
    """The report: what was not measured, the answer, how it was measured, the evidence."""
    session = comparison.session
    ranked = ranked_part(comparison)  # what the charts and a page's wide tables rank
    blocks: list[Block] = [Heading(TITLE, level=1)]
    if banner := outcome.banner(session):  # what was not measured, before anything else
        blocks.append(banner)
    blocks.append(answer_section(comparison))
    if line := aging.verdict(session):
        blocks.append(Paragraph(f"{line} See 'Aged ... beside fresh' below.", label="Age"))
    blocks.append(Notes(tuple(header_lines(session)), style="provenance"))
    blocks += [Paragraph(words) for words in explanations(session)]
    blocks += verdicts_section(comparison)
    if heat := charts.heat_map(ranked):  # drawn on pages; the tables below say it in numbers
        blocks.append(Section(Heading("Heat map", anchor="heatmap"), (heat,), anchor="heatmap"))
    blocks += body(comparison, ranked)
    blocks += articles.blocks(session)
    blocks.append(provenance.section(session))
    return tuple(blocks)


def ranked_part(comparison: Comparison) -> Comparison:
    """The comparison of the ranked driver group only (itself when there is one group)."""
    scoped = verdict_scope(comparison.session)
    return comparison if scoped is comparison.session else build(scoped)


def answer_section(comparison: Comparison) -> Section:
    """The recommendation, one line per decided kind of work, the ties, the caveats."""
    answer = build_answer(comparison)
    lead = Paragraph(
        answer.recommendation, label="" if answer.empty else "Recommendation", style="lead"
    )
    # Other driver groups' own answers first (a guest kernel's filesystems among themselves).
    kinds = [Item(title, line) for title, line in answer.groups]
    kinds += [Item(k.title, k.text) for k in answer.kinds]
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
    if answer.stopped:  # why the rounds ended (fsarena.stopping)
        blocks.append(Paragraph(answer.stopped, label="Rounds"))
    for line in replay.fact_lines(comparison.session):  # a replay's fidelity, with the answer
        blocks.append(Paragraph(line, label="Replay error"))
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
            (Paragraph(prose.METHOD, style="method"), Items(items, style="why")),
            anchor="verdicts",
        )
    ]


def body(comparison: Comparison, ranked: Comparison) -> list[Block]:
    """The tasks, the charts of the whole run, device ceiling, aging, compression and power
    loss, failures and warnings."""
    tasks = tuple(task_section(comparison, ranked, table) for table in comparison.tables)
    out: list[Block] = []
    if tasks:
        out.append(Section(Heading("Tasks", anchor="tasks"), tasks, anchor="tasks"))
    if drawn := charts.overview(ranked):
        heading = Heading("CPU, device I/O and space", anchor="overview")
        out.append(Section(heading, tuple(drawn), anchor="overview"))
    if ceilings := prose.ceiling_rows(comparison):
        out.append(
            Section(
                Heading("Device ceiling"),
                (Table(tuple(prose.CEILING_HEADERS), _rows(ceilings)),),
            )
        )
    out += aging.sections(comparison.session)
    out += compression.sections(comparison.session)
    out += replay.sections(comparison.session)
    out += powerloss.sections(comparison.session)
    if comparison.failures:
        runs = tuple(
            Item(f"{f.filesystem} {f.task}", f"repetition {f.repetition}: {f.status}: {f.error}")
            for f in comparison.failures
        )
        heading = Heading("Failed, invalid or skipped runs", anchor="failures")
        out.append(Section(heading, (Items(runs, style="list"),), anchor="failures"))
    if warnings := prose.warnings(comparison):
        items = tuple(Item(w.title, w.text, w.details) for w in warnings)
        heading = Heading("Warnings", anchor="warnings")
        out.append(Section(heading, (Items(items),), anchor="warnings", style="warnings"))
    return out


def task_section(comparison: Comparison, ranked: Comparison, table: TaskTable) -> Section:
    """One task: what it does, its rows per driver group, its verdict; on a page, its
    headline with interval and spread, the verdicts on its other metrics, and its chart."""
    session = comparison.session
    blocks: list[Block] = []
    if table.description:
        blocks.append(Paragraph(table.description))
    short: list[Block] = []
    full: list[Block] = []
    mine = next((t for t in ranked.tables if t.task == table.task), None)
    # One driver group: every part is the ranked one (ranked_group reads every profile: slow).
    key = "" if ranked is comparison else ranked_group(session)
    for part in split(session, table):  # by driver group (one if all kernel)
        said: list[Block] = []
        if part.title:
            said.append(Paragraph(part.explanation, label=part.title, style="group"))
        short += [*said, Table(tuple(part.headers), _rows(part.cells))]
        ranks = mine is not None and (not key or part.key == key)
        full += [*said, *(_wide(mine) if ranks and mine else short[-1:])]
    blocks.append(Forms(tuple(short), tuple(full)))
    if line := comparison_line(comparison, table):
        blocks.append(Paragraph(line, label="Verdict", style="verdict"))
    if mine and (others := other_metrics(ranked, mine)):
        blocks.append(Forms((), (Notes(tuple(others), title="Other metrics", style="fold"),)))
    if mine and (drawn := charts.task_chart(ranked, mine)):
        blocks.append(drawn)
    heading = Heading(table.task, level=3, tag=table.kind, anchor=f"task-{table.task}")
    return Section(heading, tuple(blocks), anchor=f"task-{table.task}")


def _wide(table: TaskTable) -> list[Block]:
    """A page's tables of a task: the headline with its interval and spread, then the
    means of its other metrics."""
    headers, rows = cells.headline_grid(table)
    flagged = "flags" if headers[-1] == "flags" else ""
    out: list[Block] = [Table(tuple(headers), _rows(rows), style=flagged)]
    other_headers, other_rows = cells.other_grid(table)
    if other_rows:
        out.append(Table(tuple(other_headers), _rows(other_rows)))
    return out


def other_metrics(comparison: Comparison, table: TaskTable) -> list[str]:
    """Verdicts on the table's other metrics (CPU, faults, device bytes)."""
    lines = []
    for name in table.columns[1:]:
        result = comparison.verdicts.task(table.task, name) if comparison.verdicts else None
        if result is not None and len(result.ranking.order) >= 2:
            lines.append(f"{METRICS[name].label}: {task_sentence(result)}")
    return lines


def _rows(cells: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(row) for row in cells)
