"""The kinds of work and their verdicts: which filesystems win each kind, computed from one session.

As the articles concluded per kind of work, but computed, and only where the
data support it:
- A kind's filesystems are compared on one number per repetition: the
  weighted geometric mean of its tasks' headline metrics (a higher-is-better
  metric counts as its inverse), each task weighing its share of the kind's
  mean wall time, what the user waits for (a 20 ms delete does not weigh as
  much as a 10 s copy); equal weights when a task has no wall time. Runs of
  one repetition come from one freshly made filesystem, so these numbers are
  independent samples.
- "CPU cost" is not a task kind: it is the CPU time (user + sys of the tasks'
  own processes) summed over the whole sequence, archives left out (there the
  compressor, not the filesystem, spends the CPU).
- A filesystem wins when it has the best estimate, or is not significantly
  worse than the one that has (Yuen's test on logs, Bonferroni-adjusted at the
  share of the error rate the caller gives the kind; see ranking and
  answer). When every filesystem is in that set, the verdict is a tie.
- A task one filesystem lacks leaves the kind for all (a kind compares like
  with like); KindVerdict.excluded names it, and why, for the answer.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fsarena.analysis.evidence import Index, TaskResult, headline
from fsarena.analysis.phrases import describe, metric_word, names
from fsarena.analysis.ranking import ALPHA, Ranking, rank
from fsarena.kinds import KINDS
from fsarena.measure.metrics import METRICS, Metric

CPU_KIND = "cpu"  # a verdict over all timed tasks, not a task kind
CPU_METRIC = "cpu_s"
CPU_EXCLUDED_KINDS = ("archives",)
CPU_BOUND_PCT = 50.0  # above this share of wall time in CPU, a task is CPU-bound
SAFETY_KIND = "safety"
DEMONSTRATION_KIND = "demonstration"  # shown beside the honest figure, never a vote
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
    # Tasks left out of the kind for every filesystem, each with the reason.
    excluded: tuple[tuple[str, str], ...] = ()
    # Each kept task's weight in the kind (its share of the mean wall time).
    weights: tuple[tuple[str, float], ...] = ()
    # The compared value per filesystem and repetition (the overall answer combines kinds).
    by_rep: Mapping[str, Mapping[int, float]] = field(default_factory=dict)

    @property
    def detectable_difference(self) -> float:
        """Among those tied for best, the largest difference this run could not rule out.

        A fraction: 0.06 reads "no difference above 6 % between them" (0 with a
        single winner; nan when a tied pair has no interval).
        """
        return self.ranking.detectable_difference


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


def task_weights(
    index: Index, parts: Sequence[tuple[str, str]], filesystems: Sequence[str]
) -> dict[str, float]:
    """Each task's share of the kind's mean wall time (equal shares when one has none)."""
    means = {}
    for task, _ in parts:
        walls = [v for fs in filesystems for v in index.samples(fs, task, "wall_s").values()]
        means[task] = statistics.fmean(walls) if walls else 0.0
    total = sum(means.values())
    if total <= 0 or min(means.values()) <= 0:
        return {task: 1 / len(parts) for task, _ in parts}
    return {task: m / total for task, m in means.items()}


def _aggregate(
    index: Index,
    parts: Sequence[tuple[str, str]],
    filesystems: Sequence[str],
    weights: Mapping[str, float],
) -> dict[str, dict[int, float]]:
    """Per filesystem, the weighted geometric mean of the parts' oriented values, per repetition."""
    out = {}
    for fs in filesystems:
        per_task = [index.samples(fs, task, metric) for task, metric in parts]
        reps = set.intersection(*(set(s) for s in per_task)) if per_task else set()
        values = {
            r: math.exp(
                sum(
                    weights[t] * _oriented_log(s[r], METRICS[m])
                    for s, (t, m) in zip(per_task, parts, strict=True)
                )
            )
            for r in sorted(reps)
        }
        if values:
            out[fs] = values
    return out


def _usable_parts(
    index: Index, parts: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], list[str], list[str], list[tuple[str, str]]]:
    """The parts every filesystem has positive samples for; notes; the rest with the reason."""
    filesystems = [
        fs for fs in index.session.filesystems() if any(index.samples(fs, t, m) for t, m in parts)
    ]
    keep, notes, excluded = [], [], []
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
            excluded.append((task, "no value measured on any filesystem"))
        elif missing:
            why = "; ".join(f"{fs} {index.why_missing(fs, task)}" for fs in missing)
            excluded.append((task, f"no valid run on {why}"))
        elif min(values) <= 0:
            excluded.append((task, "zero values have no ratio"))
        else:
            keep.append((task, metric))
    for fs in index.session.filesystems():
        if fs not in filesystems and (ran := [t for t, _ in parts if index.ran(fs, t)]):
            # A filesystem with no valid run of the kind at all is named, never just absent.
            why = "; ".join(f"{t} {index.why_missing(fs, t)}" for t in ran)
            excluded.append((fs, f"no valid run: {why}"))
    notes += [f"{task} left out: {why}" for task, why in excluded]
    return keep, filesystems, notes, excluded


def _kind_verdict(
    index: Index,
    kind: str,
    parts: list[tuple[str, str]],
    results: Mapping[tuple[str, str], TaskResult],
    alpha: float,
) -> KindVerdict | None:
    keep, filesystems, notes, excluded = _usable_parts(index, parts)
    weights: dict[str, float] = {}
    by_rep: dict[str, dict[int, float]] = {}
    if not keep and len(parts) == 1 and parts[0] in results and len(filesystems) >= 2:
        # One task whose values include zeros (files lost in a power-loss test): no ratio
        # exists, so its own ranking (Welch's test on the raw values) is the verdict.
        keep, ranking = parts, results[parts[0]].ranking
        notes, excluded = [], []
    elif not keep:
        return None
    else:
        weights = task_weights(index, keep, filesystems)
        by_rep = _aggregate(index, keep, filesystems, weights)
        dropped = [fs for fs in filesystems if fs not in by_rep]
        if dropped:
            notes.append(f"{names(dropped)} left out: no repetition with every task successful")
        samples = {fs: list(v.values()) for fs, v in by_rep.items()}
        ranking = rank(samples, higher_is_better=False, alpha=alpha)
    used = {m for _, m in keep}
    word = metric_word(METRICS[used.pop()]) if len(used) == 1 else "better than"
    shares = ", ".join(f"{t} {100 * w:.0f} %" for t, w in weights.items())
    how = (
        f"Judged on {keep[0][0]} ({METRICS[keep[0][1]].label})."
        if len(keep) == 1
        else f"Judged on the weighted geometric mean of {len(keep)} tasks per repetition, "
        f"each weighing its share of the time: {shares}."
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
        tuple(excluded),
        tuple(weights.items()),
        by_rep,
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


def _cpu_verdict(
    index: Index, columns: Mapping[str, Sequence[str]], alpha: float
) -> KindVerdict | None:
    """CPU time of the whole sequence, per repetition, archives left out."""
    tasks = [
        t
        for t in index.session.tasks()
        if t in columns and index.kind(t) not in CPU_EXCLUDED_KINDS and index.plan.info(t).timed
    ]
    samples: dict[str, list[float]] = {}
    cpu_by_rep: dict[str, dict[int, float]] = {}
    lacking = []
    for fs in index.session.filesystems():
        per_task = [index.samples(fs, t, CPU_METRIC) for t in tasks]
        if not per_task or not all(per_task):
            lacking.append(fs)
            continue
        reps = set.intersection(*(set(s) for s in per_task))
        totals = {r: sum(s[r] for s in per_task) for r in sorted(reps)}
        if totals and min(totals.values()) > 0:
            samples[fs] = list(totals.values())
            cpu_by_rep[fs] = totals
    if not samples:
        return None
    ranking = rank(samples, higher_is_better=False, alpha=alpha)
    word = "less CPU time than"
    why: tuple[str, ...] = (
        f"Judged on the CPU time (user + sys) of {cpu_whose(index, tasks)}, summed over "
        f"{len(tasks)} timed tasks per repetition, archives left out (the compressor's CPU "
        "is the same on every filesystem).",
        "Kernel threads working for the filesystem (writeback, loop and btrfs workers) are "
        "not in this figure; the tables' system CPU busy column has them, with every other "
        "process on the machine.",
    )
    excluded = tuple((fs, "lacks a successful run of some timed task") for fs in lacking)
    if lacking:
        why += (f"{names(lacking)} left out: no successful run of every timed task.",)
    return KindVerdict(
        CPU_KIND, KINDS[CPU_KIND], tuple(tasks), ranking, word, describe(ranking, word), why,
        excluded, (), cpu_by_rep,
    )  # fmt: skip


def servers_counted(index: Index, tasks: Sequence[str]) -> bool:
    """Some run of these tasks recorded the CPU of a server it started (its cgroup's)."""
    return any(
        index.samples(fs, t, "server_cpu_s") for fs in index.session.filesystems() for t in tasks
    )


def cpu_whose(index: Index, tasks: Sequence[str]) -> str:
    """Whose CPU the CPU cost counts, in words."""
    if servers_counted(index, tasks):
        return (
            "the tasks' own processes and of the servers they started (PostgreSQL: every "
            "backend and helper, read from the server's cgroup over the timed region)"
        )
    return "the tasks' own processes"


def kind_verdicts(
    index: Index,
    columns: Mapping[str, Sequence[str]],
    results: Mapping[tuple[str, str], TaskResult],
    alpha: Mapping[str, float] | None = None,
) -> list[KindVerdict]:
    """The verdict of every kind of work that compares two or more filesystems, in KINDS order.

    ALPHA gives each kind its share of the error rate (answer.error_shares); a kind not
    in it is tested at ranking.ALPHA on its own. Demonstrations get no verdict.
    """
    kinds = []
    for kind in KINDS:
        if kind == DEMONSTRATION_KIND:
            continue
        level = (alpha or {}).get(kind, ALPHA)
        verdict = (
            _cpu_verdict(index, columns, level)
            if kind == CPU_KIND
            else _kind_verdict(index, kind, _task_metrics(index, columns, kind), results, level)
        )
        if verdict is not None and len(verdict.ranking.order) >= 2:
            kinds.append(verdict)
    return kinds
