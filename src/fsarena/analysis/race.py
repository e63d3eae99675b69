"""The race of a tune: after each round, drop the configurations already clearly behind.

`fsarena tune` runs a filesystem's defaults beside one configuration per option. Ten
configurations must not cost ten runs: after each round from FIRST_LOOK on, a
configuration is dropped (no longer measured) when it is shown behind another
configuration still in the race by more than MARGIN, in every family of the user's
workload: each weighed kind of work, and the workload as one number (the weighted
geometric mean of the kinds, analysis.answer) when several kinds are weighed. A
configuration best on one weighed kind is therefore never dropped for being behind on
another. The defaults are never dropped: they are what the margin is measured against.

The error rate, for the whole race (every look, every pair, every family): the chance
that a configuration which is in fact the best, or within MARGIN of the best, of some
family is ever dropped is at most ALPHA (5 %):
- each pair is Yuen's test on the logs of the family's values per round (20 % trimmed
  means, analysis.ranking), one-sided in effect: a drop needs the interval's lower end
  of "its time / the other's" above 1 + MARGIN;
- Bonferroni over the families (a drop needs every family, so a configuration within
  MARGIN of the best of family f is dropped only through a false claim in f: the
  families' shares add up to ALPHA) and over every pair of configurations of each
  filesystem as the tune planned them (the count does not shrink as configurations
  drop, so the bound does not depend on what was dropped);
- Pocock's constant boundary over every round the race may drop at (FIRST_LOOK up to
  the plan's ceiling), computed for that schedule (analysis.answer.pocock_level).
A configuration within MARGIN of the best has, against every other, a true ratio of
at most 1 + MARGIN: a drop is a false claim on one of those pairs.
tests/race_model.py drives this code under noise drawn from recorded sessions and
tests/unit/test_race_error_rate.py pins the rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fsarena.analysis.adaptive import headline_columns
from fsarena.analysis.answer import MAX_ROUNDS, pocock_level, weights_of, workload_samples
from fsarena.analysis.kinds import PRACTICAL, KindVerdict
from fsarena.analysis.ranking import ALPHA, robust_ratio_test
from fsarena.analysis.scope import verdict_scope
from fsarena.analysis.tuned import WORKLOAD
from fsarena.analysis.verdicts import analyse
from fsarena.session.file import Session
from fsarena.session.records import DropRecord, PlanRecord, RaceRecord

MARGIN = PRACTICAL  # dropped only when shown behind by more than 5 %
FIRST_LOOK = 3  # the fewest rounds a drop may rest on (at n = 2 an interval spans decades)


@dataclass(frozen=True)
class Family:
    title: str
    samples: Mapping[str, Sequence[float]]  # per configuration, one value per round; lower wins


def ceiling(plan: PlanRecord) -> int:
    """The most rounds the plan may run (the stopping rule's ceiling)."""
    if plan.decisive or plan.target_ci_pct is not None:
        return plan.max_repetitions or max(plan.repetitions or 0, MAX_ROUNDS)
    return plan.repetitions or 1


def race_rounds(plan: PlanRecord) -> tuple[int, ...]:
    """Every round count after which the race may drop a configuration."""
    return tuple(range(FIRST_LOOK, ceiling(plan) + 1))


def pair_count(plan: PlanRecord) -> int:
    """The pairs of configurations the race may test: within each filesystem, as planned."""
    return sum(len(c) * (len(c) - 1) // 2 for c in plan.tune.values())


def families(session: Session, kinds: Sequence[KindVerdict]) -> list[Family]:
    """The user's workload as the race weighs it: each weighed kind, and the workload."""
    weights = weights_of(session.plan, [k.kind for k in kinds])
    weighed = [k for k in kinds if weights.get(k.kind, 0) > 0 and k.by_rep]
    out = [Family(k.title, {fs: list(v.values()) for fs, v in k.by_rep.items()}) for k in weighed]
    if len(weighed) > 1:
        out.append(Family(WORKLOAD, workload_samples(weighed, weights)))
    return out


def level(plan: PlanRecord, family_count: int) -> float:
    """The nominal two-sided level each pair is tested at, at each look."""
    rounds = race_rounds(plan)
    share = ALPHA / max(1, family_count) / max(1, pair_count(plan))
    return pocock_level(rounds, share) if len(rounds) > 1 else share


@dataclass(frozen=True)
class Behind:
    family: str
    leader: str
    ratio: float  # the configuration's time / the leader's (trimmed geometric means)
    low: float
    high: float


def behind(
    config: str, others: Sequence[str], family: Family, confidence: float, margin: float
) -> Behind | None:
    """The configuration CONFIG is shown behind by more than MARGIN (the clearest), or None."""
    mine = family.samples.get(config)
    if not mine or len(mine) < 2:
        return None
    found = None
    for other in others:
        theirs = family.samples.get(other)
        if other == config or not theirs or len(theirs) < 2:
            continue
        test = robust_ratio_test(mine, theirs, confidence)
        if math.isnan(test.low) or test.low <= 1 + margin:
            continue
        if found is None or test.low > found.low:
            found = Behind(family.title, other, test.ratio, test.low, test.high)
    return found


def _x(value: float) -> str:
    return f"{value:.2f}×" if value < 100 else "over 100×"


def describe(config: str, rounds: int, reasons: Sequence[Behind], alpha: float) -> str:
    why = "; ".join(
        f"on {b.family} {_x(b.ratio)} the time of {b.leader} ({_x(b.low)}–{_x(b.high)})"
        for b in reasons
    )
    return (
        f"{config} dropped after {rounds} rounds: {why}; each test at {100 * alpha:.3g} % "
        f"(more than {100 * MARGIN:.0f} % behind, 5 % error over the whole race)"
    )


def decide(session: Session) -> list[DropRecord]:
    """The configurations to drop after the rounds done so far (empty: none, or no race)."""
    plan = session.plan
    rounds = len(session.order)
    if not plan.race or not plan.tune or rounds not in race_rounds(plan):
        return []
    dropped = session.race.dropped() if session.race else set()
    verdicts = analyse(verdict_scope(session), headline_columns(session))
    found = families(session, verdicts.kinds)
    if not found:
        return []
    alpha = level(plan, len(found))
    out = []
    for defaults, configs in plan.tune.items():
        active = [c for c in configs if c not in dropped]
        for config in active:
            if config == defaults:
                continue
            reasons = []
            for family in found:
                b = behind(config, active, family, 1 - alpha, MARGIN)
                if b is None:
                    break
                reasons.append(b)
            else:
                out.append(
                    DropRecord(
                        configuration=config,
                        after_rounds=rounds,
                        defaults=defaults,
                        behind=[b.__dict__ for b in reasons],
                        level=alpha,
                        text=describe(config, rounds, reasons, alpha),
                    )
                )
    return out


def record(session: Session, drops: Sequence[DropRecord]) -> None:
    if session.race is None:
        session.race = RaceRecord(margin=MARGIN)
    session.race.drops.extend(drops)


def dropped(session: Session) -> set[str]:
    return session.race.dropped() if session.race else set()


def contenders(session: Session) -> Session:
    """The session as the stopping rule reads it in a race: the dropped configurations out."""
    gone = dropped(session)
    if not gone:
        return session
    keep = [fs for fs in session.plan.filesystems if fs not in gone]
    plan = session.plan.model_copy(update={"filesystems": keep})
    runs = [r for r in session.runs if r.filesystem not in gone]
    return session.model_copy(update={"plan": plan, "runs": runs})


def only_defaults_left(session: Session) -> bool:
    """Every configuration but the defaults dropped, for every filesystem: nothing to race."""
    gone = dropped(session)
    tune = session.plan.tune
    return bool(session.plan.race and tune and gone) and all(
        set(configs) - gone <= {defaults} for defaults, configs in tune.items()
    )
