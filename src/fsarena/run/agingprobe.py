"""The aging rate probed at launch: a few seconds of the profile's own work, on a scratch image.

The time announced before an aged run needs the rate aging will write at; an
earlier session's rate depends on the load then (under load the announced
aging was 2x short). So before an aged run fsarena makes a scratch image of
the plan's first filesystem on the host (the size of its real image, sparse),
mounts it, writes a small tree of the profile's distributions (PROBE_TREE_BYTES)
and then runs the profile's churn rounds (its delete share and fsync share)
for PROBE_S seconds, syncfs included, and unmounts and removes everything.

The rate is the churn rounds' bytes over their wall time, syncfs included
(churn is most of what aging writes, and the slower part: its fsyncs); for a
profile without churn, the fill's. A probe on a nearly empty filesystem is
faster than aging at 80 % fullness can be, so the estimate takes the slower of
the probe and an earlier session's slowest rate. Git replay is not probed (a
pull needs the repository dataset, built with the run's source).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial

from fsarena.aging.workload import AgingPlan, NewFile, Writer, apply_to
from fsarena.errors import FsarenaError
from fsarena.measure.executor import Executor
from fsarena.plan.core import Plan
from fsarena.targets.loop import LoopTarget

PROBE_S = 3.0  # seconds of churn rounds: a few rounds at tens of MB/s
PROBE_TREE_BYTES = 16 << 20  # the live tree churned: small, so the fill takes a second


@dataclass(frozen=True)
class ProbedRate:
    """What the probe measured: bytes over seconds of the profile's work, and its own cost."""

    filesystem: str
    bytes_written: int
    work_s: float  # the churn (or fill) that was timed, syncfs included
    total_s: float  # the whole probe: image, mkfs, mount, fill, churn, umount, removal
    phase: str  # "churn" | "fill"

    @property
    def rate(self) -> float:
        return self.bytes_written / self.work_s


def probe_rate(plan: Plan, executor: Executor) -> ProbedRate | None:
    """Age a scratch image of the plan's first host filesystem for a few seconds; None if none."""
    age = plan.age
    hosts = [p for p in plan.profiles() if p.driver != "guest" and p.on_device]
    if age is None or age.kind == "git-replay" or not hosts:
        return None
    profile = hosts[0]
    started = time.monotonic()
    target = LoopTarget(f"{plan.workdir}/images/aging-probe.img", plan.image_size_for(profile))
    mountpoint = f"{plan.workdir}/mnt/aging-probe"
    try:
        device = target.setup(executor)
        executor.call(profile.mkfs_argv(device))
        executor.make_dir(mountpoint)
        executor.track("mount", mountpoint)
        executor.call(profile.mount_argv(device, mountpoint))
        try:
            # Churn bounded by PROBE_S only, not by the small tree's bytes: a fast filesystem
            # would otherwise end the rounds in a fraction of a second.
            endless = age.model_copy(update={"written_factor": 100 if age.written_factor else 0})
            sample = AgingPlan(endless, int(PROBE_TREE_BYTES / max(age.fullness, 0.01)), plan.seed)
            sync = partial(executor.call, profile.sync_argv(mountpoint))
            written, work_s, phase = _work(sample, f"{mountpoint}/probe", sync)
        finally:
            executor.call(("umount", mountpoint))
            executor.untrack("mount", mountpoint)
            executor.remove_path(mountpoint)
    except (FsarenaError, OSError) as exc:
        raise FsarenaError(f"the aging probe on {profile.name} failed: {exc}") from exc
    finally:
        target.teardown(executor)
    return ProbedRate(profile.name, written, work_s, time.monotonic() - started, phase)


def _work(sample: AgingPlan, root: str, sync: Callable[[], None]) -> tuple[int, float, str]:
    """The small tree, then churn rounds for PROBE_S: (bytes, seconds, phase) of the timed part."""
    writer = Writer(sample, root)
    os.makedirs(root)
    for d in sample.directories():
        os.mkdir(f"{root}/{d}")
    live: dict[str, NewFile] = {}
    started, written = time.monotonic(), 0
    for f in sample.fill():
        written += writer.write(f)
        live[f.path] = f
    sync()
    if sample.profile.written_factor <= 0:
        return written, time.monotonic() - started, "fill"
    started, written = time.monotonic(), 0
    for ops in sample.rounds(live):  # the profile's rounds: its delete and fsync shares
        for op in ops:
            if isinstance(op, NewFile):
                written += writer.write(op)
            else:
                os.unlink(f"{root}/{op}")
        apply_to(live, ops)
        if time.monotonic() - started >= PROBE_S:
            break
    sync()
    return written, time.monotonic() - started, "churn"


def probe_at_launch(
    plan: Plan, say: Callable[[str], None], lock: Callable[[str], AbstractContextManager[None]]
) -> ProbedRate | None:
    """The probe, under the work directory's lock and ledger; None (and why, said) if it failed.

    lock: run.launch.workdir_lock (given: launch imports the estimate, which imports this).
    """
    from fsarena.measure.executor import RealExecutor
    from fsarena.measure.ledger import Ledger

    if plan.age is None or plan.age.kind == "git-replay":
        return None
    say(f"probing the aging rate ({PROBE_S:.0f} s of the {plan.age.name} profile's work)")
    try:
        with lock(plan.workdir):
            return probe_rate(plan, RealExecutor(ledger=Ledger(plan.workdir)))
    except FsarenaError as exc:
        say(f"warning: {exc}; the aging time comes from earlier sessions only")
        return None
