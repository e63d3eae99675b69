"""The answer of a tune: what to do with each filesystem's settings, each configuration's
time and space beside its defaults, and what the rounds eliminated. Pure.

Read from the decision (analysis.decision: rounds as blocks, comparison with the best,
one boundary calibrated for the run), so every ratio and interval here carries the
answer's own error rate:
- the time: each configuration against its defaults for the workload (the weighted mean
  of the weighed kinds, or the one kind), the ratio of their times and its interval
  over the rounds both ran; "shown" when the interval excludes 1, a claim at the
  decision's level. A configuration is recommended when it is shown faster than the
  defaults; otherwise the defaults are kept, "as good as anything here, within X %",
  X being the largest advantage over the defaults the interval of any configuration
  still in the running leaves possible (measured, never set), or, above the threshold
  (5 %), the advantage that remains possible;
- the space: what compsize counted on disk for the files the writing tasks added
  (run/space.py records it on compressing configurations and their uncompressed
  peers), medians over the rounds summed over the tasks both ran, as a multiple of
  the defaults'. It is a count of bytes, not a timing (the same data with the same
  setting takes about the same space every round): a fact shown beside the time, not
  a test. Space weighs in the decision only when the user weighs the space kind
  (--weigh space=1: its capacity figures, analysis.answer);
- the trade, on the first line: the configurations that take less space (at least the
  threshold less), those no other beats on both time and space, with what they cost
  in time on the weighed kind where they are slowest;
- the eliminations, as the run recorded them (Session.race: after which round, behind
  whom, by how much): configurations shown behind the best were not measured after.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fsarena.analysis.decision import EQUAL, Decision, Family
from fsarena.analysis.evidence import Index
from fsarena.analysis.kinds import PRACTICAL, KindVerdict
from fsarena.analysis.phrases import names, number
from fsarena.analysis.race import eliminating
from fsarena.analysis.ranking import Ranking
from fsarena.session.file import Session
from fsarena.session.records import DropRecord, PlanRecord

WORKLOAD = "your workload"
SPACE_METRIC = "compsize_disk_added_bytes"  # what a writing task added on disk (compsize)
TRADES_SHOWN = 3  # the trade-offs named on the first line; every one has its own line


@dataclass(frozen=True)
class Against:
    """A configuration's time (or value) as a multiple of its defaults': above 1 slower."""

    ratio: float
    low: float
    high: float
    n: int  # the rounds both ran
    shown: bool  # the interval excludes 1: a claim at the decision's level

    def faster(self) -> bool:
        return self.shown and self.high < 1


@dataclass(frozen=True)
class Space:
    """compsize's disk bytes for the files the writing tasks added, summed over the tasks
    measured on both a configuration and its defaults (medians over the rounds)."""

    bytes: float
    defaults_bytes: float
    tasks: tuple[str, ...]

    @property
    def ratio(self) -> float:
        return self.bytes / self.defaults_bytes


@dataclass(frozen=True)
class Row:
    """One configuration beside its defaults."""

    configuration: str
    workload: Against | None
    kinds: Mapping[str, Against]  # per weighed kind's title
    space: Space | None
    drop: DropRecord | None


# ---------------------------------------------------------------- figures


def against(ranking: Ranking, family: Family, config: str, defaults: str) -> Against | None:
    """CONFIG's value over DEFAULTS' in one family, with the decision's interval."""
    pair = ranking.pair(config, defaults)
    if pair is None or math.isnan(pair.ratio):
        return None
    if pair.better == defaults:
        ratio, low, high = pair.ratio, pair.low, pair.high
    else:
        ratio = 1 / pair.ratio
        low = 1 / pair.high if pair.high > 0 else math.nan
        high = 1 / pair.low if pair.low > 0 else math.inf
    n = family.paired.get((config, defaults), (0.0, 0.0, 0))[2]
    return Against(ratio, low, high, n, pair.significant)


def task_space(index: Index, configuration: str) -> dict[str, float]:
    """Per writing task, the median of what it added on disk (compsize), where positive."""
    out = {}
    for task in index.session.tasks():
        found = list(index.samples(configuration, task, SPACE_METRIC).values())
        if found and (median := statistics.median(found)) > 0:
            out[task] = median
    return out


def space_of(index: Index, configuration: str, defaults: str) -> Space | None:
    mine, theirs = task_space(index, configuration), task_space(index, defaults)
    tasks = tuple(t for t in mine if t in theirs)
    if not tasks:
        return None
    return Space(sum(mine[t] for t in tasks), sum(theirs[t] for t in tasks), tasks)


def rows(
    index: Index,
    decision: Decision,
    weighed: Sequence[KindVerdict],
    defaults: str,
    configs: Sequence[str],
    drops: Mapping[str, DropRecord],
) -> list[Row]:
    """The defaults, then each configuration, with its figures against the defaults."""
    work = decision.workload
    out = []
    for c in [defaults, *configs]:
        kinds = {}
        for v in weighed:
            family = decision.kinds[v.kind]
            if c != defaults and (a := against(family.ranking, family, c, defaults)):
                kinds[v.title] = a
        mine = against(work.ranking, work, c, defaults) if c != defaults else None
        space = space_of(index, c, defaults)
        out.append(Row(c, mine, kinds, space, drops.get(c)))
    return out


# ---------------------------------------------------------------- words


def _x(value: float) -> str:
    if math.isinf(value) or value >= 100:
        return "over 100×"
    return f"{value:.2f}×"


def _interval(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return "no interval"
    start = f"{low:.2f}" if low >= 0.01 else "under 0.01"
    return f"{start}–{_x(high)}"


def _pct(fraction: float) -> str:
    """'4.6 %', or as a ratio past 100 % ('9.04×'), as the answer says its sizes."""
    if math.isinf(fraction) or fraction >= 99:
        return "100× or more"
    return f"{number(100 * fraction, 2)} %" if fraction < 1 else _x(1 + fraction)


def _mb(value: float) -> str:
    return f"{number(value / 1e6)} MB"


@dataclass(frozen=True)
class Words:
    """How one filesystem's figures are said: the workload's name and its comparatives."""

    scope: str  # "for your workload", "on databases"
    up: str  # "faster", "better"
    down: str  # "slower", "worse"
    same: str = "as fast as"  # "as good as"


def words_of(weighed: Sequence[KindVerdict]) -> Words:
    scope = f"on {weighed[0].title}" if len(weighed) == 1 else f"for {WORKLOAD}"
    timed = all(v.word == "faster than" for v in weighed)
    if timed:
        return Words(scope, "faster", "slower")
    return Words(scope, "better", "worse", "as good as")


def time_words(a: Against, w: Words, than: str = "the defaults", scope: bool = True) -> str:
    """'1.31× faster than the defaults for your workload (1.12–1.53×, n = 5)', said not
    shown when the interval holds 1."""
    where = f" {w.scope}" if scope else ""
    if abs(a.ratio - 1) < 0.005:
        how = f"{w.same} {than}{where} by the estimate"
    elif a.ratio < 1:
        how = f"{_x(1 / a.ratio)} {w.up} than {than}{where}"
    else:
        how = f"{_x(a.ratio)} {w.down} than {than}{where}"
    low = 1 / a.high if a.high > 0 else math.inf
    high = 1 / a.low if a.low > 0 else math.inf
    bounds = _interval(low, high) if a.ratio < 1 else _interval(a.low, a.high)
    shown = "" if a.shown else ", not shown"
    return f"{how} ({bounds}, n = {a.n}{shown})"


def space_words(space: Space) -> str:
    """'80 % less space (19 MB against 95.1 MB, compsize)'."""
    r = space.ratio
    if abs(r - 1) < 0.005:
        how = "the same space"
    elif r < 1:
        how = f"{number(100 * (1 - r), 2)} % less space"
    else:
        how = f"{number(100 * (r - 1), 2)} % more space"
    return f"{how} ({_mb(space.bytes)} against {_mb(space.defaults_bytes)}, compsize)"


def drop_words(drop: DropRecord, w: Words) -> str:
    """'eliminated after 6 rounds: 2.10× the time of btrfs-nodatacow (1.50–2.90×)'."""
    why = drop.behind[0] if drop.behind else {}
    ratio, low, high = (float(why.get(k, math.nan)) for k in ("ratio", "low", "high"))
    leader = str(why.get("leader", "?"))
    what = "the time" if w.up == "faster" else "the value"
    level = f", a one-sided {number(100 * float(drop.level), 3)} % claim" if drop.level else ""
    return (
        f"eliminated after {drop.after_rounds} rounds: {_x(ratio)} {what} of {leader} "
        f"{w.scope} ({_interval(low, high)}{level}), not measured after"
    )


def row_line(row: Row, defaults: str, w: Words) -> str:
    """One configuration: its time and space against the defaults, or how it left."""
    if row.configuration == defaults:
        assert row.space is not None  # the defaults have a line only for their space
        return (
            f"{defaults}: the defaults; {_mb(row.space.bytes)} on disk for the files the "
            f"writing tasks added ({names(list(row.space.tasks))}; compsize)"
        )
    parts = []
    if row.drop is not None:
        parts.append(drop_words(row.drop, w))
    if row.workload is not None:
        parts.append(time_words(row.workload, w))
    else:
        parts.append("no interval against the defaults")
    if row.space is not None:
        parts.append(space_words(row.space))
    return f"{row.configuration}: " + "; ".join(parts)


def _widest(contenders: Sequence[Row]) -> float | None:
    """The largest advantage over the defaults the contenders' intervals leave possible
    (a fraction; None when none has an interval)."""
    found = [
        (1 / r.workload.low - 1) if r.workload.low > 0 else math.inf
        for r in contenders
        if r.workload is not None and not math.isnan(r.workload.low)
    ]
    return max(found) if found else None


def action(defaults: str, table: Sequence[Row], family: Family, w: Words) -> str:
    """What to do: a configuration shown better than the defaults, or keep the defaults."""
    configs = [r for r in table if r.configuration != defaults]
    better = sorted(
        (r for r in configs if r.workload is not None and r.workload.faster()),
        key=lambda r: r.workload.ratio if r.workload else math.inf,
    )
    if better:
        top = better[0]
        assert top.workload is not None
        tied = [r.configuration for r in better[1:] if r.configuration in family.best]
        also = ""
        if tied and top.configuration in family.best:
            apart = (
                f"within {_pct(family.spread)} of each other"
                if family.status == EQUAL
                else "not told apart yet"
            )
            also = f" (or {names(tied)}: {apart})"
        return f"use {top.configuration}{also}: {time_words(top.workload, w)}"
    contenders = [r for r in configs if r.drop is None]
    n = max((r.workload.n for r in configs if r.workload is not None), default=0)
    widest = _widest(contenders)
    if widest is None:
        return f"keep the defaults ({defaults}): no interval against them yet (n = {n})"
    if widest <= PRACTICAL:
        return (
            f"keep the defaults ({defaults}): as good as anything here {w.scope}, within "
            f"{_pct(max(widest, 0.0))} (n = {n})"
        )
    ahead = min(
        (r for r in contenders if r.workload is not None),
        key=lambda r: r.workload.ratio if r.workload else math.inf,
    )
    lead = ""
    if ahead.workload is not None and ahead.workload.ratio < 0.995:
        said = time_words(ahead.workload, w, scope=False)
        lead = f"; {ahead.configuration} ahead by the estimate, {said}"
    return (
        f"keep the defaults ({defaults}) for now: no configuration shown {w.up} {w.scope}"
        f"{lead}; up to {_pct(widest)} {w.up} remains possible (n = {n})"
    )


def trades(table: Sequence[Row], defaults: str) -> list[Row]:
    """The configurations that take at least the threshold less space than the defaults
    and that no other such configuration beats on both time and space, smallest first."""
    small = [
        r
        for r in table
        if r.configuration != defaults
        and r.space is not None
        and r.space.ratio <= 1 - PRACTICAL
        and r.workload is not None
    ]

    def beaten(r: Row) -> bool:
        assert r.space is not None and r.workload is not None
        return any(
            q is not r
            and q.space is not None
            and q.workload is not None
            and q.space.ratio <= r.space.ratio
            and q.workload.ratio <= r.workload.ratio
            and (q.space.ratio < r.space.ratio or q.workload.ratio < r.workload.ratio)
            for q in small
        )

    front = [r for r in small if not beaten(r)]
    return sorted(front, key=lambda r: r.space.ratio if r.space else 1.0)


def trade_words(row: Row, w: Words) -> str:
    """'btrfs-compress-zstd-1: 80 % less space, 1.31× slower on file trees (1.12–1.53×)'."""
    assert row.space is not None and row.workload is not None
    saved = f"{number(100 * (1 - row.space.ratio), 2)} % less space"
    if row.kinds and len(row.kinds) > 1:
        title, worst = max(row.kinds.items(), key=lambda kv: kv[1].ratio)
        cost = time_words(worst, Words(f"on {title}", w.up, w.down, w.same), than="the defaults")
    else:
        cost = time_words(row.workload, w)
    return f"{row.configuration}: {saved}, {cost}"


def first_line(defaults: str, table: Sequence[Row], family: Family, w: Words) -> str:
    """The filesystem's line: what to do, then the space it could trade for time."""
    line = f"{defaults}: {action(defaults, table, family, w)}"
    front = trades(table, defaults)
    if front:
        said = "; ".join(trade_words(r, w) for r in front[:TRADES_SHOWN])
        more = f" (and {len(front) - TRADES_SHOWN} more below)" if len(front) > TRADES_SHOWN else ""
        line += f". The trade: {said}{more}"
    return line


def eliminated_line(table: Sequence[Row], rounds: int, plan: PlanRecord) -> str:
    """Which configurations left the running, and after which round, or why none did."""
    gone = sorted((r for r in table if r.drop), key=lambda r: r.drop.after_rounds if r.drop else 0)
    if gone:
        return "eliminated (not measured after): " + ", ".join(
            f"{r.configuration} after {r.drop.after_rounds} rounds" for r in gone if r.drop
        )
    if not eliminating(plan):
        why = "--no-race" if plan.decisive and not plan.race else "a fixed number of rounds"
        return f"eliminated: none ({why}: every configuration measured in all {rounds} rounds)"
    return (
        f"eliminated: none in {rounds} rounds (a configuration leaves the running once shown "
        "behind the best at a look)"
    )


def verdict_line(
    title: str, ranking: Ranking, word: str, defaults: str, contenders: Sequence[str]
) -> str | None:
    """One weighed kind's best configuration against the defaults (None: not ranked here)."""
    group = [c for c in ranking.order if c in contenders or c == defaults]
    if defaults not in ranking.order or len(group) < 2:
        return None
    n = min(ranking.n[c] for c in group)
    leader = group[0]
    pair = ranking.pair(leader, defaults) if leader != defaults else None
    if pair is not None and pair.significant:
        return (
            f"{title}: {leader}, {_x(pair.ratio)} {word} the defaults ({defaults}) "
            f"({_interval(pair.low, pair.high)}, n = {n})"
        )
    if pair is not None and not math.isnan(pair.ratio):
        return (
            f"{title}: none shown {word} the defaults ({defaults}); {leader} ahead by the "
            f"estimate, {_x(pair.ratio)} ({_interval(pair.low, pair.high)}, n = {n})"
        )
    return f"{title}: the defaults ({defaults}) ahead by the estimate (n = {n})"


def tune_lines(
    session: Session, kinds: Sequence[KindVerdict], decision: Decision | None
) -> tuple[str, ...]:
    """The tune's answer, per filesystem swept: what to do and the trade, each
    configuration against the defaults, then each weighed kind's best (empty outside a
    tune)."""
    plan = session.plan
    if not plan.tune or decision is None:
        return ()
    index = Index(session)
    drops = {d.configuration: d for d in session.race.drops} if session.race else {}
    weighed = [v for v in kinds if v.kind in decision.kinds]
    w = words_of(weighed)
    names_in = set(decision.workload.ranking.order)
    out = []
    for defaults, configs in plan.tune.items():
        swept = [c for c in configs if c != defaults and c in names_in]
        if defaults not in names_in or not swept:
            continue
        table = rows(index, decision, weighed, defaults, swept, drops)
        out.append(first_line(defaults, table, decision.workload, w))
        out.append(eliminated_line(table, len(session.order), plan))
        out += [row_line(r, defaults, w) for r in table if r.configuration != defaults or r.space]
        if len(weighed) > 1:
            contenders = [c for c in swept if c not in drops]
            for v in weighed:
                ranking = decision.kinds[v.kind].ranking
                if line := verdict_line(v.title, ranking, v.word, defaults, contenders):
                    out.append(line)
    return tuple(out)
