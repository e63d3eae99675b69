"""The answer: what to use for this workload, by how much at least, and what to avoid. Pure.

One implementation, read by every report format, the JSON summary and `compare`:
- The user's workload decides. Each kind of work weighs what the plan says
  (--weigh KIND=W, --workload NAME, or the suite's [weights]); without weights
  every workload kind measured weighs 1, and the facts weigh 0.
- Facts are not votes: capacity (on the image size it was measured on), the
  mkfs/mount/umount lifecycle, the CPU of the tasks' own processes and the
  device bytes written are shown on their own lines and weigh nothing unless
  the user weighs them. Page-cache demonstrations never vote.
- The decision is analysis.decision's: rounds as blocks, each filesystem compared
  with the best, eliminated between rounds once shown behind, at one boundary
  calibrated so that under no real difference the chance of naming any false winner
  (in the recommendation or any weighed kind, at any look) is 5 %
  (analysis.selection, analysis.calibration). Here it is worded, once.
- Words come from the decision's records. The first line is what to do: the best
  (one filesystem, or two within 4 % of each other), then what not to use and by how
  much (one 1.38× slower). "No difference that matters" only when every pair
  is shown within the threshold; "against it" only from a kind's own metric, at the
  decision's level, naming it. An undecided answer says what would decide it at this
  run's spread, and which task's noise is the cause.
- Nothing dropped in silence: tasks left out of a kind are named with the reason;
  a filesystem whose run failed verification, timed out or ran out of space in
  a weighed kind is not recommendable for that kind, and the answer says so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fsarena.analysis.decision import (
    EQUAL,
    OPEN,
    UNTESTED,
    WIN,
    WORKLOAD,
    Decision,
    Exclusion,
    Family,
)

__all__ = ["EQUAL", "FACT", "OPEN", "OVERALL", "UNTESTED", "WIN", "Answer", "Judged"]
from fsarena.analysis.evidence import Index
from fsarena.analysis.kinds import (
    CPU_KIND,
    CPU_METRIC,
    DEMONSTRATION_KIND,
    PRACTICAL,
    SAFETY_KIND,
    KindVerdict,
    cpu_whose,
    servers_counted,
)
from fsarena.analysis.phrases import names, number
from fsarena.analysis.ranking import ALPHA, Pair, Ranking
from fsarena.analysis.replay import resolution_floor
from fsarena.kinds import KINDS
from fsarena.measure.metrics import METRICS
from fsarena.session.records import PlanRecord

FACT = "fact"
OVERALL = WORKLOAD  # Answer.judged's key for the weighted comparison of several kinds
# Kinds that are facts about the filesystems, not the user's workload: weight 0 by default.
FACT_KINDS = ("lifecycle", "space", CPU_KIND)
NEVER_WEIGHED = (DEMONSTRATION_KIND,)
# Named workloads (--workload NAME): the kinds each stands for.
PROFILES: dict[str, dict[str, float]] = {
    "database": {"databases": 1.0},
    "mail": {"small_synced_files": 1.0},
    "fileserver": {"file_serving": 1.0, "large_files": 1.0, "file_trees": 1.0},
    "vm": {"random_io": 1.0},
    "desktop": {"file_trees": 1.0, "listing_search": 1.0, "development": 1.0},
}
# Failures that make a filesystem not recommendable for the kind they happened in.
DISQUALIFYING = {
    "verify": "its result failed verification",
    "timeout": "timed out",
    "enospc": "ran out of space",
}
MAX_SUGGESTED_ROUNDS = 100  # beyond this, more rounds is not the answer


@dataclass(frozen=True)
class KindAnswer:
    """One kind of work, in one sentence."""

    kind: str
    title: str
    status: str  # WIN | EQUAL | OPEN | UNTESTED | FACT
    text: str  # the sentence after the title
    weight: float = 0.0
    winners: tuple[str, ...] = ()  # the best: one (WIN), or a group (EQUAL, OPEN)
    runner_up: str = ""
    confidence: str = ""  # "high" | "moderate" ("" unless a win)
    margin: str = ""  # the best against the runner-up: 'xfs 1.91× faster than ext4'
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    excluded: tuple[str, ...] = ()  # "iso_delete (no valid run on btrfs (failed: timeout))"
    not_recommendable: tuple[str, ...] = ()  # "btrfs: iso_copy_in timed out"


@dataclass(frozen=True)
class Judged:
    """What a family's words were judged on: its ranking (every pair with its interval) and
    the practical threshold ("no difference that matters" within it). The drawn answer
    (report.answer_figure) shows these, so the picture and the words cannot disagree."""

    ranking: Ranking
    threshold: float
    word: str  # "faster than", "better than", ...


@dataclass(frozen=True)
class Answer:
    recommendation: str  # one line, with its weights; when empty, why there is no answer
    kinds: tuple[KindAnswer, ...]  # weighed kinds, then facts, in the verdicts' order
    ties: str  # what would settle the open kinds; "" if none
    caveats: tuple[str, ...]
    recommended: tuple[str, ...] = ()
    weights: Mapping[str, float] = field(default_factory=dict)
    status: str = UNTESTED  # of the recommendation: WIN | EQUAL | OPEN | UNTESTED
    ratio: float | None = None  # the recommended against the runner-up, overall
    low: float | None = None
    high: float | None = None
    looks: int = 1
    alpha_per_family: float = ALPHA  # the nominal one-sided level of a claim at the last look
    method: str = ""
    # fsarena tune: the best configuration per weighed kind and for the workload against
    # the filesystem's defaults, then what the race dropped (analysis.tuned).
    tune: tuple[str, ...] = ()
    stopped: str = ""  # why the run took no more rounds (Session.stop), "" when unrecorded
    # Each weighed kind's Judged, and OVERALL's (the recommendation's) when several are weighed.
    judged: Mapping[str, Judged] = field(default_factory=dict)
    # The filesystems to avoid for the workload, each with the claim that excludes it.
    avoid: tuple[Exclusion, ...] = ()
    # Other driver groups' own answers (a guest kernel's filesystems ranked among themselves).
    groups: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.kinds and not self.ties


# ---------------------------------------------------------------- weights


def default_weights(kinds: Sequence[str]) -> dict[str, float]:
    """Every workload kind weighs 1; facts and demonstrations 0."""
    return {k: 0.0 if k in FACT_KINDS or k in NEVER_WEIGHED else 1.0 for k in kinds}


def weights_of(plan: PlanRecord, kinds: Sequence[str]) -> dict[str, float]:
    """The weight of each kind present: the plan's (user's or suite's), else the defaults."""
    given = getattr(plan, "weights", None) or {}
    if not given:
        return default_weights(kinds)
    return {k: 0.0 if k in NEVER_WEIGHED else float(given.get(k, 0.0)) for k in kinds}


def present_kinds(index: Index, columns: Mapping[str, Sequence[str]]) -> list[str]:
    """The kinds of work the session's tasks belong to, CPU cost included when timed."""
    kinds = {index.kind(t) for t in index.session.tasks() if t in columns}
    if any(index.plan.info(t).timed for t in index.session.tasks() if t in columns):
        kinds.add(CPU_KIND)
    return [k for k in KINDS if k in kinds]


def kind_threshold(index: Index, verdict: KindVerdict) -> float:
    """The practical threshold of a kind as a fraction: the relative one, or the absolute
    floors (10 ms of time ...) at the kind's scale, whichever is larger."""
    rel, floors = 0.0, 0.0
    weights = dict(verdict.weights) or {t: 1 / max(1, len(verdict.tasks)) for t in verdict.tasks}
    for task in verdict.tasks:
        info = index.plan.info(task)
        name = CPU_METRIC if verdict.kind == CPU_KIND else (info.columns[:1] or ["wall_s"])[0]
        metric = METRICS.get(name)
        if metric is None:
            continue
        rel = max(rel, metric.practical_rel)
        values = [v for fs in verdict.ranking.order for v in index.samples(fs, task, name).values()]
        if metric.practical_abs and values and (mean := statistics.fmean(values)) > 0:
            floors += weights.get(task, 0.0) * metric.practical_abs / abs(mean)
    if verdict.kind == CPU_KIND:
        rel = METRICS[CPU_METRIC].practical_rel
    # A replayed trace cannot tell filesystems apart closer than its own replay error
    # (analysis.replay): no difference under that floor is called a win.
    replayed = [f for t in verdict.tasks if (f := resolution_floor(index.session, t)) is not None]
    return max(rel, floors, PRACTICAL if rel else 0.0, *replayed)


# ---------------------------------------------------------------- words


def _x(value: float) -> str:
    if value >= 100:
        return "over 100×"  # an interval this wide says only that: no figure is worth printing
    return f"{value:.2f}×"


def _size(fraction: float) -> str:
    if not math.isfinite(fraction) or fraction >= 99:
        return "100× or more"
    return f"{number(100 * fraction, 2)} %" if fraction < 1 else _x(1 + fraction)


def _interval(low: float, high: float) -> str:
    top = f"{high:.2f}×" if high < 100 else "over 100×"
    return f"{low:.2f}–{top}" if low >= 0.01 else f"under 0.01–{top}"


def _slower(word: str) -> str:
    """'faster than' -> 'slower'; other words read 'worse'."""
    return "slower" if word == "faster than" else "worse"


def _avoid(excluded: Sequence[Exclusion], word: str, reference: str = "", rounds: int = 0) -> str:
    """'not ext3 (1.38× slower), not btrfs (1.21× slower than ext4, out after 4 rounds)':
    'than' named unless it is the one best (REFERENCE); 'out after' where it was not
    measured in later rounds (of ROUNDS)."""
    parts = []
    for e in excluded:
        than = "" if e.than == reference and reference else f" than {e.than}"
        after = f", out after {e.rounds} rounds" if e.eliminated and e.rounds < rounds else ""
        parts.append(f"not {e.filesystem} ({_x(e.ratio)} {_slower(word)}{than}{after})")
    return ", ".join(parts)


def _others(family: Family, margin_pair: Pair | None) -> tuple[Exclusion, ...]:
    """The exclusions a line lists after its margin: the next best, already in the margin
    when its claim is the one best's own, is not said twice."""
    if margin_pair is None or not margin_pair.significant:
        return family.excluded
    said = (margin_pair.worse, margin_pair.better)
    return tuple(e for e in family.excluded if (e.filesystem, e.than) != said)


def _best_words(family: Family) -> str:
    """The best in words: one name, or 'A, B or C'."""
    best = list(family.best)
    return best[0] if len(best) == 1 else ", ".join(best[:-1]) + " or " + best[-1]


def _group_words(family: Family, threshold: float) -> str:
    """Why the best are a group: '(within 4 % of each other, n = 10)' or not told apart."""
    if family.status == EQUAL:
        return f"within {_size(family.spread)} of each other"
    return f"not told apart yet: up to {_size(family.spread)} either way"


def _margin(family: Family, word: str) -> tuple[str, Pair | None]:
    """The one best against the next best: '1.19× faster than ext4, the next best'."""
    ranking = family.ranking
    best = family.best[0]
    others = [fs for fs in ranking.order if fs != best]
    pair = ranking.pair(best, others[0]) if others else None
    if pair is None or pair.better != best or math.isnan(pair.ratio):
        return "", pair
    shown = "" if pair.significant else ", not shown at this level"
    return (
        f"{_x(pair.ratio)} {word} {pair.worse}, the next best "
        f"({_interval(pair.low, pair.high)}, n = {family.rounds}{shown})",
        pair,
    )


def _confidence(pair: Pair | None, threshold: float, n: int) -> str:
    if pair is None:
        return ""
    return "high" if pair.low >= 1 + threshold and n >= 4 else "moderate"


# ---------------------------------------------------------------- per kind


def _against(index: Index, verdict: KindVerdict, decision: Decision, best: str) -> str:
    """The kind's tasks on which another filesystem is shown ahead of its best, on the
    task's own headline metric, at the decision's boundary: 'ext4 faster on iso_delete
    (time)'. Nothing from another metric (bytes read, CPU %)."""
    from fsarena.analysis.blocks import paired
    from fsarena.analysis.selection import judge

    found: dict[str, list[str]] = {}
    order = list(verdict.ranking.order)
    for task in verdict.tasks:
        metric = (index.plan.info(task).columns[:1] or ["wall_s"])[0]
        m = METRICS.get(metric)
        if m is None or best not in order:
            continue
        y = _task_logs(index, task, metric, order, m.better == "higher")
        judged = judge(paired(y), decision.boundary, decision.threshold)
        b = order.index(best)
        for g, fs in enumerate(order):
            if fs != best and judged.slower[b, g]:
                found.setdefault(fs, []).append(f"{task} ({m.label})")
    return "; ".join(f"{fs} ahead on {names(tasks)}" for fs, tasks in found.items())


def _task_logs(index: Index, task: str, metric: str, order: Sequence[str], higher: bool):  # type: ignore[no-untyped-def]
    """One task's oriented log values [filesystems, rounds] (NaN where missing)."""
    import numpy as np

    per = {fs: index.samples(fs, task, metric) for fs in order}
    rounds = sorted({r for s in per.values() for r in s})
    y = np.full((len(order), len(rounds)), np.nan)
    for f, fs in enumerate(order):
        for i, r in enumerate(rounds):
            v = per[fs].get(r)
            if v is not None and v > 0:
                y[f, i] = -math.log(v) if higher else math.log(v)
    return y


def _disqualified(index: Index, verdict: KindVerdict) -> tuple[str, ...]:
    tasks = [t for t in index.session.tasks() if index.kind(t) == verdict.kind]
    out = []
    for fs in index.session.filesystems():
        for task in tasks:
            for code in sorted(set(index.faults(fs, task))):
                if code in DISQUALIFYING:
                    out.append(f"{fs}: {task} {DISQUALIFYING[code]}")
    return tuple(out)


def kind_answer(
    index: Index, verdict: KindVerdict, family: Family, decision: Decision, weight: float
) -> KindAnswer:
    """One weighed kind in one sentence, from its family's decision."""
    title, word, n = verdict.title, verdict.word, family.rounds
    excluded = tuple(f"{t} ({why})" for t, why in verdict.excluded)
    unfit = _disqualified(index, verdict)
    tail = f"; left out: {'; '.join(excluded)}" if excluded else ""
    if unfit:
        tail += f"; not recommendable here: {'; '.join(unfit)}"
    if family.set_aside:
        count = len(family.set_aside)
        tail += f"; set aside as stall{'s' if count > 1 else ''}: {', '.join(family.set_aside)}"
    common = {"weight": weight, "n": n, "excluded": excluded, "not_recommendable": unfit}
    if family.status == UNTESTED:
        text = "no verdict: one repetition each (run -n 3 or more)"
        return KindAnswer(verdict.kind, title, UNTESTED, text + tail, **common)  # type: ignore[arg-type]
    margin, pair = _margin(family, word) if len(family.best) == 1 else ("", None)
    shown = _others(family, pair) if family.status == WIN else family.excluded
    avoid = _avoid(shown, word, family.best[0] if len(family.best) == 1 else "", n)
    everyone = len(family.best) == len(family.ranking.order)
    if family.status == EQUAL and everyone:
        text = (
            f"no difference that matters between {names(sorted(family.best))}: every "
            f"difference is within {_size(family.spread)} (threshold "
            f"{_size(family.threshold)}; n = {n})"
        )
        return KindAnswer(verdict.kind, title, EQUAL, text + tail, **common)  # type: ignore[arg-type]
    if family.status == OPEN and everyone:
        text = (
            f"not resolved between {names(sorted(family.best))}: differences up to "
            f"{_size(family.spread)} either way remain possible (n = {n})"
        )
        return KindAnswer(verdict.kind, title, OPEN, text + tail, **common)  # type: ignore[arg-type]
    if family.status == WIN:
        confidence = _confidence(pair, decision.threshold, n)
        text = f"{family.best[0]}, {margin}" if margin else family.best[0]
        text += f"; {avoid}" if avoid else ""
        text += f"; confidence {confidence}"
        if against := _against(index, verdict, decision, family.best[0]):
            text += f"; against it: {against}"
        has = pair is not None and not math.isnan(pair.ratio)
        return KindAnswer(
            verdict.kind,
            title,
            WIN,
            text + tail,
            weight,
            family.best,
            pair.worse if pair else "",
            confidence,
            margin.split(" (")[0] if margin else "",
            pair.ratio if has and pair else None,
            pair.low if has and pair else None,
            pair.high if has and pair else None,
            n,
            excluded,
            unfit,
        )
    text = f"{_best_words(family)} ({_group_words(family, decision.threshold)}, n = {n})"
    text += f"; {avoid}" if avoid else ""
    return KindAnswer(verdict.kind, title, family.status, text + tail, winners=family.best,
                      **common)  # type: ignore[arg-type]  # fmt: skip


# ---------------------------------------------------------------- facts


def _per_round(index: Index, fs: str, tasks: Sequence[str], metric: str) -> float | None:
    """The median over repetitions of a metric summed over tasks (every task present)."""
    per = [index.samples(fs, t, metric) for t in tasks]
    if not per or not all(per):
        return None
    reps = set.intersection(*(set(s) for s in per))
    sums = [sum(s[r] for s in per) for r in reps]
    return statistics.median(sums) if sums else None


def _listing(values: Mapping[str, float | None], fmt: str) -> str:
    return ", ".join(f"{fs} {fmt.format(v)}" for fs, v in values.items() if v is not None)


def facts(index: Index, verdicts: Sequence[KindVerdict]) -> list[KindAnswer]:
    """The fact kinds, each on its own line, with what the figure is and is not."""
    out = []
    filesystems = index.session.filesystems()
    for v in verdicts:
        if v.kind == "space":
            order = v.ranking.order
            sizes = sorted({index.session.profile(fs).image_size_bytes >> 20 for fs in order})
            size = "/".join(str(s) for s in sizes if s) or "?"
            parts = []
            for task in v.tasks:
                metric = (index.plan.info(task).columns[:1] or ["capacity_pct"])[0]
                # Each figure in its own metric's unit: capacity in %, article D's
                # df/du figures in MiB (not "%": they are bytes).
                m = METRICS.get(metric)
                scale, unit = (m.scale, m.unit) if m else (1.0, "")
                values = {
                    fs: statistics.median(found.values()) * scale
                    for fs in order
                    if (found := index.samples(fs, task, metric))
                }
                parts.append(f"{task} " + _listing(values, "{:.1f} " + unit))
            text = (
                f"on a {size} MiB image: {'; '.join(parts)} (fixed metadata weighs "
                "differently on other disk sizes)"
            )
        elif v.kind == "lifecycle":
            totals = {fs: _per_round(index, fs, v.tasks, "wall_s") for fs in v.ranking.order}
            text = f"{' + '.join(v.tasks)} per repetition: " + _listing(
                {fs: t for fs, t in totals.items()}, "{:.2f} s"
            )
        elif v.kind == CPU_KIND:
            totals = {fs: _per_round(index, fs, v.tasks, CPU_METRIC) for fs in v.ranking.order}
            # Servers were counted (their cgroup) from issue 26 on; older sessions say not.
            servers = (
                ""
                if servers_counted(index, v.tasks)
                else " and servers started outside the timed commands (PostgreSQL)"
            )
            text = (
                f"CPU time (user + sys) of {cpu_whose(index, v.tasks)} per repetition: "
                + _listing(totals, "{:.2f} s")
                + f"; kernel threads (writeback, loop, btrfs workers){servers} are not in it"
            )
        else:
            best = v.ranking.order[0]
            text = (
                f"not weighed: {best} ahead by the estimate ("
                + ", ".join(
                    f"{_x(p.ratio)} {v.word} {p.worse}" for p in v.ranking.pairs if p.better == best
                )
                + "); no verdict drawn"
            )
        out.append(KindAnswer(v.kind, v.title, FACT, text))
    timed = [t for t in index.session.tasks() if index.plan.info(t).timed]
    written = {fs: _per_round(index, fs, timed, "device_write_bytes") for fs in filesystems}
    if sum(1 for w in written.values() if w is not None) >= 2:
        text = "bytes written to the device per repetition: " + _listing(
            {fs: (w / 1e6 if w is not None else None) for fs, w in written.items()}, "{:,.0f} MB"
        )
        out.append(KindAnswer("device_bytes", "device writes", FACT, text))
    return out


# ---------------------------------------------------------------- the recommendation


def _weights_text(weights: Mapping[str, float]) -> str:
    return ", ".join(f"{KINDS.get(k, k)} {number(w)}" for k, w in weights.items() if w > 0)


@dataclass(frozen=True)
class Recommendation:
    """What the workload's decision says to do, before it is worded."""

    status: str  # WIN | EQUAL | OPEN | UNTESTED, or "" for no weighed kind with results
    best: tuple[str, ...]  # what to use (the best, less any not recommendable)
    avoid: tuple[Exclusion, ...]
    behind: tuple[tuple[str, str], ...]  # (kind title, a recommended filesystem) shown behind
    blocked: tuple[str, ...]  # "btrfs lost on safety", "btrfs: iso_copy_in timed out"
    pair: Pair | None  # the one best against the next best
    spread: float
    n: int
    word: str
    scope: str  # "for this workload (weights: ...)"
    every: bool  # the best are every filesystem compared


def recommend(
    decision: Decision,
    verdicts: Sequence[KindVerdict],
    answers: Sequence[KindAnswer],
    weights: Mapping[str, float],
) -> Recommendation:
    """The record: what to use, what to avoid, on what grounds."""
    used = {k: w for k, w in weights.items() if w > 0}
    missing = [KINDS.get(k, k) for k in used if k not in {v.kind for v in verdicts}]
    scope = f"for this workload (weights: {_weights_text(used)}"
    scope += f"; {names(missing)} not measured)" if missing else ")"
    family = decision.workload
    one = [v for v in verdicts if v.kind in decision.kinds]
    word = one[0].word if len(one) == 1 else "better than"
    unfit = [a for ans in answers if ans.weight > 0 for a in ans.not_recommendable]
    safety = [v for v in verdicts if v.kind == SAFETY_KIND and not v.ranking.all_tied]
    unsafe = sorted({fs for v in safety for fs in v.ranking.order if fs not in v.ranking.winners})
    blocked = tuple([f"{fs} lost on safety" for fs in unsafe] + unfit)
    out = {fs for fs in unsafe} | {a.split(":")[0] for a in unfit}
    best = tuple(fs for fs in family.best if fs not in out)
    behind = tuple(
        (a.title, fs)
        for a in answers
        if a.status in (WIN, EQUAL) and a.winners
        for fs in best
        if fs not in a.winners and len(decision.kinds) > 1
    )
    pair = _margin(family, word)[1] if len(family.best) == 1 else None
    every = len(family.best) == len(family.ranking.order)
    return Recommendation(
        family.status, best, family.excluded, behind, blocked, pair, family.spread,
        family.rounds, word, scope, every,
    )  # fmt: skip


def recommendation_line(rec: Recommendation, family: Family, threshold: float) -> str:
    """The first line a sysadmin reads: what to use, then what not to and by how much, then
    the workload it holds for."""
    tail = f"; not recommendable: {'; '.join(rec.blocked)}" if rec.blocked else ""
    shown = _others(family, rec.pair) if rec.status == WIN else rec.avoid
    avoid = _avoid(shown, rec.word, rec.best[0] if len(rec.best) == 1 else "", rec.n)
    behind = "; ".join(f"{fs} behind on {kind}" for kind, fs in rec.behind)
    extra = "".join(f"; {x}" for x in (avoid, behind) if x)
    n, scope = rec.n, f" — {rec.scope}"
    if rec.status == UNTESTED:
        return f"none {rec.scope}: too few rounds to tell (n = {n}){tail}."
    if not rec.best:
        return f"none {rec.scope}: the best are not recommendable{extra}{tail}."
    if rec.status == EQUAL and rec.every:
        return (
            f"any of them on speed {rec.scope}: every filesystem is within "
            f"{_size(rec.spread)} of the others (n = {n}); choose on safety, features "
            f"(quotas, ACLs, resizing, snapshots) and what you can repair{tail}."
        )
    if rec.status == OPEN and rec.every:
        return (
            f"none yet {rec.scope}: differences up to {_size(rec.spread)} either way remain "
            f"possible (n = {n}){tail}."
        )
    if rec.status == WIN and len(rec.best) == 1:
        margin, _ = _margin(family, rec.word)
        lead = f"{rec.best[0]}: {margin}" if margin else rec.best[0]
        return f"{lead}{extra}{tail}{scope}."
    group = Family(family.key, family.status, family.ranking, rec.best, (), rec.spread, n)
    return f"{_best_words(group)} ({_group_words(group, threshold)}, n = {n}){extra}{tail}{scope}."


# ---------------------------------------------------------------- what would decide it


def rounds_to_decide(family: Family, decision: Decision) -> int | None:
    """Rounds that would tell the widest pair of the best apart, or show it within the
    threshold, if its difference and spread stay as measured: the fewest N whose claim, at
    a fixed run's boundary of N rounds (t with N - 1 degrees of freedom), either passes or
    shows the pair within the threshold (None: nothing to decide)."""
    from scipy import stats as sps

    bound = math.log1p(decision.threshold)
    level = float(decision.boundary.alpha(decision.boundary.last))  # a last look's level
    worst: int | None = None
    for a in family.best:
        for b in family.best:
            stats = family.paired.get((a, b)) if a < b else None
            if stats is None or not (math.isfinite(stats[1]) and stats[1] > 0 and stats[2] >= 2):
                continue
            diff, se, n = abs(stats[0]), stats[1], stats[2]
            sd = se * math.sqrt(n)
            need = MAX_SUGGESTED_ROUNDS
            for rounds in range(n + 1, MAX_SUGGESTED_ROUNDS):
                margin = float(sps.t.isf(level, rounds - 1)) * sd / math.sqrt(rounds)
                if margin < diff or diff + margin < bound:
                    need = rounds
                    break
            worst = max(worst or 0, need)
    return worst


def settle_words(
    index: Index,
    family: Family,
    decision: Decision,
    shares: Mapping[str, float],
    per_round_s: float | None,
) -> str:
    """What would decide the open workload at this run's spread, and which task's noise
    is the cause (shares: each task's weight in the workload)."""
    need = rounds_to_decide(family, decision)
    if need is None:
        return ""
    cause = noisiest(index, family, shares)
    because = f" The widest spread comes from {cause}." if cause else ""
    if need >= MAX_SUGGESTED_ROUNDS:
        return (
            f"More rounds are not the fix: telling {names(list(family.best))} apart would take "
            f"{MAX_SUGGESTED_ROUNDS} or more at this spread.{because}"
        )
    if not decision.design.sequential:  # a fixed run: more of the same, fixed
        how, pace = f"`fsarena run -n {need}`", ""
    elif per_round_s:
        budget = math.ceil(need * per_round_s / 60) * 60
        how = f"`fsarena run --time-budget {budget} --max-repetitions {need}`"
        pace = f" (about {budget // 60} min at this run's pace)"
    else:
        how, pace = f"`fsarena run --max-repetitions {need}`", ""
    return (
        f"About {need} rounds in all would tell {names(list(family.best))} apart at this "
        f"spread: {how}{pace}.{because}"
    )


def task_shares(verdicts: Sequence[KindVerdict], weights: Mapping[str, float]) -> dict[str, float]:
    """Each weighed task's weight in the workload: its kind's share times its own in it."""
    total = sum(weights.get(v.kind, 0.0) for v in verdicts) or 1.0
    return {
        task: weights.get(v.kind, 0.0) / total * share
        for v in verdicts
        for task, share in v.weights
    }


def noisiest(index: Index, family: Family, shares: Mapping[str, float]) -> str:
    """The task whose round-to-round spread weighs most in the widest undecided pair, and
    whether its values fall in two clusters (a bimodal disk): 'iso_copy_within, bimodal on
    ext2: 0.34-0.40 s in 3 rounds, 0.95-1.10 s in 7'."""
    pairs = [(a, b) for a in family.best for b in family.best if a < b]
    if not pairs:
        return ""
    a, b = max(pairs, key=lambda p: family.paired.get(p, (0.0, 0.0, 0))[1])
    found: list[tuple[float, str]] = []
    for task, share in shares.items():
        metric = (index.plan.info(task).columns[:1] or ["wall_s"])[0]
        sa, sb = index.samples(a, task, metric), index.samples(b, task, metric)
        diffs = [math.log(sa[r] / sb[r]) for r in sa if r in sb and sa[r] > 0 and sb[r] > 0]
        if len(diffs) >= 3:
            found.append((share * statistics.pstdev(diffs), task))
    if not found:
        return ""
    task = max(found)[1]
    for fs in (a, b):
        metric = (index.plan.info(task).columns[:1] or ["wall_s"])[0]
        if split := bimodal(list(index.samples(fs, task, metric).values())):
            unit = METRICS[metric].unit if metric in METRICS else ""
            (lo1, hi1, n1), (lo2, hi2, n2) = split
            return (
                f"{task}, whose values on {fs} fall in two clusters on this machine: "
                f"{number(lo1)}–{number(hi1)} {unit} in {n1} rounds, "
                f"{number(lo2)}–{number(hi2)} {unit} in {n2}"
            )
    return f"{task} (its spread between {a} and {b})"


def bimodal(values: Sequence[float]) -> tuple[tuple[float, float, int], ...] | None:
    """Two clusters, each of two or more values, whose gap (in logs) is over three times
    the wider cluster's own range; None otherwise."""
    xs = sorted(v for v in values if v > 0)
    if len(xs) < 4:
        return None
    logs = [math.log(v) for v in xs]
    gaps = [(logs[i + 1] - logs[i], i) for i in range(1, len(logs) - 2)]
    if not gaps:
        return None
    gap, i = max(gaps)
    low, high = logs[: i + 1], logs[i + 1 :]
    inner = max(low[-1] - low[0], high[-1] - high[0], 1e-9)
    if gap < 3 * inner or gap < math.log(1.3):
        return None
    return (xs[0], xs[i], i + 1), (xs[i + 1], xs[-1], len(xs) - i - 1)


# ---------------------------------------------------------------- method and the whole answer


def method_text(decision: Decision) -> str:
    """How the claims were made, read from the decision itself."""
    d, b = decision.design, decision.boundary
    looks = (
        f"at every look this run could take ({d.first} to {d.last} rounds, eliminating a "
        "filesystem once shown behind and stopping once the best is known), with an "
        "O'Brien-Fleming-shaped boundary"
        if d.sequential
        else f"at its one look ({d.last} rounds)"
    )
    last = float(b.alpha(d.last))
    return (
        "Each filesystem is compared with the best through its within-round differences "
        "(a paired t on log values; a value more than 4 robust standard deviations off the "
        f"fit of its family is set aside as a stall), {looks}, at one level calibrated by "
        f"simulating this very procedure ({d.filesystems} filesystems, {d.kinds} weighed "
        f"kind{'s' if d.kinds != 1 else ''}) so that the chance of naming any false winner, in "
        f"the recommendation or in any weighed kind, stays at {100 * ALPHA:.0f} %: a claim "
        f"on {d.last} rounds needs a one-sided p below {number(100 * last, 3)} %; "
        "intervals have the matching confidence."
    )


def build_answer(
    index: Index,
    verdicts: Sequence[KindVerdict],
    decision: Decision | None,
    kinds_present: Sequence[str],
    caveats: Sequence[str],
    per_round_s: float | None = None,
) -> Answer:
    """The whole answer from one session's verdicts and decision (analysis.verdicts)."""
    plan = index.plan
    weights = weights_of(plan, kinds_present)
    used = {k: w for k, w in weights.items() if w > 0}
    others = [v for v in verdicts if weights.get(v.kind, 0) <= 0]
    if not used:
        line = "none: no kind of work is weighed (--weigh KIND=W)."
        return Answer(line, tuple(facts(index, others)), "", tuple(caveats))
    if decision is None:
        missing = [KINDS.get(k, k) for k in used]
        line = (
            f"none: no weighed kind of work ({names(missing)}) has results on two or more "
            "filesystems."
        )
        return Answer(line, tuple(facts(index, others)), "", tuple(caveats), weights=used)
    weighed = [v for v in verdicts if v.kind in decision.kinds]
    answers = [
        kind_answer(index, v, decision.kinds[v.kind], decision, weights[v.kind]) for v in weighed
    ]
    rec = recommend(decision, verdicts, answers, weights)
    family = decision.workload
    line = recommendation_line(rec, family, decision.threshold)
    shares = task_shares(weighed, used)
    ties = settle_words(index, family, decision, shares, per_round_s) if rec.status == OPEN else ""
    judged = {v.kind: Judged(decision.kinds[v.kind].ranking, kind_threshold(index, v), v.word)
              for v in weighed}  # fmt: skip
    if len(weighed) > 1:
        judged[OVERALL] = Judged(family.ranking, decision.threshold, rec.word)
    method = method_text(decision)
    pair = rec.pair
    named = rec.status != UNTESTED and not (rec.every and rec.status == OPEN)
    design = decision.design
    return Answer(
        recommendation=line,
        kinds=tuple(answers) + tuple(facts(index, others)),
        ties=ties,
        caveats=(*caveats, method),
        recommended=rec.best if named else (),
        weights=used,
        status=rec.status,
        ratio=pair.ratio if pair else None,
        low=pair.low if pair else None,
        high=pair.high if pair else None,
        looks=(design.last - design.first + 1) if design.sequential else 1,
        alpha_per_family=float(decision.boundary.alpha(design.last)),
        method=method,
        judged=judged,
        avoid=rec.avoid,
    )
