"""Eliminations between rounds, as a session records them: which filesystem (or tune
configuration) a decisive run stopped measuring, after which round, and on what claim.

The claims are analysis.decision's (comparison with the best, rounds as blocks, at the
boundary calibrated for the run: analysis.selection). After each round from the plan's
own, the runner asks for them, saves them here (Session.race) before the next round,
and leaves them out of it; the answer reads them back (analysis.verdicts.eliminations).
A tune's defaults are never eliminated: they are what its answer measures against.
An aged run eliminates nothing: its aged twins are compared with their fresh selves.
"""

from __future__ import annotations

from collections.abc import Sequence

from fsarena.analysis.decision import Exclusion
from fsarena.analysis.kinds import PRACTICAL
from fsarena.session.file import Session
from fsarena.session.records import DropRecord, PlanRecord, RaceRecord


def eliminating(plan: PlanRecord) -> bool:
    """Whether the plan's rounds eliminate: a decisive run, not aged, not a full tune sweep."""
    if not plan.stopping.eliminates or plan.age is not None:
        return False
    return bool(plan.race) if plan.tune else True


def _x(value: float) -> str:
    return f"{value:.2f}×" if value < 100 else "over 100×"


def drops(
    plan: PlanRecord, found: Sequence[Exclusion], rounds: int, level: float
) -> list[DropRecord]:
    """The records of this look's eliminations (a tune's defaults kept in the running)."""
    kept = set(plan.tune) if plan.tune else set()
    out = []
    for e in found:
        if e.filesystem in kept:
            continue
        text = (
            f"{e.filesystem} eliminated after {rounds} rounds: {_x(e.ratio)} the time of "
            f"{e.than} ({_x(e.low)}–{_x(e.high)}), each claim at a one-sided "
            f"{100 * level:.3g} % (5 % error over the whole run)"
        )
        behind = [{"family": "workload", "leader": e.than, "ratio": e.ratio, "low": e.low,
                   "high": e.high}]  # fmt: skip
        defaults = next((d for d, c in plan.tune.items() if e.filesystem in c), "")
        record = DropRecord(
            configuration=e.filesystem,
            after_rounds=rounds,
            defaults=defaults,
            behind=behind,
            level=level,
            text=text,
        )
        out.append(record)
    return out


def record(session: Session, found: Sequence[DropRecord]) -> None:
    if session.race is None:
        session.race = RaceRecord(margin=PRACTICAL)
    session.race.drops.extend(found)


def dropped(session: Session) -> set[str]:
    return session.race.dropped() if session.race else set()
