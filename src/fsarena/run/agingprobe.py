"""The aging rate probed at launch: a few seconds of the profile's own writes, on a scratch image.

The time announced before an aged run needs the rate aging will write at; an
earlier session's depends on the load then (under load the announced aging
was 2x short). So before an aged run fsarena makes a scratch image of the
plan's first host filesystem (the size of its real image, sparse), mounts it,
and writes the first files of the real aging plan's tree (the profile's sizes
at the real image's size: a small tree lacks the large tail files, and its
rate was a third of the real one) for PROBE_S seconds, fsync'ing the profile's
fsync share of them (seeded), then syncfs, and unmounts and removes everything.

The rate is those bytes over their wall time, syncfs included. Aging's fill
is not fsync'ed and a probe on a nearly empty filesystem runs before any
fragmentation, so the estimate takes the slower of the probe and an earlier
session's slowest rate. Git replay is not probed (a pull needs the repository
dataset, built with the run's source).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from fsarena.aging.workload import AgingPlan, Writer
from fsarena.errors import FsarenaError
from fsarena.host.executor import Executor
from fsarena.interrupt import whole
from fsarena.plan.model import Plan
from fsarena.targets.loop import LoopTarget

PROBE_S = 3.0  # seconds of writes: hundreds of files at tens to hundreds of MB/s


@dataclass(frozen=True)
class ProbedRate:
    """What the probe measured: bytes over seconds of the profile's work, and its own cost."""

    filesystem: str
    bytes_written: int
    work_s: float  # the writes that were timed, syncfs included
    total_s: float  # the whole probe: image, mkfs, mount, fill, churn, umount, removal
    fsync_share: float  # of the files written, the share fsync'ed (the profile's)

    @property
    def rate(self) -> float:
        return self.bytes_written / self.work_s

    @property
    def key(self) -> tuple[str, float]:
        """(filesystem, rate): what a session keeps of it."""
        return self.filesystem, self.rate


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
    # Each step of the undo runs whole (a stop signal is raised once it is done, and the
    # steps after it still run): a detach cut short left the image behind.
    with ExitStack() as undo:  # run last to first, whatever failed
        try:
            undo.callback(_whole, target.teardown, executor)
            device = target.setup(executor)
            executor.call(profile.mkfs_argv(device))
            executor.make_dir(mountpoint)
            undo.callback(_whole, executor.remove_path, mountpoint)
            executor.track("mount", mountpoint, device)
            # Unmounted if mounted: a stop can land once the mount is made, before this
            # line would know it.
            undo.callback(_whole, _unmount, executor, mountpoint)
            executor.call(profile.mount_argv(device, mountpoint))
            sample = AgingPlan(age, plan.image_size_for(profile), plan.seed)
            sync = partial(executor.call, profile.sync_argv(mountpoint))
            written, work_s = _work(sample, f"{mountpoint}/probe", sync)
        except (FsarenaError, OSError) as exc:
            raise FsarenaError(f"the aging probe on {profile.name} failed: {exc}") from exc
    return ProbedRate(profile.name, written, work_s, time.monotonic() - started, age.fsync_share)


def _whole(step: Callable[..., None], *args: Any) -> None:
    with whole():
        step(*args)


def _unmount(executor: Executor, mountpoint: str) -> None:
    if executor.is_mounted(mountpoint):
        executor.call(("umount", mountpoint))
    executor.untrack("mount", mountpoint)


def _work(sample: AgingPlan, root: str, sync: Callable[[], None]) -> tuple[int, float]:
    """The plan's first files for PROBE_S, its fsync share fsync'ed: (bytes, seconds) timed."""
    writer = Writer(sample, root)
    os.makedirs(root)
    for d in sample.directories():
        os.mkdir(f"{root}/{d}")
    draws = random.Random(sample.seed)
    started, written = time.monotonic(), 0
    for f in sample.fill():
        fsync = draws.random() < sample.profile.fsync_share
        written += writer.write(replace(f, fsync=fsync))
        if time.monotonic() - started >= PROBE_S:
            break
    sync()
    return written, time.monotonic() - started


def probe_at_launch(
    plan: Plan, say: Callable[[str], None], lock: Callable[[str], AbstractContextManager[None]]
) -> ProbedRate | None:
    """The probe, under the work directory's lock and ledger; None (and why, said) if it failed.

    lock: run.launch.workdir_lock (given: launch imports the estimate, which imports this).
    """
    from fsarena.host.executor import RealExecutor
    from fsarena.host.ledger import Ledger

    if plan.age is None or plan.age.kind == "git-replay":
        return None
    say(f"probing the aging rate ({PROBE_S:.0f} s of the {plan.age.name} profile's work)")
    try:
        with lock(plan.workdir):
            return probe_rate(plan, RealExecutor(ledger=Ledger(plan.workdir)))
    except FsarenaError as exc:
        say(f"warning: {exc}; the aging time comes from earlier sessions only")
        return None
