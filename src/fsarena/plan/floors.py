"""Dataset floors: the smallest --scale at which every dataset is still its share of the full size.

Datasets do not shrink below a floor (an ISO of 1 MiB, a tree of 10 files in 2
directories, ...). Below some scale a dataset is its floor, not a scaled copy
of the article's, and the run would compare nothing it claims to; the command
line refuses such a scale and names the smallest usable one.
"""

from __future__ import annotations

import math

from fsarena.errors import FsarenaError
from fsarena.plan import catalog
from fsarena.plan.model import Plan

# A dataset whose floor (1 MiB, 10 files, ...) more than doubles its share of the full
# size is no longer a scaled copy of the article's: its figures would compare nothing.
FLOOR_FACTOR = 2.0


def _held_by_floor(plan: Plan, scale: float) -> list[str]:
    """Datasets of the plan that, at this scale, are their floor rather than their share.

    Datasets that are not proportional by design (a server workload's parameters, a
    handful of real packages) are not held to it: for the workloads the report flags a
    working set that fits in memory instead.
    """
    names = sorted({d for t in plan.tasks for d in plan.task_class(t).datasets})
    full = catalog.scaled_specs(names, plan.datasets, 1.0)
    at = catalog.scaled_specs(names, plan.datasets, scale)
    return [
        n
        for n in names
        if full[n].proportional and at[n].total_bytes > FLOOR_FACTOR * scale * full[n].total_bytes
    ]


def smallest_scale(plan: Plan) -> float:
    """The smallest scale at which every dataset of the plan is still its share (2 digits up)."""
    lo, hi = plan.scale, 1.0
    for _ in range(40):  # bisection in log space: floors only grow as the scale shrinks
        mid = (lo * hi) ** 0.5
        lo, hi = (lo, mid) if not _held_by_floor(plan, mid) else (mid, hi)
    digits = -int(f"{hi:e}".split("e")[1]) + 1
    return float(f"{math.ceil(hi * 10**digits) / 10**digits:.{max(digits, 0)}f}")


def require_proportional(plan: Plan) -> None:
    """Refuse a scale so small that a dataset would be its floor, naming the smallest usable."""
    held = _held_by_floor(plan, plan.scale)
    if not held or _held_by_floor(plan, 1.0):
        return
    specs = plan.dataset_specs()
    sizes = ", ".join(f"{n}: {specs[n].total_bytes / 1e6:.1f} MB" for n in held)
    raise FsarenaError(
        f"--scale {plan.scale:g} is too small: some datasets would stay at their floor, more "
        f"than twice their share ({sizes}); the smallest scale for this suite is "
        f"{smallest_scale(plan):g}"
    )
