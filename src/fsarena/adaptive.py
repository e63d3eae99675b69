"""Adaptive repetitions: which timed tasks are still measured less precisely than asked.

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
from dataclasses import dataclass

from fsarena.results import Session
from fsarena.stats import summarize

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
        elif run.measurement is not None:
            samples[key].append(getattr(run.measurement, DECIDING_METRIC))
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
