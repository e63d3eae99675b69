"""Adaptive repetitions: which verdicts are undecided, which tasks are imprecise.

The default run is decisive: after each round from the plan's own, the filesystems
shown behind the best for the workload are eliminated (not measured again), and the
runner adds whole rounds while the best is not known (neither one filesystem left nor
those left shown within the practical threshold of each other: analysis.decision), up
to the plan's maximum and within its time budget.

With `--target-ci PCT` the runner keeps adding whole repetitions (one more
fresh mkfs-to-umount sequence per filesystem, interleaved in a new shuffled
order) while any timed task of any filesystem has a 95 % confidence interval
of its mean wall time wider than ±PCT % of that mean. Only (filesystem, task)
pairs whose every run succeeded count: repeating a run that fails would not
make it precise, and the failure is reported on its own.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from fsarena.analysis.decision import OPEN, UNTESTED, Exclusion, next_eliminations
from fsarena.analysis.scope import verdict_scope
from fsarena.analysis.stats import summarize
from fsarena.analysis.verdicts import Verdicts, analyse
from fsarena.session.file import Session

# The metric whose precision decides: every timed task has a wall time.
DECIDING_METRIC = "wall_s"


@dataclass(frozen=True)
class Imprecise:
    """A (filesystem, task) whose CI half-width exceeds the target."""

    filesystem: str
    task: str
    n: int
    ci_half_width_rel: float  # inf with fewer than two samples


def imprecise(session: Session, target_rel: float) -> list[Imprecise]:
    """Timed (filesystem, task) pairs above the target relative CI half-width, in plan order."""
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    failed: set[tuple[str, str]] = set()
    for run in session.runs:
        key = (run.filesystem, run.task)
        if run.status != "ok":
            failed.add(key)
        elif (value := run.value(DECIDING_METRIC)) is not None:
            samples[key].append(value)  # the median of a short task's executions
    found = []
    for fs in session.filesystems():
        for task in session.tasks():
            values = samples.get((fs, task))
            if not values or (fs, task) in failed:
                continue
            rel = summarize(values).ci_half_width_rel
            if rel > target_rel:
                found.append(Imprecise(fs, task, len(values), rel))
    return found


def unstable_message(items: list[Imprecise], target_rel: float) -> str:
    """One warning for all tasks above the target: what was seen and what to do about it."""

    def width(item: Imprecise) -> str:
        rel = item.ci_half_width_rel
        return "unknown" if math.isinf(rel) else f"±{rel:.2%}"

    listed = ", ".join(f"{i.filesystem} {i.task} ({width(i)}, n={i.n})" for i in items)
    return (
        f"the 95 % confidence interval of the mean time stayed above the target "
        f"±{target_rel:.1%} for {len(items)} task(s): {listed}. These tasks are too short or the "
        "machine too noisy for that precision: run with a larger --scale so they last longer, "
        "stop background work (other benchmarks, backups, indexers), or allow more with "
        "--max-repetitions / --time-budget."
    )


def headline_columns(session: Session) -> dict[str, list[str]]:
    """Each task's headline metric, as the reports judge it (task_info columns, or the default)."""
    out = {}
    for task, info in session.plan.task_info.items():
        out[task] = info.columns[:1] or (["wall_s"] if info.timed else ["capacity_pct"])
    return out


@dataclass(frozen=True)
class Undecided:
    """The question a decisive run has not settled yet: which of these is best."""

    title: str
    tied: tuple[str, ...]  # the filesystems still in the running, not told apart
    detectable: float  # the difference the run could not rule out between them (nan: unknown)

    def describe(self) -> str:
        what = (
            "unknown"
            if math.isnan(self.detectable)
            else "100× or more"
            if self.detectable >= 99
            else f"{self.detectable * 100:.0f} %"
        )
        return f"{self.title} ({', '.join(self.tied)}: up to {what} apart)"


def look_now(session: Session) -> Verdicts:
    """The verdicts as the report would show them now: the ranked driver group's, at the
    rounds done so far (the answer's own decision, so the loop stops on the report's words)."""
    return analyse(verdict_scope(session), headline_columns(session))


def undecided(session: Session) -> list[Undecided]:
    """The workload's best, when not known yet: neither one filesystem nor a group shown
    within the threshold of each other (analysis.decision)."""
    decision = look_now(session).decision
    if decision is None:
        return []
    family = decision.workload
    if family.status not in (OPEN, UNTESTED):
        return []
    return [Undecided("the best for this workload", family.best, family.spread)]


def round_forecast(walls: Sequence[float]) -> float:
    """What the next round may cost: the slowest of the last three rounds plus their spread.

    The slowest alone was passed: a default run's last round ended 0.9 s past its
    budget (issue 14). Rounds here vary by their spread from one to the next, so a
    round may be as much slower than the slowest seen as the fastest was faster.
    """
    recent = list(walls[-3:])
    if not recent:
        return 0.0
    return max(recent) + (max(recent) - min(recent))


def next_round_fits(
    elapsed_s: float, walls: Sequence[float], budget_s: float | None, reserve_s: float = 0.0
) -> bool:
    """Whether another round, and then the reserve (writing the reports), end within the budget."""
    if budget_s is None:
        return True
    return elapsed_s + round_forecast(walls) + reserve_s <= budget_s


class SessionProgress:
    """What the plan's stopping rule reads of a session (fsarena.stopping.Progress), from
    one look at its rounds so far: the decision is made once and read twice."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._seen: Verdicts | None = None

    def verdicts(self) -> Verdicts:
        if self._seen is None:
            self._seen = look_now(self.session)
        return self._seen

    def open_kinds(self) -> list[Undecided]:
        decision = self.verdicts().decision
        if decision is None or decision.workload.status not in (OPEN, UNTESTED):
            return []
        family = decision.workload
        return [Undecided("the best for this workload", family.best, family.spread)]

    def eliminations(self) -> tuple[Exclusion, ...]:
        """The filesystems this look shows behind, not yet eliminated (analysis.decision)."""
        decision = self.verdicts().decision
        return next_eliminations(decision) if decision is not None else ()

    def imprecise(self, target_rel: float) -> list[Imprecise]:
        return imprecise(self.session, target_rel)

    def undecided_warning(self, items: list[Undecided]) -> str:
        rounds = len(self.session.order)
        what = "; ".join(i.describe() for i in items)
        settle = self.verdicts().answer.ties
        return f"not settled after {rounds} rounds: {what}. {settle}".rstrip()

    def unstable_warning(self, items: list[Imprecise], target_rel: float) -> str:
        return unstable_message(items, target_rel)
