"""The decision of one session: who is best for the workload and in each weighed kind, as
records the answer words (analysis.answer) and the runner acts on (eliminations). Pure.

It reads the kinds' values per filesystem and round (analysis.kinds: each kind's weighted
geometric mean of its tasks), takes their logs as blocks (analysis.blocks: a stall set
aside, rounds compared within themselves) and applies the selection procedure
(analysis.selection) at the boundary calibrated for this run's design
(analysis.calibration). Filesystems a decisive run eliminated were not measured after;
they are read from the session (Session.race: what the run did), not assumed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from fsarena.analysis.blocks import Array, clean, paired, robust_fit
from fsarena.analysis.calibration import boundary as calibrated
from fsarena.analysis.kinds import PRACTICAL, KindVerdict
from fsarena.analysis.ranking import Pair, Ranking, detectable
from fsarena.analysis.selection import Boundary, Design, Verdicts, judge, workload
from fsarena.session.records import PlanRecord

WIN, EQUAL, OPEN, UNTESTED = "win", "equal", "open", "untested"
WORKLOAD = "overall"  # the workload's family key (the weighted mean of the weighed kinds)


@dataclass(frozen=True)
class Exclusion:
    """A filesystem shown slower than one of the best: by how much, and since when."""

    filesystem: str
    than: str
    ratio: float  # filesystem's time / than's
    low: float
    high: float
    rounds: int  # the rounds the claim rests on
    eliminated: bool = False  # not measured after those rounds (a decisive run)


@dataclass(frozen=True)
class Family:
    """One family's decision: a weighed kind's, or the workload's."""

    key: str
    status: str  # WIN | EQUAL | OPEN | UNTESTED
    ranking: Ranking  # every pair, with the claims (significant) and their intervals
    best: tuple[str, ...]  # shown slower than none (the workload: still in the running)
    excluded: tuple[Exclusion, ...]  # the rest, each with the claim that put it out
    spread: float  # the widest difference the best may still have between them (fraction)
    rounds: int
    set_aside: tuple[str, ...] = ()  # "ext2 round 3": values set aside as stalls
    threshold: float = PRACTICAL  # "within" means within this (a kind's own floor may raise it)
    # (a, b) -> (mean of log a - log b over their common rounds, its standard error, rounds)
    paired: Mapping[tuple[str, str], tuple[float, float, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    workload: Family
    kinds: Mapping[str, Family]
    design: Design
    boundary: Boundary
    threshold: float
    weights: Mapping[str, float] = field(default_factory=dict)


def design_of(
    plan: PlanRecord, filesystems: int, kinds: int, rounds: int, cut: bool = False
) -> Design:
    """What the boundary is calibrated for: a decisive run looks from its planned rounds to
    its ceiling; any other has one look, at the rounds it ran.

    cut: the run ended before its ceiling for a reason that does not depend on who leads
    (its time budget, an interruption): its last look is the one it ended at, where the
    error its earlier, stricter looks did not spend is spent (Lan and DeMets 1983). The
    eliminations it made stand: they passed a stricter boundary than this one.
    """
    first, last, sequential = plan.stopping.schedule()
    if not sequential:
        first = last = max(rounds, 2)
    elif cut and rounds < last:
        first, last = min(first, max(rounds, 2)), max(rounds, 2)
    return Design(filesystems, kinds, first, last, sequential)


def blocks(weighed: Sequence[KindVerdict], filesystems: Sequence[str]) -> tuple[Array, list[int]]:
    """The kinds' log values [K, F, R] (NaN where missing) and the rounds they cover."""
    rounds = sorted({r for v in weighed for fs in filesystems for r in v.by_rep.get(fs, {})})
    y = np.full((len(weighed), len(filesystems), len(rounds)), np.nan)
    for k, verdict in enumerate(weighed):
        for f, fs in enumerate(filesystems):
            for i, r in enumerate(rounds):
                value = verdict.by_rep.get(fs, {}).get(r)
                if value is not None and value > 0:
                    y[k, f, i] = math.log(value)
    return y, rounds


def _estimates(y: Array, filesystems: Sequence[str]) -> dict[str, float]:
    """Each filesystem's typical value: the additive fit's, averaged over the rounds."""
    fitted, _, _ = robust_fit(y)
    return {fs: math.exp(float(np.nanmean(fitted[f]))) for f, fs in enumerate(filesystems)}


def ranking_of(verdicts: Verdicts, estimates: Mapping[str, float], best: Sequence[str]) -> Ranking:
    """The family's pairs as a Ranking (what the reports read): each oriented best first,
    its ratio and interval, significant where the claim was made."""
    names = list(estimates)
    order = tuple(sorted(names, key=lambda fs: (estimates[fs], fs)))
    pairs = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            f, g = names.index(b), names.index(a)  # b's time over a's
            stats = verdicts.stats
            ratio = math.exp(float(stats.diff[f, g])) if stats.n[f, g] else math.nan
            low, high = float(verdicts.low[f, g]), float(verdicts.high[f, g])
            if stats.n[f, g] < 2:
                low = high = math.nan
            claim = bool(verdicts.slower[f, g])
            pairs.append(Pair(a, b, ratio, low, high, math.nan, math.nan, claim,
                              detectable(low, high)))  # fmt: skip
    n = {fs: int(verdicts.stats.n[f].max(initial=0)) for f, fs in enumerate(names)}
    return Ranking(order, dict(estimates), n, tuple(pairs), tuple(b for b in order if b in best))


def _family(
    key: str,
    y: Array,
    names: Sequence[str],
    verdicts: Verdicts,
    eliminated: Mapping[str, Exclusion],
    aside: np.ndarray,
    rounds: Sequence[int],
    threshold: float,
) -> Family:
    """Status, best and exclusions of one family from its judged pairs; `eliminated`: the
    filesystems a decisive run stopped measuring, with the claim it acted on."""
    index = {fs: i for i, fs in enumerate(names)}
    slower = verdicts.slower
    present = [fs for fs in names if fs not in eliminated]
    beaten = {fs for fs in present if any(slower[index[fs], index[g]] for g in present if g != fs)}
    best = tuple(fs for fs in present if fs not in beaten)
    excluded = [eliminated[fs] for fs in names if fs in eliminated]
    for fs in sorted(beaten, key=names.index):
        # The clearest claim: the one whose interval's lower end is farthest from 1.
        than = max((g for g in present if slower[index[fs], index[g]]),
                   key=lambda g: verdicts.low[index[fs], index[g]])  # fmt: skip
        f, g = index[fs], index[than]
        ratio = math.exp(float(verdicts.stats.diff[f, g]))
        low, high = float(verdicts.low[f, g]), float(verdicts.high[f, g])
        excluded.append(Exclusion(fs, than, ratio, low, high, int(verdicts.stats.n[f, g])))
    among = [(index[a], index[b]) for a in best for b in best if a < b]
    spread = max(
        (detectable(float(verdicts.low[i, j]), float(verdicts.high[i, j])) for i, j in among),
        default=0.0,
    )
    n = int(verdicts.stats.n.max(initial=0))
    if n < 2 or len(names) < 2:
        status = UNTESTED
    elif len(best) == 1:
        status = WIN
    elif all(verdicts.within[index[a], index[b]] for a in best for b in best if a != b):
        status = EQUAL
    else:
        status = OPEN
    estimates = _estimates(y, names)
    said = tuple(
        f"{fs} round {rounds[int(r)]}"
        for f, fs in enumerate(names)
        for r in np.nonzero(aside[f])[0]
    )
    stats = verdicts.stats
    pairs = {
        (a, b): (float(stats.diff[i, j]), float(stats.se[i, j]), int(stats.n[i, j]))
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if i != j
    }
    return Family(key, status, ranking_of(verdicts, estimates, best), best,
                  tuple(excluded), spread, n, said, threshold, pairs)  # fmt: skip


def decide(
    plan: PlanRecord,
    verdicts: Sequence[KindVerdict],
    weights: Mapping[str, float],
    eliminated: Mapping[str, Exclusion],
    threshold: float = PRACTICAL,
    kind_thresholds: Mapping[str, float] | None = None,
    cut: bool = False,
    floors: Mapping[str, float] | None = None,
) -> Decision | None:
    """The decision for the weighed kinds that have values (None when none has).

    eliminated: the filesystems a decisive run stopped measuring, with the claim it
    acted on (read from the session); they are out of the workload, not of the kinds.
    cut: the run ended early by its budget or an interruption (design_of).
    floors: per kind, the smallest difference its measurements can tell (a replayed
    trace's error): its claims, and the workload's in proportion to its weight, need
    more than that.
    """
    weighed = [v for v in verdicts if weights.get(v.kind, 0) > 0 and v.by_rep]
    if not weighed:
        return None
    names = sorted(set.intersection(*(set(v.by_rep) for v in weighed)))
    if len(names) < 1:
        return None
    y, rounds = blocks(weighed, names)
    design = design_of(plan, len(names), len(weighed), len(rounds), cut)
    bound = calibrated(design)
    cleaned = clean(y)
    w = np.array([weights[v.kind] for v in weighed], dtype=float)
    work = workload(cleaned, w)
    floor_of = floors or {}
    total = float(w.sum()) or 1.0
    work_floor = sum(floor_of.get(v.kind, 0.0) * weights[v.kind] for v in weighed) / total
    work_verdicts = judge(paired(work), bound, threshold, work_floor)
    work_aside = np.asarray(cleaned.set_aside.any(0))
    family = _family(WORKLOAD, work, names, work_verdicts, eliminated, work_aside, rounds,
                     threshold)  # fmt: skip
    kinds = {}
    for k, verdict in enumerate(weighed):
        kept = cleaned.kept[k]
        own = (kind_thresholds or {}).get(verdict.kind, threshold)
        judged = judge(paired(kept), bound, own, floor_of.get(verdict.kind, 0.0))
        kinds[verdict.kind] = _family(
            verdict.kind, kept, names, judged, {}, cleaned.set_aside[k], rounds, own
        )
    used = {v.kind: weights[v.kind] for v in weighed}
    return Decision(family, kinds, design, bound, threshold, used)


def next_eliminations(decision: Decision) -> tuple[Exclusion, ...]:
    """What a decisive run eliminates after this look: the workload's exclusions among the
    filesystems still in the running (those eliminated before are already out)."""
    return tuple(e for e in decision.workload.excluded if not e.eliminated)
