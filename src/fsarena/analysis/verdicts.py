"""Verdicts of one session: per-task rankings, per-kind verdicts, the answer.

The kinds' values are computed in analysis.kinds, the decision (who is best for the
workload and in each weighed kind) in analysis.decision; here they are gathered, and
analysis.answer words them into the one answer every report and the JSON summary show,
with the caveats every answer from the session must carry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from fsarena.analysis.answer import (
    Answer,
    build_answer,
    kind_threshold,
    present_kinds,
    weights_of,
)
from fsarena.analysis.decision import Decision, Exclusion, decide
from fsarena.analysis.evidence import CeilingCheck, Index, TaskResult, ceiling_checks, rank_tasks
from fsarena.analysis.kinds import PRACTICAL, KindVerdict, kind_verdicts
from fsarena.analysis.method import loop_io
from fsarena.analysis.ranking import Ranking
from fsarena.analysis.replay import resolution_floor
from fsarena.analysis.rounds import round_seconds
from fsarena.analysis.tuned import tune_lines
from fsarena.session.file import Session
from fsarena.session.records import given


@dataclass(frozen=True)
class Verdicts:
    tasks: Mapping[tuple[str, str], TaskResult]  # (task, metric)
    kinds: tuple[KindVerdict, ...]
    answer: Answer
    ceilings: tuple[CeilingCheck, ...]
    decision: Decision | None = None

    def task(self, task: str, metric: str) -> TaskResult | None:
        return self.tasks.get((task, metric))


def caveats(session: Session) -> list[str]:
    """What every answer from this session must carry: fresh filesystems, this hardware, n."""
    host, plan = session.host, session.plan
    backing = host.workdir_backing
    made = [t for t in plan.tasks if plan.info(t).fresh]
    own = f" ({', '.join(made)}: each on a filesystem made anew for it)" if made else ""
    fresh = (
        f"Fresh filesystems: each repetition formats anew and runs the tasks once{own}; "
        "aged, fragmented or nearly full filesystems behave differently."
    )
    if plan.age is not None:  # an aged run: the verdicts rank the fresh twins
        fresh = (
            f"Fresh and aged ({plan.age.name or 'user'} profile) filesystems: the verdicts "
            "rank the fresh ones, the Age section shows what aging changed; another history "
            "of use or fullness can age them differently."
        )
        if made:  # an aged filesystem is restored, never made anew
            fresh += (
                f" {', '.join(made)}: each on a fresh filesystem made anew for it, on an "
                "aged one after the tasks before it."
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


CUT = ("budget", "interrupted")  # stops that do not depend on who leads


def eliminations(session: Session) -> dict[str, Exclusion]:
    """The filesystems the run stopped measuring, each with the claim it acted on, as the
    run recorded them (Session.race): what was done is read back, not recomputed."""
    out = {}
    for drop in session.race.drops if session.race else []:
        why = drop.behind[0] if drop.behind else {}
        out[drop.configuration] = Exclusion(
            drop.configuration,
            str(why.get("leader", "")),
            float(why.get("ratio", math.nan)),
            float(why.get("low", math.nan)),
            float(why.get("high", math.nan)),
            int(drop.after_rounds),
            eliminated=True,
        )
    return out


def decide_session(
    session: Session, index: Index, kinds: Sequence[KindVerdict], present: Sequence[str]
) -> Decision | None:
    """The session's decision at its rounds so far (analysis.decision)."""
    weights = weights_of(session.plan, present)
    thresholds = {k.kind: kind_threshold(index, k) for k in kinds if weights.get(k.kind, 0) > 0}
    # A run its budget or an interruption ended early spends what its looks left unspent.
    cut = session.status == "interrupted" or (session.stop is not None and session.stop.code in CUT)
    # A replayed trace tells no difference under its own replay error (analysis.replay).
    floors = {
        k.kind: max(found)
        for k in kinds
        if (found := [f for t in k.tasks if (f := resolution_floor(session, t)) is not None])
    }
    return decide(
        session.plan, kinds, weights, eliminations(session), PRACTICAL, thresholds, cut, floors
    )


def analyse(session: Session, columns: Mapping[str, Sequence[str]]) -> Verdicts:
    """Per-task rankings, per-kind verdicts and the answer for one session.

    `columns` maps each task to the metrics of its table (the first one is its
    headline, which kind verdicts use). The answer's weights are the plan's.
    """
    index = Index(session)
    checks = ceiling_checks(index)
    results = rank_tasks(index, columns)
    present = present_kinds(index, columns)
    kinds = kind_verdicts(index, columns, results)
    decision = decide_session(session, index, kinds, present)
    if decision is not None:  # the weighed kinds' rankings are the decision's own
        kinds = [
            replace(k, ranking=r) if (r := _decided(decision, k.kind)) is not None else k
            for k in kinds
        ]
    answer = build_answer(index, kinds, decision, present, caveats(session), round_seconds(session))
    # One voice: a kind's verdict (or fact) is the answer's own sentence, in every section.
    said = {a.kind: a.text for a in answer.kinds}
    kinds = [replace(k, summary=said[k.kind]) if k.kind in said else k for k in kinds]
    tune = tune_lines(session, kinds, decision)
    stopped = session.stop.text if session.stop else ""
    if tune or stopped:
        answer = replace(answer, tune=tune, stopped=stopped)
    return Verdicts(results, tuple(kinds), answer, checks, decision)


def _decided(decision: Decision, kind: str) -> Ranking | None:
    family = decision.kinds.get(kind)
    return family.ranking if family is not None else None
