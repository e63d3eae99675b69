"""Cold caches before a timed run: of the filesystem under test only, or of the whole machine.

The method the articles' lesson asks for (what-users-ask.md) is that a timed
task finds nothing of its filesystem in memory. The machine-wide way, sync(2)
then `echo 3 > /proc/sys/vm/drop_caches`, walks every inode of every
filesystem of the machine: measured here 0.13-0.32 s per drop even with
nothing to drop, 15 drops per sequence, a quarter of a default run's own time
(issue 14), and it empties everyone else's caches on a shared machine.

Per filesystem instead (`FILESYSTEM`): a mounted filesystem under test is
unmounted and mounted again, which ends its superblock and with it every
page, dentry and inode it had cached; its device's own cache (metadata read
through the block device) is then written back and dropped (BLKFLSBUF).
Before mkfs and mount the filesystem is not mounted, so only the device's
cache is flushed. Tests (tests/integration/test_cold_cache.py) read files
after it on a real loop device and count device reads equal to their size.

The machine-wide drop remains where the per-filesystem one cannot reach
everything a task reads (`MACHINE`): datasets on an image source (its pages
are cached), a filesystem run through FUSE or a guest kernel, a target whose
device something else still holds (a copy of the mount in another mount
namespace keeps the superblock alive: detected, never assumed), a filesystem
that cannot be unmounted (a server a task started holds it), and a loop device
that reads its image through the host's page cache.
"""

from __future__ import annotations

from fsarena.errors import FsarenaError
from fsarena.host.executor import Executor
from fsarena.tasks import TaskContext

FILESYSTEM = (
    "cold caches per filesystem before every timed task: the filesystem under test "
    "unmounted and mounted again (its page, dentry and inode caches end with it), its "
    "device's cache written back and dropped (BLKFLSBUF); sync + drop_caches of the whole "
    "machine where that cannot reach all a task reads"
)
MACHINE = "sync + drop_caches of the whole machine before every timed task"


def per_filesystem(ctx: TaskContext, source_kind: str) -> bool:
    """Whether a remount and a device flush empty every cache a task of ctx could read.

    A tmpfs source holds the datasets in memory by design (no drop reaches them);
    an image source's pages are cached, so it needs the machine-wide drop.
    """
    return ctx.profile.driver == "kernel" and ctx.profile.on_device and source_kind == "tmpfs"


def make_cold(host: Executor, ctx: TaskContext, mounted: bool, per_fs: bool) -> None:
    """Empty the caches the next timed execution could hit (see the module's docstring)."""
    if not per_fs:
        ctx.executor.drop_caches()
        return
    if mounted:
        try:
            ctx.executor.call(("umount", ctx.mountpoint))
        except FsarenaError:  # in use (a server a task started): the machine-wide way
            ctx.executor.drop_caches()
            return
    try:
        if not host.flush_device(ctx.device):
            host.drop_caches()  # something still holds the device: the machine-wide way
    except FsarenaError:
        if mounted:
            ctx.executor.call(ctx.profile.mount_argv(ctx.device, ctx.mountpoint))
        raise
    # Not after a stop signal (a finally did it): teardown unmounts anyway, and a mount
    # that failed then replaced the KeyboardInterrupt, recording a failed run that was none.
    if mounted:
        ctx.executor.call(ctx.profile.mount_argv(ctx.device, ctx.mountpoint))
