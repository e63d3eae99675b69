"""Flags on results: unstable (only where the noise left a comparison open), outliers, invalid.

"Unstable" means something a reader can act on (issue 14): a row is marked when
its headline's 95 % interval is wider than the target (10 % unless the plan
says otherwise) and than the metric's practical threshold, its task's
comparison stayed open (several tied for best, a difference above
verdicts.PRACTICAL not ruled out), and it is at least twice as wide as its task's
other rows' (median): when all are as noisy, the answer's "undecided" line says
so once. The report shows one banner with the count
and the one command that would settle them, and beside each flagged result what
else would help it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from fsarena.analysis.answer import MAX_SUGGESTED_ROUNDS
from fsarena.analysis.kinds import PRACTICAL
from fsarena.analysis.phrases import number
from fsarena.analysis.rounds import round_seconds
from fsarena.analysis.stats import (
    OUTLIER_SIGMAS,
    SHORT_RUN_S,
    UNSTABLE_ADVICE,
    Summary,
    instability,
    n_for_cv,
)
from fsarena.measure.metrics import METRICS, Metric
from fsarena.report.rows import Row, TaskTable
from fsarena.session.file import Session

if TYPE_CHECKING:
    from fsarena.analysis.evidence import TaskResult
    from fsarena.analysis.verdicts import Verdicts

# A row is singled out as unstable only when its interval is at least this many times
# as wide as the median of its task's other rows (see `noisier`).
NOISIER = 2.0


@dataclass(frozen=True)
class Flag:
    """A computed warning about one result: what was seen and what to do."""

    task: str
    filesystem: str
    code: str  # "unstable" | "outlier" | "invalid"
    message: str


def pct_text(pct: float) -> str:
    """A percentage with one decimal below 100 (so 10.4 does not read as a 10 % target)."""
    return f"{pct:.1f}" if pct < 100 else f"{pct:.0f}"


def too_wide(summary: Summary, metric: Metric, target_rel: float) -> bool:
    """The headline's 95 % interval is wider than the target and than a difference that
    matters (the metric's practical threshold: 10 ms of a mount's 9 ms is noise nobody
    would choose a filesystem on)."""
    if summary.n < 2 or metric.exact:
        return False
    return summary.ci_half_width_rel > target_rel and summary.ci_half_width > metric.practical_abs


def matters(row: Row, result: TaskResult | None) -> bool:
    """A too-wide row is flagged unstable only when its task's comparison stayed open:
    neither one winner nor a tie ruling out any difference above verdicts.PRACTICAL.
    Noise that changed no verdict is not flagged (issue 14: one banner, few cells)."""
    if not row.unstable or result is None:
        return row.unstable
    ranking = result.ranking
    if len(ranking.winners) <= 1:
        return False
    found = ranking.detectable_difference
    return math.isnan(found) or found > PRACTICAL


def _width(row: Row, metric: str) -> float:
    s = row.stats.get(metric)
    return s.ci_half_width_rel if s is not None and s.n >= 2 else math.nan


def noisier(row: Row, table: TaskTable) -> bool:
    """The row's interval is at least NOISIER times the median of the task's other rows'.

    When every filesystem is as noisy, no cell is singled out: the verdict's
    "undecided" line and its command say it once for the whole task.
    """
    others = [
        w for r in table.rows if r is not row and math.isfinite(w := _width(r, table.columns[0]))
    ]
    mine = _width(row, table.columns[0])
    return not others or (math.isfinite(mine) and mine >= NOISIER * statistics.median(others))


def settle(tables: list[TaskTable], verdicts: Verdicts) -> list[TaskTable]:
    """The tables with the unstable mark kept only where it matters."""
    out = []
    for t in tables:
        result = verdicts.task(t.task, t.columns[0])
        flagged = {r.filesystem for r in t.rows if matters(r, result) and noisier(r, t)}
        rows = tuple(replace(r, unstable=r.filesystem in flagged) for r in t.rows)
        out.append(replace(t, rows=rows))
    return out


# What to do about each kind of flag; the flags themselves carry the numbers.
FLAG_ADVICE = {
    "unstable": UNSTABLE_ADVICE,
    "outlier": (
        f"Runs more than {OUTLIER_SIGMAS:.0f} robust standard deviations (1.4826 MAD) from "
        "the median are flagged and kept in every statistic: look for a background job or a "
        "stall at that time, or add repetitions."
    ),
    "invalid": (
        "Faster than the device's measured ceiling allows: the page cache was measured, not "
        "the device. These runs are kept in the session but left out of every statistic and "
        "verdict; if it happens often, check that nothing else reads the same files."
    ),
}


def _row_flags(table: TaskTable, target_pct: float) -> list[Flag]:
    flags = []
    metric = METRICS[table.columns[0]]
    for row in table.rows:
        s = row.stats.get(metric.name)
        if s is None:
            continue
        subject = f"{table.task} on {row.filesystem}"
        if row.unstable:
            text = f"{instability(subject, s, target_pct / 100)}; {_advice(row)}"
            flags.append(Flag(table.task, row.filesystem, "unstable", text))
        if row.outliers:
            reps = ", ".join(str(r) for r in row.outliers)
            flags.append(
                Flag(
                    table.task,
                    row.filesystem,
                    "outlier",
                    f"{subject}: repetition {reps} ({metric.label} median "
                    f"{number(s.median * metric.scale)} {metric.unit}, "
                    f"range {number(s.min * metric.scale)}–{number(s.max * metric.scale)})",
                )
            )
    return flags


def _advice(row: Row) -> str:
    """What would narrow this result's interval, from what its runs look like."""
    wall = row.stats.get("wall_s")
    if wall is not None and wall.mean < SHORT_RUN_S:
        return (
            f"runs of {number(1000 * wall.mean)} ms, where start-up and timer noise weigh: "
            "more rounds settle it, a larger --scale would change what is measured"
        )
    if row.outliers:
        return "a stall widened it: look for background work at that time, or add rounds"
    return "its runs vary: stop background I/O (other benchmarks, backups), or add rounds"


def rounds_to_settle(tables: Sequence[TaskTable], target_ci_pct: float) -> int:
    """Rounds that would bring every flagged interval to the target at its spread.

    The same estimate each flagged result states beside it (stats.n_for_cv: the t
    interval of its mean at its CV), so the banner is the largest of its items; at most
    MAX_SUGGESTED_ROUNDS.
    """
    target = target_ci_pct / 100
    need = 0
    for table in tables:
        for row in table.rows:
            s = row.stats.get(table.columns[0])
            if row.unstable and s is not None and s.n >= 2:
                need = max(need, n_for_cv(s.cv, target, MAX_SUGGESTED_ROUNDS))
    return need


def unstable_banner(tables: Sequence[TaskTable], target_ci_pct: float, session: Session) -> str:
    """The one line above the flagged results: how many, and the one command that fixes it."""
    count = sum(row.unstable for t in tables for row in t.rows)
    need = rounds_to_settle(tables, target_ci_pct)
    per_round = round_seconds(session)
    budget = ""
    if per_round and need:
        budget = f" (about {math.ceil(need * per_round / 60)} min at this run's pace)"
    fix = f"Fix: the same command with `--repetitions {need}`{budget}."
    if need >= MAX_SUGGESTED_ROUNDS:
        fix = f"More rounds are not the fix (over {MAX_SUGGESTED_ROUNDS} at this spread)."
    return (
        f"{count} result(s) too noisy for their task's comparison to be settled (95 % "
        f"interval wider than ±{pct_text(target_ci_pct)} % and than a difference "
        f"that matters). {fix} What else would help each one is said beside it."
    )


def flags_of(tables: tuple[TaskTable, ...], session: Session, target_pct: float) -> list[Flag]:
    flags = [f for table in tables for f in _row_flags(table, target_pct)]
    for run in session.runs:
        if run.status == "invalid":
            flags.append(
                Flag(
                    run.task,
                    run.filesystem,
                    "invalid",
                    f"{run.task} on {run.filesystem}, repetition {run.repetition}: {run.error}",
                )
            )
    return flags
