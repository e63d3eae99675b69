"""Verdicts of one session: per-task rankings, per-kind verdicts, the answer.

The kinds' verdicts are computed in analysis.kinds, each at its share of the
error rate (answer.error_shares); here they are gathered, and analysis.answer
weighs them into the one answer every report and the JSON summary show, with
the caveats every answer from the session must carry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from fsarena.analysis.answer import (
    OPEN,
    UNTESTED,
    Answer,
    build_answer,
    error_shares,
    present_kinds,
)
from fsarena.analysis.evidence import CeilingCheck, Index, TaskResult, ceiling_checks, rank_tasks
from fsarena.analysis.kinds import PRACTICAL, KindVerdict, kind_verdicts
from fsarena.analysis.method import loop_io
from fsarena.analysis.rounds import round_seconds, rounds_to_rule_out, settle_command
from fsarena.analysis.tuned import tune_lines
from fsarena.session.file import Session
from fsarena.session.records import given


@dataclass(frozen=True)
class Verdicts:
    tasks: Mapping[tuple[str, str], TaskResult]  # (task, metric)
    kinds: tuple[KindVerdict, ...]
    answer: Answer
    ceilings: tuple[CeilingCheck, ...]

    def task(self, task: str, metric: str) -> TaskResult | None:
        return self.tasks.get((task, metric))


def caveats(session: Session) -> list[str]:
    """What every answer from this session must carry: fresh filesystems, this hardware, n."""
    host, plan = session.host, session.plan
    backing = host.workdir_backing
    fresh = (
        "Fresh filesystems: each repetition formats anew and runs the tasks once; aged, "
        "fragmented or nearly full filesystems behave differently."
    )
    if plan.age is not None:  # an aged run: the verdicts rank the fresh twins
        fresh = (
            f"Fresh and aged ({plan.age.name or 'user'} profile) filesystems: the verdicts "
            "rank the fresh ones, the Age section shows what aging changed; another history "
            "of use or fullness can age them differently."
        )
    out = [
        fresh,
        f"This hardware and kernel: {host.cpu_model or '?'} x{host.cpus or '?'}, "
        f"kernel {host.kernel or '?'}, {loop_io(session)} on "
        f"{backing.fstype or '?'} ({backing.device or '?'}); another disk "
        "(HDD, SSD, NVMe) or kernel can change the ranking.",
        f"{len(session.order) or given(plan.repetitions)} repetitions: smaller "
        "differences than the intervals "
        "shown cannot be told apart; a tie means 'not shown to differ', not 'equal'.",
    ]
    scale = plan.scale
    if scale is not None and scale < 1:
        out.append(
            f"Datasets at scale {scale} of the articles' sizes: fixed costs (process start, "
            "journal commits) weigh more than they would at full size."
        )
    drivers: dict[str, list[str]] = {}
    for name, profile in sorted(session.profiles_as_run.items()):
        drivers.setdefault(profile.driver or "?", []).append(name)
    if len(drivers) > 1:
        groups = "; ".join(f"{d}: {', '.join(names)}" for d, names in sorted(drivers.items()))
        costs = {
            "fuse": "user-space (FUSE) filesystems pay round trips the kernel's do not",
            "guest": "filesystems in a guest kernel pay its emulation's costs",
        }
        paid = "; ".join(text for driver, text in costs.items() if driver in drivers)
        out.append(
            f"Different driver groups ({groups}): {paid or 'their costs differ'}; compare "
            "within a group."
        )
    if session.status != "complete" or session.settled() != "complete":
        status = session.settled() if session.status == "complete" else session.status
        out.append(f"The session is {status}: some runs are missing.")
    return out


# ---------------------------------------------------------------- entry point


def _settle(session: Session, kinds: Sequence[KindVerdict], open_kinds: set[str]) -> str:
    """What would settle the open weighed kinds to PRACTICAL, as the run's warning says it."""
    rankings = [k.ranking for k in kinds if k.kind in open_kinds]
    widths = [r.detectable_difference for r in rankings if min(r.n.values(), default=0) >= 2]
    widths = [w for w in widths if not math.isnan(w)] or [
        max((p.detectable for p in r.pairs), default=math.nan) for r in rankings
    ]
    known = [w for w in widths if not math.isnan(w)]
    if not known:
        return "Run -n 3 or more to settle them."
    n = min(min(r.n.values()) for r in rankings)
    need = rounds_to_rule_out(n, max(known), PRACTICAL)
    text = settle_command(need, round_seconds(session), f"settle them to {100 * PRACTICAL:.0f} %")
    return text[:1].upper() + text[1:] + "."


def analyse(session: Session, columns: Mapping[str, Sequence[str]]) -> Verdicts:
    """Per-task rankings, per-kind verdicts and the answer for one session.

    `columns` maps each task to the metrics of its table (the first one is its
    headline, which kind verdicts use). The answer's weights are the plan's.
    """
    index = Index(session)
    checks = ceiling_checks(index)
    results = rank_tasks(index, columns)
    present = present_kinds(index, columns)
    shares, _, _ = error_shares(session.plan, present)
    kinds = kind_verdicts(index, columns, results, shares)
    first = build_answer(index, kinds, results, present, caveats(session), "")
    open_kinds = {k.kind for k in first.kinds if k.status in (OPEN, UNTESTED)}
    settle = _settle(session, kinds, open_kinds) if open_kinds else ""
    answer = replace(first, ties=settle) if settle else first
    tune = tune_lines(session, kinds, answer.weights, answer.alpha_per_family)
    stopped = session.stop.text if session.stop else ""
    if tune or stopped:
        answer = replace(answer, tune=tune, stopped=stopped)
    return Verdicts(results, tuple(kinds), answer, checks)
