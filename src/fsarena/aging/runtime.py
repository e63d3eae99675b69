"""Aging where the filesystem is mounted: on the host, or inside a guest kernel through its agent.

What aging does to a mounted filesystem's files (age it, write the fresh
twin's file set, read the tree's layout) must happen where the filesystem is
mounted: on the host for the host kernel's and FUSE drivers (a FUSE mount is a
host path like any other), inside the guest for a filesystem that a guest
kernel runs, whose disk the host cannot mount while the guest has it. These
are JOBS: run here (`run`) when the executor is the host's, and inside the
guest through its agent's "job" request otherwise, so the very same code, and
the same seed, give the same file set in both places. Their arguments and
results are JSON (they travel on the guest's serial line); device counters
are read by the job, inside the guest, where the guest's disk is a device
(the host sees only an image file).
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from fsarena.aging.layout import tree_layout
from fsarena.aging.profiles import AgeProfile
from fsarena.aging.workload import MARK, ROOT, AgingPlan, Writer, digest, mark_tree, scan
from fsarena.errors import FsarenaError
from fsarena.host.executor import Runtime, TaskExecutor
from fsarena.measure.collect import read_device_stat

# Beyond the churn's own time cap: the fill (not capped) and the checks, in a slow guest.
FILL_ALLOWANCE_S = 1800.0


def plan_args(plan: AgingPlan) -> dict[str, Any]:
    """An aging plan as JSON arguments (rebuilt by plan_from where the job runs)."""
    return {
        "profile": plan.profile.model_dump(mode="json"),
        "image_bytes": plan.image_bytes,
        "seed": plan.seed,
    }


def plan_from(profile: dict[str, Any], image_bytes: int, seed: int) -> AgingPlan:
    return AgingPlan(AgeProfile.model_validate(profile), image_bytes, seed)


def age_tree(
    ex: TaskExecutor,
    plan: dict[str, Any],
    mountpoint: str,
    device: str,
    sync_argv: Sequence[str],
) -> dict[str, Any]:
    """Fill and churn under mountpoint/ROOT, synced and checked; what it did and cost."""
    aging = plan_from(**plan)
    root = os.path.join(mountpoint, ROOT)
    read0, written0 = read_device_stat(device)
    started = time.monotonic()
    try:
        tally = Writer(aging, root).run()
    except OSError as exc:
        raise FsarenaError(
            f"aging failed: {exc.strerror or exc} ({exc.filename}); the image may be too "
            "small for the profile's fullness on this filesystem"
        ) from None
    ex.call(sync_argv)
    wall_s = time.monotonic() - started
    read1, written1 = read_device_stat(device)
    planned = {p: f.size for p, f in tally.live.items()}
    on_disk = scan(root)
    mark_tree(mountpoint)
    return {
        "profile": aging.profile.model_dump(mode="json"),
        "seed": aging.seed,
        "image_size_bytes": aging.image_bytes,
        "wall_s": wall_s,
        "bytes_written": tally.bytes_written,
        "bytes_written_per_s": tally.bytes_written / wall_s if wall_s > 0 else None,
        "device_write_bytes": written1 - written0,
        "device_read_bytes": read1 - read0,
        "files_created": tally.created,
        "files_deleted": tally.deleted,
        "fsyncs": tally.fsyncs,
        "rounds": tally.rounds,
        "stopped_by": tally.stopped_by,
        "files": len(tally.live),
        "live_bytes": sum(planned.values()),
        "manifest_digest": digest(tally.live, aging.seed),
        "on_disk_matches": on_disk == planned,
    }


def clean_tree(
    ex: TaskExecutor, plan: dict[str, Any], mountpoint: str, sync_argv: Sequence[str]
) -> bool:
    """On a fresh filesystem, the aged file set in one sorted pass; False if it was there."""
    aging = plan_from(**plan)
    root = os.path.join(mountpoint, ROOT)
    if os.path.exists(os.path.join(mountpoint, MARK)):
        return False
    if os.path.exists(root):
        raise FsarenaError(f"{root} exists but is incomplete; the tree was not written whole")
    writer = Writer(aging, root)
    os.makedirs(root)
    for d in aging.directories():
        os.mkdir(f"{root}/{d}")
    final = aging.final()
    for path in sorted(final):
        writer.write(final[path])
    mark_tree(mountpoint)
    ex.call(sync_argv)
    return True


def layout(ex: TaskExecutor, mountpoint: str, sync_argv: Sequence[str]) -> dict[str, Any]:
    """The aged tree's FIEMAP figures (aging.layout) and the filesystem's block size, synced.

    A filesystem that does not answer FIEMAP has no extent figures: "no_extents" says why.
    """
    values: dict[str, float] = {}
    why = ""
    try:
        values = dict(tree_layout(os.path.join(mountpoint, ROOT)).values())
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.ENOTTY):
            raise
        why = f"the filesystem does not report extents (FIEMAP: {exc.strerror})"
    ex.call(sync_argv)
    return {"values": values, "block_bytes": os.statvfs(mountpoint).f_frsize, "no_extents": why}


JOBS: dict[str, Callable[..., Any]] = {"age": age_tree, "clean_tree": clean_tree, "layout": layout}


def run(ex: TaskExecutor, name: str, timeout_s: float, **args: Any) -> Any:
    """Job `name` where the filesystem is: inside the executor's guest, or here."""
    if isinstance(ex, Runtime):
        return ex.job(__name__, name, args, timeout_s)
    return JOBS[name](ex, **args)


def age_timeout(plan: AgingPlan) -> float:
    return plan.profile.time_cap_s + FILL_ALLOWANCE_S


# Why a profile cannot age a filesystem inside a guest kernel ("" when it can).
GIT_REPLAY_IN_GUEST = (
    "git replay does not run inside guest kernels: {why}; the fill and churn profiles age them"
)


def guest_unsupported(age: AgeProfile) -> str:
    """Why this aging profile is not run inside a guest kernel, or "" when it is."""
    if age.kind != "git-replay":
        return ""
    return GIT_REPLAY_IN_GUEST.format(why=GIT_REPLAY_WHY)


GIT_REPLAY_WHY = (
    "its few hundred pulls each start several git processes, which an emulated guest kernel "
    "starts many times slower than the host does, so the replay would stop at its time cap "
    "on another commit than the host's (another file set)"
)
