"""The answer: per kind of work who wins, by how much, how sure, and what to choose. Pure.

One implementation, read by every report format, the JSON summary and `compare`:
- The user's workload decides. Each kind of work weighs what the plan says
  (--weigh KIND=W, --workload NAME, or the suite's [weights]); without weights
  every workload kind measured weighs 1, and the facts weigh 0.
- Facts are not votes: capacity (on the image size it was measured on), the
  mkfs/mount/umount lifecycle, the CPU of the tasks' own processes and the
  device bytes written are shown on their own lines and weigh nothing unless
  the user weighs them. Page-cache demonstrations never vote.
- The error rate holds for the whole procedure. Every claim that a filesystem is
  better in a weighed kind, or overall, is a Yuen-Welch test on log values at
  alpha / (looks x families), Bonferroni over the pairs within the family, and
  its interval has the matching confidence: under no real difference the chance
  of naming any winner, at any look of the decisive loop and in any weighed kind
  or overall, is at most ALPHA = 5 %: Bonferroni over the families, and within a
  family Pocock's constant group-sequential boundary over every round the plan
  may stop at (Pocock 1977; Jennison & Turnbull, "Group Sequential Methods",
  2000, ch. 2), applied to the t statistics as nominal levels.
- Words come from intervals. "No difference that matters" only when every pair's
  interval lies within the practical threshold (the metrics' relative threshold,
  and their absolute floor at the kind's time scale); otherwise "not resolved:
  from X faster to Y slower". Confidence "high" needs the whole interval beyond
  the threshold and n >= 4; n is stated.
- Nothing dropped in silence: tasks left out of a kind are named with the reason;
  a filesystem whose run failed verification, timed out or ran out of space in
  a weighed kind is not recommendable for that kind, and the answer says so.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fsarena.analysis.evidence import Index, TaskResult
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
from fsarena.analysis.ranking import ALPHA, Pair, Ranking, rank
from fsarena.kinds import KINDS
from fsarena.measure.metrics import METRICS
from fsarena.session.records import PlanRecord

WIN, EQUAL, OPEN, UNTESTED, FACT = "win", "equal", "open", "untested", "fact"
# Kinds that are facts about the filesystems, not the user's workload: weight 0 by default.
FACT_KINDS = ("lifecycle", "space", CPU_KIND)
NEVER_WEIGHED = (DEMONSTRATION_KIND,)
# A decisive run's budget may stop it at this many rounds: the fewest with an interval.
MIN_ROUNDS = 2
MAX_ROUNDS = 10  # a decisive run's ceiling when the plan gives none
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


@dataclass(frozen=True)
class KindAnswer:
    """One kind of work, in one sentence."""

    kind: str
    title: str
    status: str  # WIN | EQUAL | OPEN | UNTESTED | FACT
    text: str  # the sentence after the title
    weight: float = 0.0
    winners: tuple[str, ...] = ()
    runner_up: str = ""
    confidence: str = ""  # "high" | "moderate" ("" unless a win)
    margin: str = ""  # the best against the runner-up: 'xfs 1.91× faster than ext4'
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    excluded: tuple[str, ...] = ()  # "iso_delete (no valid run on btrfs (failed: timeout))"
    not_recommendable: tuple[str, ...] = ()  # "btrfs: iso_copy_in timed out"


OVERALL = "overall"  # Answer.judged's key for the weighted comparison of several kinds


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
    alpha_per_family: float = ALPHA
    method: str = ""
    # fsarena tune: the best configuration per weighed kind and for the workload against
    # the filesystem's defaults, then what the race dropped (analysis.tuned).
    tune: tuple[str, ...] = ()
    stopped: str = ""  # why the run took no more rounds (Session.stop), "" when unrecorded
    # Each weighed kind's Judged, and OVERALL's (the recommendation's) when several are weighed.
    judged: Mapping[str, Judged] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.kinds and not self.ties


# ---------------------------------------------------------------- weights and error shares


def default_weights(kinds: Sequence[str]) -> dict[str, float]:
    """Every workload kind weighs 1; facts and demonstrations 0."""
    return {k: 0.0 if k in FACT_KINDS or k in NEVER_WEIGHED else 1.0 for k in kinds}


def weights_of(plan: PlanRecord, kinds: Sequence[str]) -> dict[str, float]:
    """The weight of each kind present: the plan's (user's or suite's), else the defaults."""
    given = getattr(plan, "weights", None) or {}
    if not given:
        return default_weights(kinds)
    return {k: 0.0 if k in NEVER_WEIGHED else float(given.get(k, 0.0)) for k in kinds}


def look_rounds(plan: PlanRecord) -> tuple[int, ...]:
    """The round counts the verdicts may be read at: every round a decisive run may stop at."""
    if not plan.decisive:
        return (plan.repetitions or 1,)
    start = min(plan.repetitions or MIN_ROUNDS, MIN_ROUNDS)
    ceiling = plan.max_repetitions or max(plan.repetitions or 0, MAX_ROUNDS)
    return tuple(range(start, max(start, ceiling) + 1))


@functools.cache
def pocock_level(rounds: tuple[int, ...], alpha: float) -> float:
    """The nominal two-sided level of each look that keeps the chance of any false claim
    over all LOOKS at ALPHA: Pocock's constant boundary (Pocock 1977) for looks at these
    round counts (information proportional to n), found as the (1 - alpha) quantile of
    max |Z_k| over 100,000 simulated paths (fixed seed: the same level every time).
    One look: alpha itself."""
    if len(rounds) <= 1:
        return alpha
    import numpy as np
    from scipy import stats as sps

    rng = np.random.default_rng(25)
    steps = np.diff(np.array((0, *rounds), dtype=float))
    sums = np.cumsum(rng.standard_normal((100_000, len(rounds))) * np.sqrt(steps), axis=1)
    largest = np.max(np.abs(sums / np.sqrt(np.array(rounds, dtype=float))), axis=1)
    bound = float(np.quantile(largest, 1 - alpha))
    return float(2 * sps.norm.sf(bound))


def present_kinds(index: Index, columns: Mapping[str, Sequence[str]]) -> list[str]:
    """The kinds of work the session's tasks belong to, CPU cost included when timed."""
    kinds = {index.kind(t) for t in index.session.tasks() if t in columns}
    if any(index.plan.info(t).timed for t in index.session.tasks() if t in columns):
        kinds.add(CPU_KIND)
    return [k for k in KINDS if k in kinds]


def error_shares(plan: PlanRecord, kinds: Sequence[str]) -> tuple[dict[str, float], float, int]:
    """Each weighed kind's share of ALPHA, the overall comparison's, and the looks.

    Families: every weighed kind, and the overall (weighted) comparison when more
    than one kind is weighed; each gets ALPHA / families (Bonferroni), spent over the
    looks with Pocock's constant boundary (pocock_level): the level returned is what
    each look tests at.
    """
    weights = weights_of(plan, kinds)
    weighed = [k for k in kinds if weights.get(k, 0) > 0]
    families = len(weighed) + (1 if len(weighed) > 1 else 0)
    rounds = look_rounds(plan)
    share = pocock_level(rounds, ALPHA / max(1, families))
    return {k: share for k in weighed}, share, len(rounds)


# ---------------------------------------------------------------- judging a ranking


def _bounds(pair: Pair) -> bool:
    """Whether the pair has an interval (its ends may be 0 or infinite: beyond any ratio)."""
    return not (math.isnan(pair.low) or math.isnan(pair.high))


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
    return max(rel, floors, PRACTICAL if rel else 0.0)


def judge(ranking: Ranking, threshold: float) -> tuple[str, Pair | None, float]:
    """(status, the pair that decides, the widest difference left possible among the tied)."""
    n = min(ranking.n.values(), default=0)
    if len(ranking.order) < 2 or n < 2:
        return UNTESTED, None, math.nan
    if not ranking.all_tied:
        best = ranking.order[0]
        runner = next(fs for fs in ranking.order if fs not in ranking.winners)
        pair = ranking.pair(best, runner)
        if pair is not None and _bounds(pair) and pair.high <= 1 + threshold:
            return EQUAL, pair, pair.high - 1  # significant, but wholly under the threshold
        return WIN, pair, ranking.detectable_difference
    if not all(_bounds(p) for p in ranking.pairs):
        return UNTESTED, None, math.nan
    widest = max(p.detectable for p in ranking.pairs)
    pair = max(ranking.pairs, key=lambda p: p.detectable)
    return (EQUAL if widest <= threshold else OPEN), pair, widest


def _x(value: float) -> str:
    if value >= 100:
        return "over 100×"  # an interval this wide says only that: no figure is worth printing
    return f"{value:.2f}×"


def _size(fraction: float) -> str:
    if fraction >= 99:
        return "100× or more"
    return f"{number(100 * fraction, 2)} %" if fraction < 1 else _x(1 + fraction)


def _interval(pair: Pair) -> str:
    high = f"{pair.high:.2f}×" if pair.high < 100 else "over 100×"
    return f"{pair.low:.2f}–{high}" if pair.low >= 0.01 else f"under 0.01–{high}"


def unresolved(pair: Pair, word: str, n: int) -> str:
    """'not resolved: from xfs 1.30× faster than ext4 to ext4 1.12× faster than xfs (n = 3)'."""
    if pair.low >= 1:
        return f"{pair.better} {_x(pair.low)} to {_x(pair.high)} {word} {pair.worse} (n = {n})"
    other = _x(1 / pair.low) if pair.low > 0 else "over 100×"
    return (
        f"not resolved: from {pair.better} {_x(pair.high)} {word} {pair.worse} to "
        f"{pair.worse} {other} {word} {pair.better} (n = {n})"
    )


def _confidence(pair: Pair, threshold: float, n: int) -> str:
    return "high" if pair.low >= 1 + threshold and n >= 4 else "moderate"


# ---------------------------------------------------------------- per kind


def _against(verdict: KindVerdict, results: Mapping[tuple[str, str], TaskResult]) -> str:
    """Tasks whose own result goes against the kind's winner: 'ext4 faster on iso_delete'."""
    best = verdict.ranking.order[0]
    found: dict[str, list[str]] = {}
    for (task, _), result in results.items():
        r = result.ranking
        if task in verdict.tasks and not r.all_tied and best not in r.winners:
            found.setdefault(r.order[0], []).append(task)
    return "; ".join(f"{fs} ahead on {names(tasks)}" for fs, tasks in found.items())


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
    index: Index,
    verdict: KindVerdict,
    results: Mapping[tuple[str, str], TaskResult],
    weight: float,
) -> KindAnswer:
    ranking, title = verdict.ranking, verdict.title
    threshold = kind_threshold(index, verdict)
    status, pair, widest = judge(ranking, threshold)
    n = min(ranking.n.values(), default=0)
    excluded = tuple(f"{t} ({why})" for t, why in verdict.excluded)
    unfit = _disqualified(index, verdict)
    tail = ""
    if excluded:
        tail += f"; left out: {'; '.join(excluded)}"
    if unfit:
        tail += f"; not recommendable here: {'; '.join(unfit)}"
    common = {"weight": weight, "n": n, "excluded": excluded, "not_recommendable": unfit}
    if status == UNTESTED or pair is None:
        text = (
            "no verdict: one repetition each (run -n 3 or more)"
            if n < 2
            else "no verdict: no interval could be computed"
        )
        return KindAnswer(verdict.kind, title, UNTESTED, text + tail, **common)  # type: ignore[arg-type]
    figures = {"ratio": pair.ratio, "low": pair.low, "high": pair.high}
    everyone = names(sorted(ranking.order))
    if status == EQUAL:
        text = (
            f"no difference that matters between {everyone}: every difference is within "
            f"{_size(widest)} (threshold {_size(threshold)}; n = {n})"
        )
        return KindAnswer(verdict.kind, title, EQUAL, text + tail, **common, **figures)  # type: ignore[arg-type]
    if status == OPEN:
        if len(ranking.order) == 2:
            text = unresolved(pair, verdict.word, n)
        else:
            text = (
                f"not resolved between {everyone}: differences up to {_size(widest)} either "
                f"way remain possible (n = {n})"
            )
        return KindAnswer(verdict.kind, title, OPEN, text + tail, **common, **figures)  # type: ignore[arg-type]
    winners = tuple(ranking.winners)
    margin = f"{pair.better} {_x(pair.ratio)} {verdict.word} {pair.worse}"
    confidence = _confidence(pair, threshold, n)
    lead = ""
    if len(winners) > 1:
        tied = names(sorted(winners))
        lead = (
            f"{tied} tied for best (within {_size(widest)}); "
            if widest <= threshold
            else f"{tied} ahead, not resolved between them (up to {_size(widest)}); "
        )
    text = f"{lead}{margin} ({_interval(pair)}, n = {n}); confidence {confidence}"
    if against := _against(verdict, results):
        text += f"; against it: {against}"
    return KindAnswer(
        verdict.kind, title, WIN, text + tail, weight, winners, pair.worse, confidence, margin,
        pair.ratio, pair.low, pair.high, n, excluded, unfit,
    )  # fmt: skip


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


def _overall(
    weighed: Sequence[KindVerdict], weights: Mapping[str, float], alpha: float
) -> Ranking | None:
    """The weighted geometric mean of the weighed kinds' values, per repetition, ranked."""
    samples = workload_samples(weighed, weights)
    return rank(samples, higher_is_better=False, alpha=alpha) if len(samples) >= 2 else None


def workload_samples(
    weighed: Sequence[KindVerdict], weights: Mapping[str, float]
) -> dict[str, list[float]]:
    """Per filesystem, the weighted geometric mean of the weighed kinds' values, per
    repetition (the repetitions every weighed kind has): the workload as one number."""
    total = sum(weights[v.kind] for v in weighed)
    filesystems = set.intersection(*(set(v.by_rep) for v in weighed))
    samples = {}
    for fs in sorted(filesystems):
        reps = set.intersection(*(set(v.by_rep[fs]) for v in weighed))
        values = [
            math.exp(sum(weights[v.kind] / total * math.log(v.by_rep[fs][r]) for v in weighed))
            for r in sorted(reps)
        ]
        if values:
            samples[fs] = values
    return samples


def deciding_ranking(
    verdicts: Sequence[KindVerdict], weights: Mapping[str, float], alpha: float
) -> tuple[Ranking | None, str]:
    """The ranking the recommendation is judged on, and its word: the one weighed kind's,
    or the weighted overall one of several (None without a weighed kind with results)."""
    weighed = [v for v in verdicts if weights.get(v.kind, 0) > 0 and v.by_rep]
    if len(weighed) == 1:
        return weighed[0].ranking, weighed[0].word
    if not weighed:
        return None, ""
    return _overall(weighed, {k: w for k, w in weights.items() if w > 0}, alpha), "better than"


def recommend(
    verdicts: Sequence[KindVerdict],
    answers: Sequence[KindAnswer],
    weights: Mapping[str, float],
    alpha: float,
) -> tuple[str, tuple[str, ...], str, Pair | None]:
    """(the line, the recommended, its status, the deciding pair)."""
    used = {k: w for k, w in weights.items() if w > 0}
    if not used:
        return (
            "none: no kind of work is weighed (--weigh KIND=W).",
            (),
            UNTESTED,
            None,
        )
    weighed = [v for v in verdicts if used.get(v.kind, 0) > 0 and v.by_rep]
    label = f"weights: {_weights_text(used)}"
    missing = [KINDS.get(k, k) for k in used if k not in {v.kind for v in verdicts}]
    if not weighed:
        return (
            f"none: no weighed kind of work ({names(missing)}) has results on two "
            "or more filesystems.",
            (), UNTESTED, None,
        )  # fmt: skip
    ranking, word = deciding_ranking(verdicts, weights, alpha)
    if ranking is None:
        return (
            "No recommendation: no filesystem has results in every weighed kind.",
            (),
            UNTESTED,
            None,
        )
    unfit = {a.split(":")[0] for ans in answers if ans.weight > 0 for a in ans.not_recommendable}
    safety = [v for v in verdicts if v.kind == SAFETY_KIND and not v.ranking.all_tied]
    unsafe = {fs for v in safety for fs in v.ranking.order if fs not in v.ranking.winners}
    status, pair, widest = judge(ranking, PRACTICAL)
    n = min(ranking.n.values(), default=0)
    scope = f"for this workload ({label}"
    if missing:
        scope += f"; {names(missing)} not measured"
    scope += ")"
    blocked = sorted(unfit | unsafe)
    tail = ""
    if blocked:
        why = [f"{fs} lost on safety" for fs in sorted(unsafe)] + [
            a for ans in answers if ans.weight > 0 for a in ans.not_recommendable
        ]
        tail = f"; not recommendable: {'; '.join(why)}"
    if status == UNTESTED or pair is None:
        return f"none {scope}: too few repetitions to tell{tail}.", (), status, None
    if status == EQUAL:
        return (
            f"none on speed {scope}: the filesystems are within {_size(widest)} of "
            f"each other (n = {n}); choose on safety, features (quotas, ACLs, resizing, "
            f"snapshots) and what you can repair{tail}.",
            (), EQUAL, pair,
        )  # fmt: skip
    if status == OPEN:
        return (
            f"none yet {scope}: "
            + (
                unresolved(pair, word, n)
                if len(ranking.order) == 2
                else f"differences up to {_size(widest)} either way remain possible (n = {n})"
            )
            + f"{tail}.",
            (), OPEN, pair,
        )  # fmt: skip
    chosen = [fs for fs in ranking.winners if fs not in blocked]
    if not chosen:
        line = f"none {scope}: the best are not recommendable{tail}."
        return line, (), OPEN, pair
    if len(chosen) < len(ranking.winners) or (len(ranking.winners) > 1 and widest > PRACTICAL):
        lead = f"{names(chosen)} (not resolved among {names(list(ranking.winners))})"
    else:
        lead = names(chosen)
    margin = f"{_x(pair.ratio)} {word} {pair.worse} ({_interval(pair)}, n = {n})"
    if lead != pair.better:
        margin = f"{pair.better} {margin}"
    behind = [a.title for a in answers if a.status == WIN and not set(chosen) & set(a.winners)]
    line = f"{lead} {scope}: {margin}"
    if behind:
        line += f"; behind on {names(behind)}"
    return line + tail + ".", tuple(chosen), WIN, pair


def method_text(looks: int, families: int, alpha: float) -> str:
    what = "the weighed kind" if families == 1 else f"{families - 1} weighed kinds and overall"
    spent = (
        f"over the {looks} looks this run's stopping rule allows with Pocock's constant "
        "boundary (Pocock 1977)"
        if looks > 1
        else "at the one look of a fixed run"
    )
    return (
        "Each claim is a Yuen-Welch trimmed t-test on log values (Yuen 1974), Bonferroni-"
        f"adjusted over the pairs and over {families} famil{'y' if families == 1 else 'ies'} "
        f"({what}), the error rate spent {spent}: each family is tested at "
        f"{number(100 * alpha, 3)} % (its pairs share it), so the chance of naming any "
        f"false winner stays at or below {100 * ALPHA:.0f} %; intervals have the matching "
        "confidence."
    )


def build_answer(
    index: Index,
    verdicts: Sequence[KindVerdict],
    results: Mapping[tuple[str, str], TaskResult],
    kinds_present: Sequence[str],
    caveats: Sequence[str],
    settle: str,
) -> Answer:
    """The whole answer from one session's verdicts (analysis.verdicts.analyse calls this)."""
    plan = index.plan
    weights = weights_of(plan, kinds_present)
    shares, overall_alpha, looks = error_shares(plan, kinds_present)
    weighed = [v for v in verdicts if weights.get(v.kind, 0) > 0]
    answers = [kind_answer(index, v, results, weights[v.kind]) for v in weighed]
    others = [v for v in verdicts if weights.get(v.kind, 0) <= 0]
    line, chosen, status, pair = recommend(verdicts, answers, weights, overall_alpha)
    open_ = [a for a in answers if a.status in (OPEN, UNTESTED)]
    families = len(shares) + (1 if len(shares) > 1 else 0)
    judged = {v.kind: Judged(v.ranking, kind_threshold(index, v), v.word) for v in weighed}
    overall, word = deciding_ranking(verdicts, weights, overall_alpha)
    if overall is not None and sum(1 for v in weighed if v.by_rep) > 1:  # not one kind's own
        judged[OVERALL] = Judged(overall, PRACTICAL, word)
    return Answer(
        recommendation=line,
        kinds=tuple(answers) + tuple(facts(index, others)),
        ties=settle if open_ else "",
        caveats=(*caveats, method_text(looks, max(1, families), overall_alpha)),
        recommended=chosen,
        weights={k: w for k, w in weights.items() if w > 0},
        status=status,
        ratio=pair.ratio if pair else None,
        low=pair.low if pair else None,
        high=pair.high if pair else None,
        looks=looks,
        alpha_per_family=overall_alpha,
        method=method_text(looks, max(1, families), overall_alpha),
        judged=judged,
    )
