"""The answer of a tune: per weighed kind and for the workload, the best configuration of
each filesystem against its defaults, or the defaults as good as anything. Pure.

Read from the same rankings as the answer (analysis.answer: Yuen-Welch on logs,
Bonferroni over the pairs and families, Pocock over the looks), so the margin and its
interval carry the answer's own error rate:
- a configuration is named best when it is ahead of the defaults significantly: its
  margin is the ratio of times (trimmed geometric means) and the answer's interval;
- otherwise "the defaults are as good as anything here, within X %", where X is the
  largest advantage over the defaults that any configuration still in the race leaves
  possible (the far end of its interval against the defaults): measured, never set.
  When X is above the practical threshold (5 %) the line says that instead: nothing is
  shown better, and up to X % better remains possible.
Configurations the race dropped (analysis.race) are left out of X: each was shown
behind a configuration still in the race by more than the race's margin, at the race's
own error rate, so none of them can beat the defaults by more than those that stayed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fsarena.analysis.decision import Decision
from fsarena.analysis.kinds import PRACTICAL, KindVerdict
from fsarena.analysis.phrases import names, number
from fsarena.analysis.ranking import Pair, Ranking
from fsarena.session.file import Session

WORKLOAD = "your workload"


def advantage(pair: Pair, config: str) -> float:
    """How much better than the other CONFIG may be, as the pair's interval allows (a
    fraction; inf when the interval is unbounded, nan without one)."""
    if math.isnan(pair.low) or math.isnan(pair.high):
        return math.nan
    if pair.better == config:
        return pair.high - 1
    return (1 / pair.low - 1) if pair.low > 0 else math.inf


def _x(value: float) -> str:
    return f"{value:.2f}×" if value < 100 else "over 100×"


def interval(pair: Pair) -> str:
    """'1.12–1.53×', with the ends beyond any ratio worded as such."""
    if math.isnan(pair.low) or math.isnan(pair.high):
        return "no interval"
    low = f"{pair.low:.2f}" if pair.low >= 0.01 else "under 0.01"
    return f"{low}–{_x(pair.high)}"


def _pct(fraction: float) -> str:
    if math.isinf(fraction) or fraction >= 99:
        return "100× or more"
    return f"{number(100 * fraction, 2)} %"


def verdict_line(
    title: str, ranking: Ranking, word: str, defaults: str, contenders: Sequence[str]
) -> str | None:
    """One family's answer for one filesystem's configurations (None: not ranked here)."""
    group = [c for c in ranking.order if c in contenders or c == defaults]
    if defaults not in ranking.order or len(group) < 2:
        return None
    n = min(ranking.n[c] for c in group)
    leader = group[0]
    pair = ranking.pair(leader, defaults) if leader != defaults else None
    if pair is not None and pair.significant:
        tied = [c for c in group if c != leader and c in ranking.winners and c != defaults]
        lead = f"{leader}" + (f" (tied with {names(tied)})" if tied else "")
        return (
            f"{title}: {lead}, {_x(pair.ratio)} {word} the defaults ({defaults}) "
            f"({interval(pair)}, n = {n})"
        )
    bounds = {
        c: advantage(p, c)
        for c in group
        if c != defaults and (p := ranking.pair(c, defaults)) is not None
    }
    known = [b for b in bounds.values() if not math.isnan(b)]
    if not known:
        return f"{title}: no interval against the defaults ({defaults}) yet (n = {n})"
    widest = max(known)
    if widest <= PRACTICAL:
        return (
            f"{title}: the defaults ({defaults}) are as good as anything here, within "
            f"{_pct(max(widest, 0.0))} (n = {n})"
        )
    ahead = ""
    if leader != defaults and (best := ranking.pair(leader, defaults)) is not None:
        ahead = (
            f"; {leader} ahead by the estimate, {_x(best.ratio)} {word} the defaults "
            f"({interval(best)}, not resolved)"
        )
    return (
        f"{title}: no configuration shown better than the defaults ({defaults}){ahead}; "
        f"up to {_pct(widest)} better remains possible (n = {n})"
    )


def tune_lines(
    session: Session, kinds: Sequence[KindVerdict], decision: Decision | None
) -> tuple[str, ...]:
    """The tune's answer, then what the race dropped (empty outside a tune)."""
    plan = session.plan
    if not plan.tune or decision is None:
        return ()
    dropped = session.race.dropped() if session.race else set()
    weighed = [v for v in kinds if v.kind in decision.kinds]
    workload = decision.workload.ranking if len(weighed) > 1 else None
    out = []
    for defaults, configs in plan.tune.items():
        contenders = [c for c in configs if c not in dropped]
        for v in weighed:
            if line := verdict_line(v.title, v.ranking, v.word, defaults, contenders):
                out.append(line)
        if workload is not None and (
            line := verdict_line(WORKLOAD, workload, "better than", defaults, contenders)
        ):
            out.append(line)
    if session.race:
        out += [d.text for d in session.race.drops]
    return tuple(out)
