"""Verdicts of one session: per-task rankings, per-kind verdicts, the overall recommendation.

The kinds' verdicts are computed in analysis.kinds; here they are gathered,
and the recommendation weighs them: the filesystems best or tied for best in
the most kinds where the filesystems differ, none that lost on safety, with
the caveats every answer from the session must carry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fsarena.analysis.evidence import CeilingCheck, Index, TaskResult, ceiling_checks, rank_tasks
from fsarena.analysis.kinds import SAFETY_KIND, KindVerdict, kind_verdicts
from fsarena.analysis.phrases import names
from fsarena.session.file import Session
from fsarena.session.records import given


@dataclass(frozen=True)
class Recommendation:
    filesystems: tuple[str, ...]  # empty: no recommendation from these data
    summary: str
    reasons: tuple[str, ...]
    caveats: tuple[str, ...]


@dataclass(frozen=True)
class Verdicts:
    tasks: Mapping[tuple[str, str], TaskResult]  # (task, metric)
    kinds: tuple[KindVerdict, ...]
    recommendation: Recommendation
    ceilings: tuple[CeilingCheck, ...]

    def task(self, task: str, metric: str) -> TaskResult | None:
        return self.tasks.get((task, metric))


# ---------------------------------------------------------------- recommendation


def _recommend(session: Session, kinds: Sequence[KindVerdict]) -> Recommendation:
    decided = [k for k in kinds if not k.ranking.all_tied]
    notes = tuple(caveats(session))
    if not kinds:  # nothing compared: no tie either, only no data
        return Recommendation(
            (),
            "No recommendation: no kind of work has results from two or more filesystems.",
            (),
            notes,
        )
    if not decided:
        return Recommendation(
            (),
            "No recommendation from these measurements: every kind of work is a tie. "
            "Choose on safety across power loss, features (quotas, ACLs, resizing, "
            "snapshots) and what you can repair.",
            (),
            notes,
        )
    unsafe = {
        fs
        for k in decided
        if k.kind == SAFETY_KIND
        for fs in k.ranking.order
        if fs not in k.ranking.winners
    }
    filesystems = sorted({fs for k in kinds for fs in k.ranking.order})
    score = {
        fs: (
            sum(fs in k.ranking.winners for k in decided),
            -sum(fs in k.ranking.order and fs not in k.ranking.winners for k in decided),
        )
        for fs in filesystems
        if fs not in unsafe
    }
    if not score:
        return Recommendation((), "No filesystem kept its data safe in every test.", (), notes)
    top = max(score.values())
    chosen = tuple(fs for fs in filesystems if score.get(fs) == top)
    reasons = [
        f"{k.title}: {k.summary}" for k in decided if any(fs in k.ranking.winners for fs in chosen)
    ]
    lost = [
        f"{names(behind)} behind on {k.title}: {k.summary}"
        for k in decided
        if (
            behind := [fs for fs in chosen if fs in k.ranking.order and fs not in k.ranking.winners]
        )
    ]
    excluded = [f"{fs} is not recommended: it lost on safety" for fs in sorted(unsafe)]
    wins, _ = top
    summary = (
        f"{names(list(chosen))}: best or tied for best in {wins} of the {len(decided)} kinds "
        f"of work where the filesystems differ significantly"
        + (f" ({len(kinds) - len(decided)} more were ties)" if len(kinds) > len(decided) else "")
        + "."
    )
    return Recommendation(
        chosen,
        summary,
        tuple(reasons),
        tuple(lost) + tuple(excluded) + notes,
    )


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
        f"kernel {host.kernel or '?'}, loop images (direct I/O) on "
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


def analyse(session: Session, columns: Mapping[str, Sequence[str]]) -> Verdicts:
    """Per-task rankings, per-kind verdicts and the recommendation for one session.

    `columns` maps each task to the metrics of its table (the first one is its
    headline, which kind verdicts use).
    """
    index = Index(session)
    checks = ceiling_checks(index)
    results = rank_tasks(index, columns)
    kinds = kind_verdicts(index, columns, results)
    return Verdicts(results, tuple(kinds), _recommend(session, kinds), checks)
