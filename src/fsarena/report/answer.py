"""The answer that opens every report: per kind of work who wins, by how much, how sure.

Built from the verdicts (verdicts.analyse) through their public records only
(KindVerdict, Ranking, Pair), so another estimator behind them changes the
figures, never this text. Rules, the same in every format:
- A decided kind names its winner(s), the runner-up (the best filesystem that
  is significantly worse), the margin between the best and the runner-up with
  its 95 % interval, and a confidence word: "exact" for deterministic figures,
  "high" when the whole interval lies beyond the practical threshold of the
  kind's metrics (measure.METRICS), "moderate" when it reaches below it.
- A difference that is significant but under the practical threshold is no win:
  it reads "no practical difference".
- Winners tied for best state the difference their intervals rule out
  ("ext2 and ext4 tied for best (no difference above 36 % between them)").
- A tie states the smallest difference this run could have detected: the
  largest distance from 1 of the pairs' 95 % intervals ("no difference above
  24 %"); with no interval (one repetition) it says so. Ties collapse into one line.
- Capacity and other deterministic percentages differ in percentage points.
- No answer is drawn from no data: fewer than two filesystems in a kind, or none
  at all, reads as a plain "no answer" with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fsarena.analysis.adaptive import round_seconds, rounds_to_rule_out, settle_command
from fsarena.analysis.kinds import CPU_KIND, CPU_METRIC, SAFETY_KIND, KindVerdict
from fsarena.analysis.phrases import (
    difference_size,
    interval_text,
    names,
    number,
    tied_for_best,
)
from fsarena.analysis.ranking import Pair, Ranking
from fsarena.analysis.verdicts import caveats
from fsarena.measure.metrics import METRICS, Metric
from fsarena.report.scope import KERNEL, group_of, ranked_group
from fsarena.report.table import Comparison

WIN, TIE, SMALL, UNTESTED = "win", "tie", "small", "untested"
# A tie whose interval still allows a 2x difference says nothing a sysadmin can act on:
# it is reported as undecided, with how to decide it, not as "no difference".
UNDECIDED_AT = 1.0


@dataclass(frozen=True)
class KindAnswer:
    """One kind of work, in one sentence."""

    kind: str
    title: str
    status: str  # WIN | TIE | SMALL (significant, under the practical threshold) | UNTESTED
    text: str  # the sentence after the title
    winners: tuple[str, ...] = ()
    runner_up: str = ""
    confidence: str = ""  # "exact" | "high" | "moderate" ("" unless a win)
    margin: str = ""  # the best against the runner-up: 'xfs 1.91× faster than ext4'


@dataclass(frozen=True)
class Answer:
    recommendation: str  # one line, with its reasons; when empty, why there is no answer
    kinds: tuple[KindAnswer, ...]  # decided kinds, in the verdicts' order
    ties: str  # every tied (or practically equal) kind in one line; "" if none
    caveats: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.kinds and not self.ties


# ---------------------------------------------------------------- per kind


def _metrics(comparison: Comparison, verdict: KindVerdict) -> list[Metric]:
    if verdict.kind == CPU_KIND:
        return [METRICS[CPU_METRIC]]
    heads = {t.task: t.columns[0] for t in comparison.tables}
    return [METRICS[heads[t]] for t in verdict.tasks if heads.get(t) in METRICS]


def _detectable(ranking: Ranking) -> float | None:
    """The largest relative difference the pairs' 95 % intervals still allow (0.24 = 24 %)."""
    bounds = [
        max(p.high, 1 / p.low) - 1
        for p in ranking.pairs
        if math.isfinite(p.low) and math.isfinite(p.high) and p.low > 0
    ]
    return max(bounds) if bounds and len(bounds) == len(ranking.pairs) else None


def _tie_text(ranking: Ranking) -> tuple[str, str]:
    if max(ranking.n.values(), default=0) < 2:
        return UNTESTED, "no verdict: one repetition each (run -n 3 or more)"
    found = _detectable(ranking)
    if found is None:
        return UNTESTED, "no verdict: no interval could be computed"
    if found >= UNDECIDED_AT:
        # An interval this wide decides nothing: calling it a tie would read as "equal".
        n = min(ranking.n.values(), default=0)
        up_to = difference_size(found)
        return UNTESTED, f"undecided: differences up to {up_to} cannot be ruled out at n = {n}"
    return TIE, f"no difference above {difference_size(found)}"


def _points(comparison: Comparison, verdict: KindVerdict, best: str, other: str) -> float | None:
    """Best minus other in percentage points, averaged over the kind's tasks (exact %)."""
    gaps = []
    for table in comparison.tables:
        if table.task not in verdict.tasks or comparison.verdicts is None:
            continue
        result = comparison.verdicts.task(table.task, table.columns[0])
        if result is None or best not in result.ranking.estimates:
            continue
        est = result.ranking.estimates
        if other in est:
            sign = 1 if METRICS[result.metric].better == "higher" else -1
            gaps.append(sign * (est[best] - est[other]))
    return sum(gaps) / len(gaps) if gaps else None


def _margin(
    comparison: Comparison, verdict: KindVerdict, pair: Pair, metrics: list[Metric]
) -> tuple[str, str, str]:
    """'xfs 1.91× faster than ext4', ' (95 % CI 1.11–3.27×)' and a confidence word."""
    exact = bool(metrics) and all(m.exact for m in metrics)
    if exact and all(m.unit == "%" for m in metrics):
        gap = _points(comparison, verdict, pair.better, pair.worse)
        if gap is not None:
            label = metrics[0].label
            core = f"{pair.better} {number(gap)} percentage points more {label} than {pair.worse}"
            return core, "", "exact"
    core = f"{pair.better} {number(pair.ratio)}× {verdict.word} {pair.worse}"
    if exact or not (math.isfinite(pair.low) and math.isfinite(pair.high)):
        return core, "", "exact" if exact else "moderate"
    threshold = max((m.practical_rel for m in metrics), default=0.0)
    word = "high" if pair.low >= 1 + threshold else "moderate"
    return core, f" (95 % CI {interval_text(pair)}×)", word


def _below_threshold(pair: Pair, metrics: list[Metric]) -> bool:
    threshold = max((m.practical_rel for m in metrics), default=0.0)
    return math.isfinite(pair.ratio) and pair.ratio < 1 + threshold


def kind_answer(comparison: Comparison, verdict: KindVerdict) -> KindAnswer:
    ranking, title = verdict.ranking, verdict.title
    if ranking.all_tied:
        status, text = _tie_text(ranking)
        return KindAnswer(verdict.kind, title, status, text)
    best = ranking.order[0]
    runner = next(fs for fs in ranking.order if fs not in ranking.winners)
    pair = ranking.pair(best, runner)
    metrics = _metrics(comparison, verdict)
    if pair is None:
        return KindAnswer(verdict.kind, title, UNTESTED, "no verdict: no test between the best two")
    if _below_threshold(pair, metrics):
        threshold = max(m.practical_rel for m in metrics)
        text = f"no practical difference (under {number(100 * threshold)} %)"
        return KindAnswer(verdict.kind, title, SMALL, text)
    margin, interval, confidence = _margin(comparison, verdict, pair, metrics)
    winners = tuple(ranking.winners)
    lead = "" if len(winners) == 1 else f"{tied_for_best(ranking)}; "
    text = f"{lead}{margin}, the runner-up{interval}; confidence {confidence}"
    return KindAnswer(verdict.kind, title, WIN, text, winners, runner, confidence, margin)


# ---------------------------------------------------------------- the whole answer


def _ties_line(
    answers: list[KindAnswer], filesystems: dict[str, tuple[str, ...]], advice: str
) -> str:
    """The ties in one line, then what this run could not decide, and how to decide it."""
    equal = [a for a in answers if a.status in (TIE, SMALL)]
    open_ = [a for a in answers if a.status == UNTESTED]
    line = _equal_line(equal, filesystems)
    if open_ and any(a.status != UNTESTED for a in answers):
        kinds = "; ".join(f"{a.title} — {a.text.removeprefix('undecided: ')}" for a in open_)
        more = f"Undecided, too few repetitions to tell: {kinds}. {advice[:1].upper()}{advice[1:]}."
        line = f"{line} {more}".strip()
    return line


def _advice(comparison: Comparison, open_: list[KindVerdict]) -> str:
    """What would decide the open kinds, computed as the run's own closing warning does."""
    rankings = [k.ranking for k in open_ if min(k.ranking.n.values(), default=0) >= 2]
    widths = [w for r in rankings if (w := _detectable(r)) is not None]
    if not widths:
        return "run -n 3 or more"
    n = min(min(r.n.values()) for r in rankings)
    need = rounds_to_rule_out(n, max(widths), UNDECIDED_AT)
    return settle_command(need, round_seconds(comparison.session), "decide them")


def _equal_line(equal: list[KindAnswer], filesystems: dict[str, tuple[str, ...]]) -> str:
    if not equal:
        return ""
    groups = {filesystems[a.kind] for a in equal}
    common = len(groups) == 1
    parts = [
        f"{a.title}: {a.text.replace('no difference above', 'none above')}"
        + ("" if common else f" between {names(list(filesystems[a.kind]))}")
        for a in equal
    ]
    tail = f" between {names(list(groups.pop()))}" if common else ""
    return "No difference that matters" + tail + " in " + "; ".join(parts) + "."


def _behind(comparison: Comparison, verdict: KindVerdict, chosen: list[str]) -> str:
    """How far the best is ahead of the recommended filesystem(s) on a kind they lose.

    Not the kind's own margin (best against runner-up): when the recommended one is
    further behind, that margin names two other filesystems and says nothing about it.
    """
    ranking = verdict.ranking
    best, metrics = ranking.order[0], _metrics(comparison, verdict)
    parts = [
        _margin(comparison, verdict, pair, metrics)[0]
        for fs in chosen
        if fs not in ranking.winners and (pair := ranking.pair(best, fs)) is not None
    ]
    return ", ".join(parts)


def _recommend(
    comparison: Comparison,
    kinds: dict[str, KindVerdict],
    answers: list[KindAnswer],
    everyone: list[str],
) -> str:
    wins = [a for a in answers if a.status == WIN]
    if answers and all(a.status == UNTESTED for a in answers):
        return f"No recommendation: {answers[0].text}."
    if not wins:
        return (
            "No recommendation from these measurements: no kind of work shows a difference "
            "that matters. Choose on safety across power loss, features (quotas, ACLs, "
            "resizing, snapshots) and what you can repair."
        )
    unsafe = {fs for a in wins if a.kind == SAFETY_KIND for fs in everyone if fs not in a.winners}
    score = {
        fs: (sum(fs in a.winners for a in wins), -sum(fs not in a.winners for a in wins))
        for fs in everyone
        if fs not in unsafe
    }
    if not score:
        return "No recommendation: no filesystem kept its data safe in every test."
    top = max(score.values())
    chosen = [fs for fs in everyone if score.get(fs) == top]
    ahead = [a.title for a in wins if any(fs in a.winners for fs in chosen)]
    behind = [
        f"{a.title} ({_behind(comparison, kinds[a.kind], chosen) or a.margin})"
        for a in wins
        if a.title not in ahead
    ]
    line = f"{names(chosen)}: best on {names(ahead)} ({top[0]} of {len(wins)} kinds that differ)"
    if behind:
        line += f"; behind on {'; '.join(behind)}"
    if unsafe:
        line += f"; {names(sorted(unsafe))} not recommended: lost on safety"
    return line + "."


def _no_answer(comparison: Comparison) -> str:
    session = comparison.session
    if not any(r.status == "ok" for r in session.runs):
        return "No answer: nothing was measured in this session."
    ranked = [fs for fs in session.filesystems() if group_of(session, fs) == ranked_group(session)]
    others = [fs for fs in session.filesystems() if fs not in ranked]
    valid = [
        fs for fs in ranked if any(r.filesystem == fs and r.status == "ok" for r in session.runs)
    ]
    if len(valid) >= 2:
        return (
            "No answer: no kind of work has valid results on two or more filesystems "
            "(see the failed and invalid runs below)."
        )
    if not others:
        return f"No answer: only {names(valid)} was measured validly; a ranking needs two."
    group = {KERNEL: "host kernel", "fuse": "FUSE"}.get(ranked_group(session), "one guest kernel")
    return (
        f"No answer: only {names(ranked) or 'no filesystem'} ran through the {group}'s "
        f"drivers, and a ranking needs two. {names(others)} ran through guest kernels or "
        "FUSE: their results are shown below as ratios within their own group, never ranked "
        "against the host's."
    )


def build(comparison: Comparison) -> Answer:
    """The answer for a comparison; a 'no answer' line when the data cannot give one."""
    verdicts = comparison.verdicts
    notes = tuple(caveats(comparison.session))
    if verdicts is None or not verdicts.kinds:
        return Answer(_no_answer(comparison), (), "", notes)
    answers = [kind_answer(comparison, k) for k in verdicts.kinds]
    filesystems = {k.kind: tuple(sorted(k.ranking.order)) for k in verdicts.kinds}
    everyone = sorted({fs for k in verdicts.kinds for fs in k.ranking.order})
    decided = tuple(a for a in answers if a.status == WIN)
    open_ = [k for k, a in zip(verdicts.kinds, answers, strict=True) if a.status == UNTESTED]
    ties = _ties_line(answers, filesystems, _advice(comparison, open_))
    kinds = {k.kind: k for k in verdicts.kinds}
    return Answer(_recommend(comparison, kinds, answers, everyone), decided, ties, notes)
