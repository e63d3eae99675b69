"""The aging phase of a run: age a mounted filesystem once, record what it cost, snapshot it.

Order, for the first aged sequence of each filesystem (the runner's
`FsSequence.age`, run/sequence.py): mkfs and mount (untimed, as for any task), the workload
(fill, churn, or git replay; timed with the device's counters, syncfs included,
where the filesystem is mounted: aging.runtime runs fill and churn inside a guest
kernel for a filesystem that one runs),
a check that the files on disk are the planned file set, umount, and a copy
of the image as the snapshot. Every later aged repetition restores the
image from the snapshot, so all repetitions measure the same aged filesystem
and the aging's cost is paid once per filesystem and seed.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from fsarena.aging import runtime
from fsarena.aging.gitreplay import files_touched, git, replay, tree_digest
from fsarena.aging.workload import ROOT, AgingPlan, mark_tree
from fsarena.datasets.gitrepo import REPO_DIR
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.host.executor import TaskExecutor
from fsarena.measure.collect import read_device_stat


class Dataset(Protocol):
    """A dataset on the run's source (git replay pulls from its repository)."""

    @property
    def root(self) -> str: ...


class Mounted(Protocol):
    """What aging needs of the mounted filesystem (a task's context has it)."""

    @property
    def device(self) -> str: ...

    @property
    def mountpoint(self) -> str: ...

    @property
    def profile(self) -> FilesystemProfile: ...

    @property
    def executor(self) -> TaskExecutor: ...

    def path(self, *parts: str) -> str: ...

    def dataset(self, name: str) -> Dataset: ...


def age_mounted(ctx: Mounted, plan: AgingPlan) -> dict[str, Any]:
    """Run the workload on the mounted filesystem; what it did and cost, for the session.

    Fill and churn run where the filesystem is mounted (aging.runtime: here, or
    inside its guest kernel); git replay only here (runtime.unsupported says why).
    """
    if plan.profile.kind == "git-replay":
        return _age_git(ctx, plan)
    record: dict[str, Any] = runtime.run(
        ctx.executor,
        "age",
        runtime.age_timeout(plan),
        plan=runtime.plan_args(plan),
        mountpoint=ctx.mountpoint,
        device=ctx.device,
        sync_argv=list(ctx.profile.sync_argv(ctx.mountpoint)),
    )
    return record


def _age_git(ctx: Mounted, plan: AgingPlan) -> dict[str, Any]:
    """Git replay (fsarena.aging.gitreplay) on the mounted filesystem; its record."""
    profile = plan.profile
    origin = f"{ctx.dataset(profile.repository).root}/{REPO_DIR}"
    read0, written0 = read_device_stat(ctx.device)
    started = time.monotonic()
    done = replay(origin, ctx.path(ROOT), profile)
    ctx.executor.call(ctx.profile.sync_argv(ctx.mountpoint))
    wall_s = time.monotonic() - started
    read1, written1 = read_device_stat(ctx.device)
    tree, files, live_bytes = tree_digest(ctx.path(ROOT))
    touched = files_touched(origin, done.pulled)
    # The planned tree: the last pulled commit, checked out clean.
    status = git("-C", ctx.path(ROOT), "status", "--porcelain", "--untracked-files=all")
    mark_tree(ctx.mountpoint)
    return {
        "profile": profile.model_dump(mode="json"),
        "seed": plan.seed,
        "image_size_bytes": plan.image_bytes,
        "wall_s": wall_s,
        "bytes_written": done.bytes_written,
        "bytes_written_per_s": done.bytes_written / wall_s if wall_s > 0 else None,
        "device_write_bytes": written1 - written0,
        "device_read_bytes": read1 - read0,
        "rounds": done.pulls,
        "head": done.head,
        "first_commit": done.pulled[0] if done.pulled else None,
        "files_touched": touched,
        "stopped_by": done.stopped_by,
        "files": files,
        "live_bytes": live_bytes,
        "manifest_digest": tree,
        "on_disk_matches": not status.strip(),
    }
