"""A rough estimate of a first run's time, when no earlier session can give a measured one.

Measured parts only: the bytes the plan's timed tasks write (their datasets'
sizes, from the plan) at the device's raw write ceiling, which the run
measures with fio before anything else. It is a lower bound: per-file work
(trees of small files are slower than the device), reads, and fsarena's own
untimed work (mkfs, checks, the ceiling itself) come on top, so the text says
"at least". The runner prints it as soon as the ceiling is known, then, after
the first whole round, the time at that round's measured pace; from the second
run on, estimate.py uses the first one's measured rounds instead.
"""

from __future__ import annotations

from fsarena.plan.model import Plan


def written_per_sequence(plan: Plan) -> int:
    """Bytes the timed tasks of one sequence write: each writing task's datasets, whole."""
    specs = plan.dataset_specs()
    total = 0
    for name in plan.tasks:
        task = plan.task_class(name)
        if task.timed and task.payload == "write":
            total += sum(specs[d].total_bytes for d in task.datasets if d in specs)
    return total


def duration(seconds: float) -> str:
    """A time in words for an estimate: '45 s', '12 min', or 'under 1 s'."""
    if seconds < 0.5:
        return "under 1 s"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def first_run_estimate(plan: Plan, write_bytes_per_s: float) -> str:
    """The lower bound in words: per round, for the rounds planned, and the budget's cap."""
    written = written_per_sequence(plan)
    if written <= 0 or write_bytes_per_s <= 0:
        return "no first-run estimate: the plan's tasks write no dataset of known size"
    per_round = written * len(plan.sequences()) / write_bytes_per_s
    rounds = plan.repetitions + plan.warmup_rounds
    total = written * plan.planned_sequences() / write_bytes_per_s  # a sweep's warm-up: less
    bound = (
        f"at least {duration(total)} for {rounds} round{'' if rounds == 1 else 's'}, "
        f"{duration(per_round)} "
        f"each: the tasks write {written / 1e9:,.2f} GB per filesystem x "
        f"{len(plan.sequences())} at the {write_bytes_per_s / 1e6:,.0f} MB/s measured just now "
        "by fio (per-file work, reads and fsarena's own work come on top)"
    )
    if plan.time_budget_s:
        # The budget is the figure to act on; the lower bound only says it is not less.
        return (
            f"rough first-run estimate: up to the {duration(plan.time_budget_s)} budget "
            f"(a measured forecast follows the first round); a lower bound: {bound}"
        )
    return f"rough first-run estimate: {bound}; a measured forecast follows the first round"


def paced_estimate(
    plan: Plan, elapsed_s: float, round_s: float, measured_left: int, ran: int | None = None
) -> str:
    """After the first whole round: when the planned rounds end at its measured pace.

    ran: the sequences that round ran, when fewer than a measured round's (a sweep warms
    up on its defaults alone): its pace per sequence is scaled to a whole round."""
    whole = len(plan.sequences())
    per_round = round_s * whole / ran if ran else round_s
    end = elapsed_s + per_round * measured_left
    more = ""
    ceiling = plan.stopping.ceiling
    if plan.stopping.adaptive and ceiling > plan.repetitions:
        more = f", then more rounds only while undecided (up to {ceiling})"
    cap = ""
    if plan.time_budget_s:
        cap = f", within the {duration(plan.time_budget_s)} budget"
        end = min(end, plan.time_budget_s)
    took = f"the first round took {duration(round_s)}"
    if ran and ran != whole:
        took = (
            f"the warm-up round ({ran} of the {whole} sequences a round runs) took "
            f"{duration(round_s)}, so about {duration(per_round)} a round"
        )
    if measured_left == 0:
        return f"{took}; no planned round is left{more}{cap}"
    rounds = "round ends" if measured_left == 1 else "rounds end"
    return (
        f"{took}: at that pace the {measured_left} planned {rounds} about "
        f"{duration(end)} after the start{more}{cap}"
    )
