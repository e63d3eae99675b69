"""Evidence from one session: samples by repetition, pairwise rankings per task and metric,
and the throughput of tasks that move a payload beside the device's measured ceiling.

Everything here is recomputed from the session's raw runs. Only successful
runs count: a run the runner marked invalid (faster than the device's ceiling:
the page cache was measured, not the filesystem) is never a sample, so it can
never be reported as a win; the rankings name the filesystems it concerned.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fsarena.analysis.ranking import Ranking, rank
from fsarena.measure.metrics import METRICS
from fsarena.session.file import Run, Session

THROUGHPUT = "throughput_bytes_per_s"  # payload bytes / wall time (measure.metric_value)


class Index:
    """The session's successful runs, by filesystem and task."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._runs: dict[tuple[str, str], list[Run]] = defaultdict(list)
        self.invalid: dict[tuple[str, str], int] = defaultdict(int)
        for run in session.runs:
            if run.status == "ok":
                self._runs[(run.filesystem, run.task)].append(run)
            elif run.status == "invalid":
                self.invalid[(run.filesystem, run.task)] += 1
        self.plan = session.plan
        self._all: dict[tuple[str, str], list[Run]] = defaultdict(list)
        for run in session.runs:
            self._all[(run.filesystem, run.task)].append(run)

    def runs(self, filesystem: str, task: str) -> list[Run]:
        return self._runs.get((filesystem, task), [])

    def samples(self, filesystem: str, task: str, metric: str) -> dict[int, float]:
        """A metric's finite values by repetition."""
        found = {}
        for run in self.runs(filesystem, task):
            value = run.value(metric)
            if value is not None and math.isfinite(value):
                found[run.repetition] = value
        return found

    def why_missing(self, filesystem: str, task: str) -> str:
        """Why a filesystem has no sample of a task, in a few words ("failed: timeout")."""
        runs = self._all.get((filesystem, task), [])
        if not runs:
            return "(not run)"
        bad = [r for r in runs if r.status != "ok"]
        if not bad:
            return "(no value)"
        statuses = sorted({r.status if r.status != "failed" else f"failed: {r.fault or 'error'}"
                           for r in bad})  # fmt: skip
        return f"({', '.join(statuses)})"

    def ran(self, filesystem: str, task: str) -> bool:
        """Whether the session has any run of the task on the filesystem, whatever its status."""
        return bool(self._all.get((filesystem, task)))

    def faults(self, filesystem: str, task: str) -> list[str]:
        """The fault codes of a filesystem's failed runs of a task."""
        return [r.fault or "error" for r in self._all.get((filesystem, task), [])
                if r.status == "failed"]  # fmt: skip

    def kind(self, task: str) -> str:
        return self.plan.info(task).kind

    def payload(self, task: str) -> str | None:
        """The direction of the logical bytes a task moves ("write" | "read"), if any."""
        value = self.plan.info(task).payload
        return str(value) if value in ("write", "read") else None

    def invalid_on(self, task: str) -> tuple[str, ...]:
        """Filesystems with runs of this task marked invalid."""
        return tuple(fs for fs in self.session.filesystems() if self.invalid.get((fs, task)))


@dataclass(frozen=True)
class TaskResult:
    """The ranking of the filesystems on one task and metric."""

    task: str
    kind: str
    metric: str
    ranking: Ranking
    invalid: tuple[str, ...] = ()  # filesystems with runs left out as invalid (above the ceiling)


@dataclass(frozen=True)
class CeilingCheck:
    """A task's mean throughput beside the raw device's best measured ceiling."""

    task: str
    filesystem: str
    direction: str  # "write" | "read": which ceiling applies
    throughput_bytes_per_s: float  # harmonic mean over the valid runs (0: none)
    ceiling_bytes_per_s: float
    n_invalid: int  # runs the runner marked invalid: faster than the device allows

    @property
    def pct(self) -> float:
        return 100.0 * self.throughput_bytes_per_s / self.ceiling_bytes_per_s


def headline(columns: Sequence[str]) -> str:
    """The metric a task is judged by: the first column of its table."""
    return columns[0]


def ceiling_checks(index: Index) -> tuple[CeilingCheck, ...]:
    """Throughput vs the best ceiling, for every task that moves a payload, per filesystem."""
    checks = []
    for task in index.session.tasks():
        direction = index.payload(task)
        ceiling = index.session.ceiling(direction) if direction else None
        if direction is None or not ceiling:
            continue
        for fs in index.session.filesystems():
            rates = list(index.samples(fs, task, THROUGHPUT).values())
            n_invalid = index.invalid.get((fs, task), 0)
            if not rates and not n_invalid:
                continue
            positive = [v for v in rates if v > 0]
            mean = statistics.harmonic_mean(positive) if positive else 0.0
            checks.append(CeilingCheck(task, fs, direction, mean, ceiling, n_invalid))
    return tuple(checks)


def rank_task(index: Index, task: str, metric: str) -> TaskResult | None:
    """Rank the filesystems on one task and metric; None when no filesystem has samples.

    None too for a metric that is shown, never ranked (a configuration value).
    """
    if metric not in METRICS or not METRICS[metric].ranked:
        return None
    samples = {
        fs: list(s.values())
        for fs in index.session.filesystems()
        if (s := index.samples(fs, task, metric))
    }
    if not samples:
        return None
    ranking = rank(samples, METRICS[metric].better == "higher")
    return TaskResult(task, index.kind(task), metric, ranking, index.invalid_on(task))


def rank_tasks(
    index: Index, columns: Mapping[str, Sequence[str]]
) -> dict[tuple[str, str], TaskResult]:
    """Rankings for every task and every metric of its table."""
    results = {}
    for task, names in columns.items():
        for metric in names:
            result = rank_task(index, task, metric)
            if result is not None:
                results[(task, metric)] = result
    return results
