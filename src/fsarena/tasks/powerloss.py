"""The powerloss task: the power-loss test of one filesystem, as a step of a suite."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.powerloss.results import VALUE_METRICS
from fsarena.tasks.base import FsState, Task, TaskContext

# The negative control runs once per process, before the first filesystem's crash
# test, and is kept with that filesystem's run (PowerlossDetails.control_result).
_CONTROL: dict[str, Any] = {}


class Powerloss(Task):
    """Simulated power cuts: how many leave a mountable, fsck-clean filesystem, and no lost fsync.

    Each workload (powerloss/workloads) is recorded write by write and flush by
    flush through a FUSE logger under a loop device; crash states (everything
    up to a flush, plus prefixes and random subsets of the writes after it) are
    mounted, timed, checked against what fsync and friends had promised, and
    fsck'ed. An ext4 nobarrier negative control runs first and must lose data.
    Untimed: Run.values hold the per-filesystem figures, Run.details every
    crash state's outcome. Method: shared/design/powerloss.md.
    """

    name = "powerloss"
    kind = "safety"
    timed = False
    requires = frozenset(FsState)  # it makes its own filesystems
    formats = True
    columns = VALUE_METRICS

    def __init__(self) -> None:
        self._details: dict[str, Any] = {}

    def probe(self, ctx: TaskContext) -> dict[str, float]:
        from fsarena.powerloss import engine
        from fsarena.powerloss.results import filesystem_values
        from fsarena.powerloss.workload import select

        reason = engine.testable(ctx.profile)
        if reason:
            raise FsarenaError(f"not testable here: {reason}")
        options = engine.Options(
            states_cap=engine.DEFAULT_STATES,
            seed=secrets.randbelow(2**31),
            workloads=tuple(select(None)),
            save_to=Path(ctx.artifacts_dir) if ctx.artifacts_dir else None,
        )
        with engine.scratch(Path(ctx.scratch)) as area:
            first = "result" not in _CONTROL
            if first:
                _CONTROL["result"] = engine.run_control(area, options, lambda line: None)
            control = _CONTROL["result"]
            refusal = engine.control_refusal(control)
            if refusal:
                raise FsarenaError(refusal)
            details = engine.test_filesystem(ctx.profile, area, options, lambda line: None)
        details.control = engine.control_figures(control)
        details.control_result = control if first else None
        self._details = details.model_dump(mode="json")
        values = filesystem_values(details.workloads)
        if not values:
            errors = "; ".join(f"{w.workload}: {w.error}" for w in details.workloads)
            raise FsarenaError(f"no workload completed: {errors}")
        return values

    def details(self) -> dict[str, Any]:
        return self._details


TASKS = (Powerloss,)
