"""How many rounds would settle an interval, and the one command that would run them. Pure."""

from __future__ import annotations

import math

from fsarena.analysis.kinds import PRACTICAL
from fsarena.session.file import Session

MAX_SUGGESTED_ROUNDS = 100  # beyond this, more rounds is not the answer


def rounds_to_rule_out(n: int, widest: float, target: float = PRACTICAL) -> int:
    """Rounds that would narrow an interval allowing WIDEST (relative) at n rounds to TARGET.

    Ratios' intervals are symmetric on logs, and narrow about as 1/sqrt(n) there: at least
    one round more than n, at most MAX_SUGGESTED_ROUNDS (an unknown width, nan, asks for one
    more; an infinite one, the most).
    """
    if math.isnan(widest):
        return min(n + 1, MAX_SUGGESTED_ROUNDS)
    if math.isinf(widest):
        return MAX_SUGGESTED_ROUNDS
    need = math.ceil(n * (math.log1p(widest) / math.log1p(target)) ** 2)
    return min(max(need, n + 1), MAX_SUGGESTED_ROUNDS)


def round_seconds(session: Session) -> float | None:
    """A measured round's wall time in this session (the slowest of the last three), if recorded."""
    walls = [float(r.wall_s) for r in session.timing.rounds if not r.warmup]
    return max(walls[-3:]) if walls else None


def settle_command(need: int, per_round_s: float | None, goal: str) -> str:
    """The one command that would reach GOAL at this spread, or why more rounds will not.

    The same words in the run's closing warning and in the report's answer.
    """
    if need >= MAX_SUGGESTED_ROUNDS:
        return (
            f"more rounds are not the fix: to {goal} would take {MAX_SUGGESTED_ROUNDS} or more "
            "at this spread; stop background work, or use an idle machine and disk"
        )
    if not per_round_s:
        return f"about {need} rounds would {goal} at this spread: `fsarena run -n {need}`"
    budget = math.ceil(need * per_round_s / 60) * 60
    return (
        f"about {need} rounds would {goal} at this spread: `fsarena run --time-budget "
        f"{budget} --max-repetitions {need}` (about {budget // 60} min at this run's pace)"
    )
