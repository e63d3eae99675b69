"""`fsarena compare`: the same tasks across sessions (machines, kernels, mount options).

Said first: what differs between the sessions and what makes the comparison
doubtful (compare.settings). Then each session's own answer and per-task verdicts,
exactly as its own report gives them: a comparison never re-ranks one
session's filesystems among everyone else's (Bonferroni's correction over every
LABEL/filesystem pair would turn a clear single-session win into a tie).
Then, for each filesystem present in two or more sessions, the change per task:
the ratio to the first session with its 95 % interval (Bonferroni within each task
and filesystem); changes too small to matter or not significant collapse into
one line with the largest change they could hide. The sessions are also
merged into one whose groups are "LABEL/filesystem", for the tables and charts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fsarena.analysis.phrases import interval_text, metric_word, number
from fsarena.analysis.ranking import Ranking, rank
from fsarena.errors import FsarenaError
from fsarena.measure.metrics import METRICS
from fsarena.report import charts, prose
from fsarena.report.answer import build as build_answer
from fsarena.report.compare import settings
from fsarena.report.comparison import Comparison, build, comparison_line, header_lines
from fsarena.report.contents import body
from fsarena.report.document import Block, Heading, Item, Items, Paragraph, Section
from fsarena.report.sentence import matters
from fsarena.session.file import Run, Session
from fsarena.session.records import ProfileRecord, TaskInfo


@dataclass(frozen=True)
class Change:
    """One filesystem on one task across sessions: ranked by session label."""

    task: str
    filesystem: str
    metric: str
    ranking: Ranking
    reference: str  # the first session's label: every other is compared with it

    def changed(self) -> list[str]:
        """'6.18 1.50× faster than 6.1 (95 % CI 1.47–1.53×)' for each change that matters."""
        metric, est = METRICS[self.metric], self.ranking.estimates
        out = []
        for label in self.ranking.order:
            pair = self.ranking.pair(self.reference, label) if label != self.reference else None
            if pair is None or not pair.significant:
                continue
            if not matters(metric, est[pair.better], est[pair.worse]):
                continue
            interval = (
                f" (95 % CI {interval_text(pair)}×)"
                if math.isfinite(pair.low) and pair.low != pair.high
                else ""
            )
            word = metric_word(metric)
            out.append(f"{pair.better} {number(pair.ratio)}× {word} {pair.worse}{interval}")
        return out

    def bound(self) -> float | None:
        """The largest relative change the pairs' intervals allow (for the unchanged)."""
        bounds = [
            max(p.high, 1 / p.low) - 1
            for p in self.ranking.pairs
            if math.isfinite(p.low) and math.isfinite(p.high) and p.low > 0
        ]
        return max(bounds) if bounds else None

    def sentence(self) -> str:
        changed = self.changed()
        if changed:
            return "; ".join(changed)
        bound = self.bound()
        return "no change that matters" + (
            f" (none above {number(100 * bound, 2)} %)" if bound is not None else ""
        )


@dataclass(frozen=True)
class CrossComparison:
    labels: tuple[str, ...]
    sessions: tuple[Session, ...]
    merged: Comparison  # groups named LABEL/filesystem; no verdicts across sessions
    changes: tuple[Change, ...]
    own: tuple[Comparison, ...] = ()  # each session's own comparison, verdicts included
    differences: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def group(label: str, filesystem: str) -> str:
    return f"{label}/{filesystem}"


def merge(labelled: Sequence[tuple[str, Session]]) -> Session:
    """One session holding every session's runs, filesystems renamed LABEL/NAME."""
    first = labelled[0][1]
    runs: list[Run] = []
    profiles: dict[str, ProfileRecord] = {}
    info: dict[str, TaskInfo] = {}
    filesystems: list[str] = []
    tasks: list[str] = []
    for label, s in labelled:
        runs.extend(r.model_copy(update={"filesystem": group(label, r.filesystem)}) for r in s.runs)
        profiles.update({group(label, k): v for k, v in s.profiles_as_run.items()})
        filesystems.extend(group(label, fs) for fs in s.filesystems())
        tasks.extend(t for t in s.tasks() if t not in tasks)
        info.update({t: v for t, v in s.plan.task_info.items() if t not in info})
    plan = first.plan.model_copy(
        update={"filesystems": filesystems, "tasks": tasks, "task_info": info}
    )
    statuses = {s.status for _, s in labelled}
    return first.model_copy(
        update={
            "runs": runs,
            "plan": plan,
            "profiles_as_run": profiles,
            # Each session's device ceiling belongs to its own machine: a merged
            # "best ceiling" would be meaningless, so % of ceiling is not shown here.
            "ceilings": [],
            "order": [],
            "warnings": [w for _, s in labelled for w in s.warnings],
            "status": statuses.pop() if len(statuses) == 1 else "complete",
        }
    )


def _changes(labelled: Sequence[tuple[str, Session]], merged: Comparison) -> tuple[Change, ...]:
    reference = labelled[0][0]
    found = []
    for table in merged.tables:
        metric = table.columns[0]
        shared: dict[str, dict[str, list[float]]] = {}
        for label, s in labelled:
            for fs in s.filesystems():
                values = [
                    v
                    for r in s.runs
                    if r.status == "ok" and r.task == table.task and r.filesystem == fs
                    if (v := r.value(metric)) is not None
                ]
                if values:
                    shared.setdefault(fs, {})[label] = values
        for fs, samples in shared.items():
            if len(samples) >= 2 and reference in samples:
                ranking = rank(samples, METRICS[metric].better == "higher")
                found.append(Change(table.task, fs, metric, ranking, reference))
    return tuple(found)


def compare(sessions: Sequence[Session], labels: Sequence[str] | None = None) -> CrossComparison:
    if len(sessions) < 2:
        raise FsarenaError("compare needs two or more session files")
    names = list(labels) if labels else [f"s{i}" for i in range(1, len(sessions) + 1)]
    if len(names) != len(sessions) or len(set(names)) != len(names):
        raise FsarenaError(
            f"give one distinct --label per session ({len(sessions)} sessions, {len(names)} labels)"
        )
    bad = [n for n in names if "/" in n]
    if bad:
        raise FsarenaError(f"a label cannot contain '/': {', '.join(bad)}")
    labelled = list(zip(names, sessions, strict=True))
    settings.refuse_empty(labelled)
    # The merged comparison keeps its tables and charts but no verdicts: ranking every
    # LABEL/filesystem against every other would contradict each session's own verdicts.
    merged = dataclasses.replace(build(merge(labelled)), verdicts=None)
    return CrossComparison(
        tuple(names),
        tuple(sessions),
        merged,
        _changes(labelled, merged),
        tuple(build(s) for s in sessions),
        tuple(settings.differences(labelled)),
        tuple(settings.warnings(labelled)),
    )


# ---------------------------------------------------------------- rendering


def legend(cross: CrossComparison) -> list[tuple[str, list[str]]]:
    """Per label, what that session is: the provenance lines of its header."""
    return [(label, header_lines(s)) for label, s in zip(cross.labels, cross.sessions, strict=True)]


@dataclass(frozen=True)
class Digest:
    """What every format shows, in order, as plain strings."""

    differences: list[str]
    warnings: list[str]
    answers: list[tuple[str, str]]  # (label, that session's recommendation line)
    changed: list[tuple[str, str, str]]  # (task, filesystem, the change)
    unchanged: str  # one line for every pair without a change that matters
    verdicts: list[tuple[str, list[tuple[str, str]]]]  # task -> (label, its own verdict)


def _unchanged(rest: Sequence[Change], others: bool) -> str:
    """One line for every pair without a change that matters, with what it could hide."""
    if not rest:
        return ""
    pairs = "task × filesystem pairs" if len(rest) > 1 else "task × filesystem pair"
    line = f"No change that matters in {'the other ' if others else ''}{len(rest)} {pairs}"
    bounded = sorted(((b, c) for c in rest if (b := c.bound()) is not None), key=lambda bc: bc[0])
    if bounded:
        middle = bounded[len(bounded) // 2][0]
        widest, where = bounded[-1]
        line += (
            f"; the 95 % intervals still allow a change of up to {number(100 * middle, 2)} % "
            f"(median) and {number(100 * widest, 2)} % at the widest "
            f"({where.task} on {where.filesystem})"
        )
    return line + "."


def digest(cross: CrossComparison) -> Digest:
    diffs = cross.differences or (
        "nothing but the labels: same suite, scale, repetitions, kernel, host and tool versions",
    )
    answers = []
    for label, own in zip(cross.labels, cross.own, strict=True):
        a = build_answer(own)
        answers.append(
            (label, a.recommendation if a.empty else f"Recommendation: {a.recommendation}")
        )
    changed = [(c.task, c.filesystem, line) for c in cross.changes for line in c.changed()]
    rest = [c for c in cross.changes if not c.changed()]
    unchanged = _unchanged(rest, bool(changed))
    verdicts = []
    for task in dict.fromkeys(t.task for own in cross.own for t in own.tables):
        lines = [
            (label, line)
            for label, own in zip(cross.labels, cross.own, strict=True)
            for t in own.tables
            if t.task == task and (line := comparison_line(own, t))
        ]
        if len(lines) > 1 and len({v for _, v in lines}) == 1:  # all agree: say it once
            lines = [(", ".join(label for label, _ in lines), lines[0][1])]
        if lines:
            verdicts.append((task, lines))
    return Digest(list(diffs), list(cross.warnings), answers, changed, unchanged, verdicts)


def document(cross: CrossComparison) -> tuple[Block, ...]:
    """The comparison of sessions: what differs first, each one's own answer, the changes."""
    d = digest(cross)
    said = [
        Section(Heading("What differs"), (_list(("", x) for x in d.differences),)),
        *(
            [
                Section(
                    Heading("Warnings about this comparison"), (_list(("", w) for w in d.warnings),)
                )
            ]
            if d.warnings
            else []
        ),
        Section(Heading("Each session's own answer"), (_list(d.answers),)),
    ]
    changes: list[Block] = [Paragraph(prose.METHOD, style="method")]
    if d.changed:  # ratio to the first session, with its 95 % interval
        changes.append(_list((f"{task}, {fs}", line) for task, fs, line in d.changed))
    if d.unchanged:
        changes.append(Paragraph(d.unchanged))
    if not d.changed and not d.unchanged:
        changes.append(Paragraph("No filesystem was measured in two or more of these sessions."))
    verdicts = tuple(
        Item(task, "", tuple(f"{k}: {v}" for k, v in lines)) for task, lines in d.verdicts
    )
    sessions = tuple(Item(label, "", tuple(lines)) for label, lines in legend(cross))
    merged = cross.merged
    drawn: list[Block] = []
    if heat := charts.heat_map(merged):  # drawn on a page; the tables say it in numbers
        drawn.append(Section(Heading("Heat map (label/filesystem)"), (heat,)))
    return (
        Heading("fsarena comparison of sessions", level=1),
        *said,
        Section(Heading("Same filesystem across sessions"), tuple(changes)),
        Section(Heading("Each session's own verdict per task"), (Items(verdicts),)),
        Section(Heading("Sessions"), (Items(sessions),)),
        *drawn,
        Section(Heading("All groups (label/filesystem)"), tuple(body(merged, merged))),
    )


def _list(entries: Iterable[tuple[str, str]]) -> Items:
    return Items(tuple(Item(title, words) for title, words in entries), style="list")


def render(cross: CrossComparison, fmt: str) -> str:
    """The comparison in a document format (report/formats.py): its document laid out by
    that format's renderer, as every command's is."""
    from fsarena.report import render_document

    return render_document(
        fmt, document(cross), f"fsarena: comparison of {len(cross.labels)} sessions"
    )
