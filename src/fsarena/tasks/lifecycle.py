"""Tasks of the filesystem's lifecycle: mkfs, mount, umount (clean or dirty), capacity probes.

mkfs, mount and umount last 10-100 ms here, where one scheduler hiccup is a
large share: each runs SHORT_SAMPLES times per repetition, every execution
timed and kept (hyperfine's approach). mkfs is repeated on the same device
before the real one (each overwrites the last); mount and umount alternate,
the untimed opposite in between, and the last execution is the one the
sequence continues from. Caches are dropped before the first execution only:
mkfs, mount and umount read little, and a drop (sync, then drop) per sample
cost more than the samples themselves.
"""

from __future__ import annotations

from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import Check, FsState, Task, TaskContext

SHORT_SAMPLES = 5  # timed executions per repetition of a sub-second lifecycle task


class Mkfs(Task):
    """Create the filesystem on the whole target device with the profile's mkfs argv.

    Article A timed mkfs of a 20 GB partition with default options. The argv run
    is recorded with the session; the device's bytes written show how much each
    mkfs initialises up front.
    """

    name = "mkfs"
    kind = "lifecycle"
    requires = frozenset({FsState.BLANK, FsState.UNMOUNTED})
    leaves = FsState.UNMOUNTED
    samples = SHORT_SAMPLES
    formats = True

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(ctx.profile.mkfs_argv(ctx.device))]


class Mount(Task):
    """Mount the fresh filesystem with the profile's options (none: kernel defaults)."""

    name = "mount"
    kind = "lifecycle"
    requires = frozenset({FsState.UNMOUNTED})
    leaves = FsState.MOUNTED
    samples = SHORT_SAMPLES

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(ctx.mountpoint)

    def between_samples(self, ctx: TaskContext) -> None:
        ctx.executor.call(("umount", ctx.mountpoint))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(ctx.profile.mount_argv(ctx.device, ctx.mountpoint))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [Check("mounted", ctx.executor.is_mounted(ctx.mountpoint))]


class Umount(Task):
    """Unmount the clean filesystem: the time of the unmount itself, not of writeback.

    The caches are made cold before it, as before every timed task (a sync, then a
    drop or a remount), so nothing is dirty when it starts, and the 4 repeat samples
    unmount a freshly mounted filesystem: it measures a clean unmount. Writeback is
    timed where it belongs, at the end of every writing task (TaskContext.durable).
    """

    name = "umount"
    kind = "lifecycle"
    leaves = FsState.UNMOUNTED
    samples = SHORT_SAMPLES

    def between_samples(self, ctx: TaskContext) -> None:
        ctx.executor.call(ctx.profile.mount_argv(ctx.device, ctx.mountpoint))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("umount", ctx.mountpoint))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [Check("unmounted", not ctx.executor.is_mounted(ctx.mountpoint))]


DIRTY_BYTES = 64 << 20  # what umount_dirty leaves in the page cache for umount to write


class UmountDirty(Task):
    """Unmount with dirty data: the time of umount including the writeback it must do.

    What a shutdown or an eject waits for. Untimed, after the caches are made cold and
    just before the timed region, 64 MiB of random data is written to a new file with
    no sync (dd from /dev/urandom: incompressible), so the page cache holds it dirty;
    the timed `umount` writes it back and unmounts. The device's bytes written in the
    region show the writeback was timed (they are at least the 64 MiB). One sample
    per repetition. The clean unmount is `umount`'s figure.
    """

    name = "umount_dirty"
    kind = "lifecycle"
    leaves = FsState.UNMOUNTED

    def region_starts(self, ctx: TaskContext) -> None:
        # After the cold step (which syncs): the data must still be dirty when timing starts.
        ctx.executor.call(("dd", "if=/dev/urandom", f"of={ctx.path('fsarena-dirty')}",
                           "bs=1M", f"count={DIRTY_BYTES >> 20}", "status=none"))  # fmt: skip

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("umount", ctx.mountpoint))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [Check("unmounted", not ctx.executor.is_mounted(ctx.mountpoint))]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        return {"dirty_bytes": float(DIRTY_BYTES)}


class _Capacity(Task):
    """Capacity: available bytes / device bytes, in %, from statvfs (f_bavail, as df shows).

    Article A reported "available blocks / partition blocks" right after mkfs
    (initial) and after every file was deleted (residual); a filesystem whose
    residual is below its initial did not give all the space back.
    """

    kind = "space"
    timed = False

    def probe(self, ctx: TaskContext) -> dict[str, float]:
        space = ctx.executor.space(ctx.mountpoint)
        device_bytes = ctx.executor.device_size(ctx.device)
        return {
            "capacity_pct": 100.0 * space.available_bytes / device_bytes,
            "available_bytes": float(space.available_bytes),
            "device_bytes": float(device_bytes),
        }


class CapacityInitial(_Capacity):
    """Capacity right after mkfs and mount: available bytes / device bytes, in %."""

    name = "capacity_initial"


class CapacityResidual(_Capacity):
    """Capacity after everything written was deleted: available bytes / device bytes, in %."""

    name = "capacity_residual"


TASKS = (Mkfs, Mount, CapacityInitial, CapacityResidual, Umount, UmountDirty)
