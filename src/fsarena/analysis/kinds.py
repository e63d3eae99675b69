"""The kinds of work and their verdicts: which filesystems win each kind, computed from one session.

As the articles concluded per kind of work, but computed, and only where the
data support it:
- A kind's filesystems are compared on one number per repetition: the
  geometric mean of its tasks' headline metrics (each task weighs equally, a
  higher-is-better metric counts as its inverse). Runs of one repetition come
  from one freshly made filesystem, so these numbers are independent samples.
- "CPU cost" is not a task kind: it is the CPU time (user + sys of the tasks'
  own processes) summed over the whole sequence, archives left out (there the
  compressor, not the filesystem, spends the CPU).
- A filesystem wins when it has the best estimate, or is not significantly
  worse than the one that has (Welch's t-test on logs, Holm-adjusted; see
  ranking). When every filesystem is in that set, the verdict is a tie.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fsarena.analysis.evidence import Index, TaskResult, headline
from fsarena.analysis.phrases import describe, metric_word, names
from fsarena.analysis.ranking import Ranking, rank
from fsarena.kinds import KINDS
from fsarena.measure.metrics import METRICS, Metric

CPU_KIND = "cpu"  # a verdict over all timed tasks, not a task kind
CPU_METRIC = "cpu_s"
CPU_EXCLUDED_KINDS = ("archives",)
CPU_BOUND_PCT = 50.0  # above this share of wall time in CPU, a task is CPU-bound
SAFETY_KIND = "safety"
# A tie is a decision when the run rules out any difference above this fraction:
# below 5 % a sysadmin would not choose a filesystem on speed.
PRACTICAL = 0.05


@dataclass(frozen=True)
class KindVerdict:
    kind: str
    title: str
    tasks: tuple[str, ...]  # the tasks the verdict rests on
    ranking: Ranking
    word: str  # "faster than", "better than", ...
    summary: str  # one sentence: winners, ties
    why: tuple[str, ...]  # how it was computed and the per-task evidence

    @property
    def detectable_difference(self) -> float:
        """Among those tied for best, the largest difference this run could not rule out.

        A fraction: 0.06 reads "no difference above 6 % between them" (0 with a
        single winner; nan when a tied pair has no interval).
        """
        return self.ranking.detectable_difference

    @property
    def decided(self) -> bool:
        """A single winner, or the tied ones shown to differ by at most PRACTICAL."""
        if len(self.ranking.winners) == 1:
            return True
        found = self.detectable_difference
        return not math.isnan(found) and found <= PRACTICAL


# ---------------------------------------------------------------- kinds


def _oriented_log(value: float, metric: Metric) -> float:
    """log of a value such that lower is better."""
    return -math.log(value) if metric.better == "higher" else math.log(value)


def _task_metrics(
    index: Index, columns: Mapping[str, Sequence[str]], kind: str
) -> list[tuple[str, str]]:
    return [
        (task, headline(columns[task]))
        for task in index.session.tasks()
        if task in columns and index.kind(task) == kind and headline(columns[task]) in METRICS
    ]


def _aggregate(
    index: Index, parts: Sequence[tuple[str, str]], filesystems: Sequence[str]
) -> dict[str, list[float]]:
    """Per filesystem, the geometric mean of the parts' oriented values, per complete repetition."""
    out = {}
    for fs in filesystems:
        per_task = [index.samples(fs, task, metric) for task, metric in parts]
        reps = set.intersection(*(set(s) for s in per_task)) if per_task else set()
        values = [
            math.exp(
                statistics.fmean(
                    _oriented_log(s[r], METRICS[m])
                    for s, (_, m) in zip(per_task, parts, strict=True)
                )
            )
            for r in sorted(reps)
        ]
        if values:
            out[fs] = values
    return out


def _usable_parts(
    index: Index, parts: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """The parts every filesystem has positive samples for; the rest with the reason."""
    filesystems = [
        fs for fs in index.session.filesystems() if any(index.samples(fs, t, m) for t, m in parts)
    ]
    keep, notes = [], []
    for task, metric in parts:
        values = [v for fs in filesystems for v in index.samples(fs, task, metric).values()]
        missing = [fs for fs in filesystems if not index.samples(fs, task, metric)]
        if invalid := index.invalid_on(task):
            # Invalid runs are never samples; say whose were left out and why.
            notes.append(
                f"{task}: invalid runs of {names(list(invalid))} left out (faster than the "
                "device's measured ceiling: the page cache was measured)"
            )
        if not values:  # e.g. bonnie++ printed "+++++" (too fast to time) everywhere
            notes.append(f"{task} left out: no value measured on any filesystem")
        elif missing:
            notes.append(f"{task} left out: no valid successful run on {names(missing)}")
        elif min(values) <= 0:
            notes.append(f"{task} left out: zero values have no ratio")
        else:
            keep.append((task, metric))
    return keep, filesystems, notes


def _kind_verdict(
    index: Index,
    kind: str,
    parts: list[tuple[str, str]],
    results: Mapping[tuple[str, str], TaskResult],
) -> KindVerdict | None:
    keep, filesystems, notes = _usable_parts(index, parts)
    if not keep and len(parts) == 1 and parts[0] in results and len(filesystems) >= 2:
        # One task whose values include zeros (files lost in a crash test): no ratio
        # exists, so its own ranking (Welch's test on the raw values) is the verdict.
        keep, ranking = parts, results[parts[0]].ranking
        notes = []
    elif not keep:
        return None
    else:
        samples = _aggregate(index, keep, filesystems)
        dropped = [fs for fs in filesystems if fs not in samples]
        if dropped:
            notes.append(f"{names(dropped)} left out: no repetition with every task successful")
        ranking = rank(samples, higher_is_better=False)
    used = {m for _, m in keep}
    word = metric_word(METRICS[used.pop()]) if len(used) == 1 else "better than"
    how = (
        f"Judged on {keep[0][0]} ({METRICS[keep[0][1]].label})."
        if len(keep) == 1
        else f"Judged on the geometric mean of {len(keep)} tasks per repetition, "
        f"each weighing equally: {', '.join(t for t, _ in keep)}."
    )
    evidence = [
        f"{task}: {describe(results[(task, m)].ranking, metric_word(METRICS[m]))}."
        for task, m in parts
        if (task, m) in results
    ]
    why = [how, *evidence, *(f"{n}." for n in notes), *_kind_notes(index, kind, keep)]
    return KindVerdict(
        kind,
        KINDS.get(kind, kind),
        tuple(t for t, _ in keep),
        ranking,
        word,
        describe(ranking, word),
        tuple(why),
    )


def _kind_notes(index: Index, kind: str, parts: Sequence[tuple[str, str]]) -> list[str]:
    """What a reader must know about a kind: archives are CPU work."""
    if kind != "archives":
        return []
    pcts = [
        run.measurement.cpu_pct
        for fs in index.session.filesystems()
        for task, _ in parts
        for run in index.runs(fs, task)
        if run.measurement is not None
    ]
    if not pcts:
        return []
    pct = statistics.fmean(pcts)
    note = f"Compression is CPU work: the tasks' processes were busy {pct:.0f} % of the wall time"
    if pct >= CPU_BOUND_PCT:
        note += (
            "; this kind is CPU-bound, so the compressor, not the filesystem, sets the pace "
            "and differences between filesystems are small by nature"
        )
    return [note + "."]


def _cpu_verdict(index: Index, columns: Mapping[str, Sequence[str]]) -> KindVerdict | None:
    """CPU time of the whole sequence, per repetition, archives left out."""
    tasks = [
        t
        for t in index.session.tasks()
        if t in columns and index.kind(t) not in CPU_EXCLUDED_KINDS and index.plan.info(t).timed
    ]
    samples: dict[str, list[float]] = {}
    for fs in index.session.filesystems():
        per_task = [index.samples(fs, t, CPU_METRIC) for t in tasks]
        if not per_task or not all(per_task):
            continue
        reps = set.intersection(*(set(s) for s in per_task))
        totals = [sum(s[r] for s in per_task) for r in sorted(reps)]
        if totals and min(totals) > 0:
            samples[fs] = totals
    if not samples:
        return None
    ranking = rank(samples, higher_is_better=False)
    word = "less CPU time than"
    why = (
        f"Judged on the CPU time (user + sys) of the tasks' own processes, summed over "
        f"{len(tasks)} timed tasks per repetition, archives left out (the compressor's CPU "
        "is the same on every filesystem).",
        "Kernel threads working for the filesystem (writeback, loop and btrfs workers) are "
        "not in this figure; the tables' system CPU busy column has them, with every other "
        "process on the machine.",
    )
    return KindVerdict(
        CPU_KIND, KINDS[CPU_KIND], tuple(tasks), ranking, word, describe(ranking, word), why
    )


def kind_verdicts(
    index: Index,
    columns: Mapping[str, Sequence[str]],
    results: Mapping[tuple[str, str], TaskResult],
) -> list[KindVerdict]:
    """The verdict of every kind of work that compares two or more filesystems, in KINDS order."""
    kinds = []
    for kind in KINDS:
        verdict = (
            _cpu_verdict(index, columns)
            if kind == CPU_KIND
            else _kind_verdict(index, kind, _task_metrics(index, columns, kind), results)
        )
        if verdict is not None and len(verdict.ranking.order) >= 2:
            kinds.append(verdict)
    return kinds
