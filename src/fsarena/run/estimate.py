"""The time a run will take, announced before it starts: from earlier sessions, never invented.

Three measured parts (each from the newest earlier session that has it):
- the timed tasks: their mean wall times, scaled linearly to this scale;
- fsarena's own untimed work around them (set-up, mkfs and mounts, the
  fresh aged tree written before the reads, verification, the device's
  ceiling): the earlier session's round walls over its timed seconds, its
  aging and image copies taken out (`untimed_factor`);
- the aging, when the plan ages: the bytes the profile writes over the
  slower of two rates, the one probed at launch (run/agingprobe.py: a few
  seconds of the profile's churn on a scratch image, under today's load) and
  the slowest an earlier aged session measured (aging rates fell to a third
  under load: the slowest is the honest one), capped by the profile's time
  cap, plus one image copy per aged repetition (the snapshot, then a
  restore per later repetition) at the copy time measured, scaled to the
  image's size (`aging_seconds`).
When the earlier run compared the same filesystems at the same scale, its
whole rounds are the estimate instead (everything included), plus the extra
aging time if the probe is slower now than that session's aging was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from statistics import fmean

from fsarena.errors import FsarenaError
from fsarena.plan.model import AGED_TASKS, Plan
from fsarena.run.agingprobe import ProbedRate
from fsarena.run.firstrun import duration
from fsarena.session.file import Session, load, session_files
from fsarena.stopping import MIN_ROUNDS

NO_ESTIMATE = "no estimate yet: no earlier session"


def _task_means(session: Session) -> dict[str, float]:
    """Mean wall time of each task over its successful runs."""
    walls: dict[str, list[float]] = {}
    for run in session.ok_runs():
        if run.measurement is not None:
            walls.setdefault(run.task, []).append(run.measurement.wall_s)
    return {task: fmean(values) for task, values in walls.items()}


def _whole_rounds(earlier: Session, plan: Plan, ratio: float, rounds: int) -> str:
    """The wall time of whole rounds (fsarena's own work included), from a session's timing.

    Only when the earlier run compared the same filesystems at the same scale (a round's
    untimed work, verification and set-up, does not scale like its tasks), or, for a
    sweep, its defaults alone: its configurations are those filesystems with an option,
    counted at the defaults' pace per sequence.
    """
    measured = [r.wall_s for r in earlier.timing.rounds if not r.warmup]
    ran = earlier.plan.filesystems
    same = ran in (plan.filesystems, plan.warmup_sequences() if plan.tune else None)
    same = same and ratio == 1 and _age_name(earlier) == (plan.age.name if plan.age else None)
    if not measured or not same or not ran:
        return ""
    per_round = fmean(measured)
    sequences = plan.planned_sequences()
    per_sequence = per_round / len(ran)
    total_s = float(earlier.timing.setup_s or 0) + per_sequence * sequences
    warning = _past_budget(plan, total_s, per_sequence)
    if ran == plan.filesystems and plan.warmup_sequences() == plan.sequences():
        how = f"{rounds} rounds of {duration(per_round)} each"
    else:
        warm = "a warm-up round and " if plan.warmup_rounds else ""
        how = (
            f"{warm}{plan.repetitions} rounds, {sequences} sequences of "
            f"{duration(per_sequence)} each at the pace "
            + ("of that run" if ran == plan.filesystems else f"of {', '.join(ran)} alone")
        )
    return (
        f"about {duration(total_s)} for {how} (measured whole rounds, verification and "
        f"set-up included){warning}"
    )


def _past_budget(plan: Plan, total_s: float, per_sequence: float) -> str:
    """Where a decisive run's budget cuts its planned rounds: past MIN_ROUNDS, before a
    round that would end past it (stopping.Decisive.budget_stops, at the mean pace)."""
    budget = plan.time_budget_s
    if not budget or not plan.decisive or total_s <= budget:
        return ""
    round_s = per_sequence * len(plan.sequences())
    rounds = plan.repetitions
    while rounds > MIN_ROUNDS and total_s > budget:
        rounds, total_s = rounds - 1, total_s - round_s
    few = ", too few to decide" if rounds <= MIN_ROUNDS else ""
    return (
        f", PAST the {duration(budget)} budget: the budget stops it after {rounds} rounds, "
        f"about {duration(total_s)}{few} (a smaller --scale, fewer options or filesystems, "
        "or a larger --time-budget)"
    )


def _more(plan: Plan) -> str:
    """What may follow the planned rounds: more, up to the ceiling, within the budget."""
    rule = plan.stopping
    if not plan.time_budget_s or not rule.adaptive:
        return ""
    if rule.ceiling <= plan.repetitions:
        return "; no more rounds (the ceiling)"
    return (
        f"; more rounds (up to {rule.ceiling}) only within the "
        f"{duration(plan.time_budget_s)} budget"
    )


def _age_name(session: Session) -> str | None:
    """The aging profile an earlier session ran with, or None."""
    age = session.plan.age
    return age.name if age is not None else None


def untimed_factor(session: Session) -> float | None:
    """(round walls - aging - image copies) / timed seconds: fsarena's own work per task second."""
    rounds = session.timing.rounds
    timed = sum(float(r.timed_s) for r in rounds)
    if not rounds or timed <= 0:
        return None
    reps = sum(not r.warmup for r in rounds)
    aging = sum(float(a.wall_s) + float(a.snapshot_s) * reps for a in session.aging.values())
    return max(1.0, (sum(float(r.wall_s) for r in rounds) - aging) / timed)


@dataclass(frozen=True)
class AgingCost:
    """What an earlier aged session measured: its slowest aging rate, one image copy."""

    rate: float  # bytes written per second, the slowest filesystem's
    copy_s: float  # one snapshot copy of an image of image_bytes
    image_bytes: float
    wall_s: float  # mean aging wall time per filesystem (git replay: no bytes to plan)
    source: str
    probe: tuple[str, float] | None = None  # that session's probe at launch: (filesystem, rate)
    pull_s: float = 0.0  # git replay: mean wall time of one pull there (0: not known)
    scale: float = 0.0  # that session's scale (a synthetic history's pulls follow the tree)


def aging_seconds(plan: Plan, cost: AgingCost) -> tuple[float, float]:
    """(aging, image copies) in seconds for the plan's filesystems, from measured figures."""
    assert plan.age is not None
    age, aging, copies = plan.age, 0.0, 0.0
    for profile in plan.profiles():
        image = plan.image_size_for(profile)
        if age.kind == "git-replay":
            aging += replay_seconds(plan, cost)
        else:
            churn = min(age.written_factor * image / cost.rate, age.time_cap_s)
            aging += age.fullness * image / cost.rate + churn
        # The snapshot, then a restore for every later aged repetition: one copy each.
        copies += cost.copy_s * image / cost.image_bytes * plan.repetitions
    if age.kind == "git-replay":  # and once on the host, for the fresh twins' clean copy
        aging += replay_seconds(plan, cost)
    if plan.device is not None:  # no copies: the device is aged again every repetition
        return aging * plan.repetitions, 0.0
    return aging, copies


def planned_pulls(plan: Plan) -> int:
    """Pulls a git replay makes: the first commit, one per pull_step commits, the last."""
    assert plan.age is not None
    return 1 + -(-plan.age.commits // plan.age.pull_step)


def replay_seconds(plan: Plan, cost: AgingCost) -> float:
    """One filesystem's git replay: the earlier mean pull time x the pulls planned here.

    A synthetic history's pulls touch files in proportion to the tree, hence to
    the scale; a user's repository (--age-repo) does not follow the scale.
    """
    if not cost.pull_s:
        return cost.wall_s
    real = any("repo" in d for d in plan.datasets.values())
    ratio = plan.scale / cost.scale if cost.scale and not real else 1.0
    return cost.pull_s * planned_pulls(plan) * ratio


def aging_cost(paths: list[Path], plan: Plan) -> AgingCost | None:
    """The newest earlier session that aged with a profile of the plan's kind."""
    assert plan.age is not None
    for path in paths[:20]:
        if (earlier := _finished(path)) is None:
            continue
        records = list(earlier.aging.values())
        timing = earlier.timing
        kinds = {a.profile.kind if a.profile else "tree" for a in records}
        rates = [float(r) for a in records if (r := a.bytes_written_per_s)]
        copies = [a for a in records if a.snapshot_s]
        if rates and copies and kinds == {plan.age.kind}:
            return AgingCost(
                rate=min(rates),
                copy_s=fmean(float(a.snapshot_s) for a in copies),
                image_bytes=fmean(float(a.image_size_bytes) for a in copies),
                wall_s=fmean(float(a.wall_s) for a in records),
                source=path.name,
                probe=(timing.aging_probe_fs, float(timing.aging_probe_bytes_per_s))
                if timing.aging_probe_fs and timing.aging_probe_bytes_per_s
                else None,
                pull_s=fmean(float(a.wall_s) / a.rounds for a in records if a.rounds)
                if all(a.rounds for a in records)
                else 0.0,
                scale=float(earlier.plan.scale or 0),
            )
    return None


def _finished(path: Path) -> Session | None:
    """An earlier session to learn times from: readable, and no longer `running`.

    A running session (another run now, or one killed -9) has partial rounds and no
    report time: its figures are not yet what its run took.
    """
    try:
        earlier = load(path)
    except FsarenaError:
        return None
    return None if earlier.status == "running" else earlier


def _newest(results_dir: Path) -> list[Path]:
    return session_files(results_dir, newest_first=True)


def report_reserve(results_dir: Path) -> float:
    """Seconds the newest earlier run took to write its reports (0 when none recorded it).

    A run's budget keeps this much for the reports written after its last round.
    """
    for path in _newest(results_dir)[:20]:
        if (earlier := _finished(path)) is None:
            continue
        if (seconds := earlier.timing.report_s) is not None:
            return float(seconds)
    return 0.0


def estimate(plan: Plan, results_dir: Path, probed: ProbedRate | None = None) -> str:
    """Time of the run, from the newest earlier session that ran its tasks (never invented).

    probed: the aging rate measured at launch (run/agingprobe.py), if the plan ages.
    """
    paths = _newest(results_dir)
    for path in paths[:20]:
        if (earlier := _finished(path)) is None:
            continue
        means = _task_means(earlier)
        known = [t for t in plan.tasks if t in means]
        if not known or not (earlier_scale := earlier.plan.scale):
            continue
        ratio = plan.scale / float(earlier_scale)
        rounds = plan.repetitions + plan.warmup_rounds
        sequences = plan.planned_sequences()  # a sweep warms up on its defaults alone
        ratios = {t: _tree_ratio(plan, earlier) if t in AGED_TASKS else ratio for t in known}
        timed_s = sum(means[t] * ratios[t] for t in known) * sequences
        missing = [t for t in plan.tasks if t not in means and plan.task_class(t).timed]
        gaps = f"; no times for {', '.join(missing)}" if missing else ""
        more = _more(plan)
        if whole := _whole_rounds(earlier, plan, ratio, rounds):
            slower = _slower_now(plan, aging_cost(paths, plan), probed) if plan.age else ""
            return f"{whole}{'' if 'PAST' in whole else more}, from {path.name}{slower}{gaps}"
        parts = _parts(plan, paths, earlier, path.name, timed_s, rounds, probed)
        return parts + ("" if "PAST" in parts else more) + gaps
    unknown = f"{NO_ESTIMATE} in {results_dir} ran these tasks"
    cost, how = slower_rate(None, probed, plan.age.kind) if plan.age else (None, "")
    if cost is None and plan.age is not None and plan.age.kind == "git-replay":
        return f"{unknown}; nor its aging: {planned_pulls(plan)} git pulls per filesystem"
    if cost is None:
        return unknown
    aging_s = aging_seconds(plan, cost)[0]
    return f"{unknown}; their aging alone about {duration(aging_s)}, at {how}"


def _parts(
    plan: Plan,
    paths: list[Path],
    earlier: Session,
    name: str,
    timed_s: float,
    rounds: int,
    probed: ProbedRate | None,
) -> str:
    """ "about T: timed tasks x fsarena's own work, + aging and copies", each part sourced."""
    factor = untimed_factor(earlier)
    tasks_s = timed_s * (factor or 1.0)
    own = (
        f" x {factor:.2f} for fsarena's own untimed work (set-up, fresh trees, verification; "
        "measured there)"
        if factor
        else "; fsarena's own untimed work not included (no round timing there)"
    )
    which = "the first round" if rounds == 1 else f"the first {rounds} rounds"
    if plan.warmup_rounds and plan.warmup_sequences() != plan.sequences():
        which = f"a warm-up round on the defaults and {plan.repetitions} rounds"
    tasks = (
        f"{duration(timed_s)} of timed tasks for {which}{own}, from {name} "
        f"(scale {earlier.plan.scale}, times scaled linearly to {plan.scale})"
    )
    if plan.age is None:
        cut = _past_budget(plan, tasks_s, tasks_s / plan.planned_sequences())
        return f"about {duration(tasks_s)}: {tasks}{cut}"
    cost, how = slower_rate(aging_cost(paths, plan), probed, plan.age.kind)
    if cost is None:
        pulls = (
            f" ({planned_pulls(plan)} git pulls per filesystem, never timed here)"
            if plan.age.kind == "git-replay"
            else ""
        )
        return (
            f"about {duration(tasks_s)} and the aging: {tasks}; aging time unknown{pulls}: no "
            f"earlier session aged a filesystem with a {plan.age.kind} profile, and no probe"
        )
    aging_s, copies_s = aging_seconds(plan, cost)
    copies = (
        f"{duration(copies_s)} of image snapshots and restores"
        if cost.copy_s
        else "image snapshots and restores not counted (no earlier aged session timed one)"
    )
    return (
        f"about {duration(tasks_s + aging_s + copies_s)}: {tasks}; {duration(aging_s)} of "
        f"aging at {how}; {copies}"
    )


def _probe_words(probed: ProbedRate) -> str:
    share = f"{probed.fsync_share * 100:.0f} %"
    return (
        f"{probed.rate / 1e6:,.0f} MB/s probed now ({probed.work_s:.1f} s of the profile's "
        f"writes, {share} fsync'ed, on a scratch {probed.filesystem} image; the probe took "
        f"{probed.total_s:.1f} s)"
    )


def slower_rate(
    cost: AgingCost | None, probed: ProbedRate | None, kind: str
) -> tuple[AgingCost | None, str]:
    """The aging cost at the slower of the probed and the earlier rate, and where it comes from."""
    if kind == "git-replay":  # not probed: the earlier replay's wall time
        how = (
            f"{cost.pull_s:.1f} s per pull, the mean in {cost.source}"
            if cost and cost.pull_s
            else f"its mean wall time per filesystem in {cost.source}"
            if cost
            else ""
        )
        return cost, how
    if cost is None:
        if probed is None:
            return None, ""
        now = f"{_probe_words(probed)}; no earlier aged session to cross-check"
        return AgingCost(probed.rate, 0.0, 1.0, 0.0, "the probe"), now
    earlier = f"{cost.rate / 1e6:,.0f} MB/s, the slowest filesystem's rate in {cost.source}"
    if probed is None:
        return cost, earlier
    cost, earlier = _under_todays_load(cost, probed, earlier)
    now = _probe_words(probed)
    if probed.rate < cost.rate:
        return replace(cost, rate=probed.rate), f"{now}, slower than {earlier}"
    return cost, f"{earlier}, slower than {now}"


def _under_todays_load(cost: AgingCost, probed: ProbedRate, earlier: str) -> tuple[AgingCost, str]:
    """That session's rate slowed as much as the probe of the same filesystem slowed since."""
    if cost.probe is None or cost.probe[0] != probed.filesystem or probed.rate >= cost.probe[1]:
        return cost, earlier
    load = cost.probe[1] / probed.rate
    slowed = replace(cost, rate=cost.rate / load)
    return slowed, (
        f"{slowed.rate / 1e6:,.0f} MB/s, the slowest filesystem's rate in {cost.source} "
        f"({cost.rate / 1e6:,.0f} MB/s) {load:.1f}x slower, as its probe of "
        f"{probed.filesystem} ({cost.probe[1] / 1e6:,.0f} MB/s) is now"
    )


def _slower_now(plan: Plan, cost: AgingCost | None, probed: ProbedRate | None) -> str:
    """Whole rounds include the aging at that session's rate: add what a slower rate now adds."""
    assert plan.age is not None
    if cost is None or probed is None:
        return ""
    now, how = slower_rate(cost, probed, plan.age.kind)
    if now is None or now.rate >= cost.rate:
        return f"; aging {_probe_words(probed)}: not slower than its aging"
    extra = aging_seconds(plan, now)[0] - aging_seconds(plan, cost)[0]
    return f", + {duration(extra)} of aging, at {how}"


def _tree_ratio(plan: Plan, earlier: Session) -> float:
    """The aged tree's size here over its size in the earlier session (it reads it whole)."""
    sizes = [float(a.live_bytes) for a in earlier.aging.values() if a.live_bytes is not None]
    if plan.age is None or not sizes:
        return 1.0
    if plan.age.kind == "git-replay" and (earlier_scale := earlier.plan.scale):
        return plan.scale / float(earlier_scale)  # a checkout of the kernel tree: the scale's
    tree = plan.age.fullness * max(plan.image_size_for(p) for p in plan.profiles())
    return tree / fmean(sizes)
