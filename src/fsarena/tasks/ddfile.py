"""Article B's large-file test: dd write (synced and as the article timed it), cold read, rm.

Article B wrote `dd if=/dev/zero of=./prova bs=1M count=256`, read it back
with `dd if=./prova of=/dev/null bs=1M count=256`, and found every
filesystem but FAT32 slower to read than to write. Its writes were timed
without a sync: the page cache absorbed them, and the author's "reads" were
the first to wait for the disk. fsarena times the write both ways
(dd_write_synced includes syncfs; dd_write_unsynced is the article's
measurement), and reads with cold caches, so the report shows why.
"""

from __future__ import annotations

from typing import ClassVar

from fsarena.datasets.realistic import SizeSpec
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import REAL_USER_SYS, Check, Task, TaskContext, Tool, verify_absent

SYNCED = "prova"
UNSYNCED = "prova-unsynced"
MIB = 1 << 20


def _size(ctx: TaskContext) -> SizeSpec:
    spec = ctx.dataset("dd").spec
    if not isinstance(spec, SizeSpec):
        raise FsarenaError("dataset 'dd' must be a size (kind = \"size\")")
    return spec


def dd_write(ctx: TaskContext, name: str) -> Command:
    count = _size(ctx).size_mib
    return Command(("dd", "if=/dev/zero", f"of={ctx.path(name)}", "bs=1M", f"count={count}"))


def check_written(ctx: TaskContext, name: str) -> Check:
    """The file holds the full size in zeros (`cmp -n SIZE FILE /dev/zero`, untimed).

    cmp fails on a shorter file ("EOF on FILE") as on a differing byte.
    """
    size = _size(ctx).size_mib * MIB
    try:
        ctx.executor.output(("cmp", "-n", str(size), ctx.path(name), "/dev/zero"))
    except FsarenaError as exc:
        return Check("file written", False, str(exc))
    return Check("file written", True, f"{size:,} bytes of zeros")


class _DdWrite(Task):
    tools = (Tool("dd", "coreutils"),)
    kind = "large_files"
    datasets = ("dd",)
    columns: ClassVar[tuple[str, ...] | None] = REAL_USER_SYS
    file: str

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(ctx.path(self.file))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [dd_write(ctx, self.file)]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [check_written(ctx, self.file)]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return _size(ctx).size_bytes


class DdWriteSynced(_DdWrite):
    """Write the file with `dd if=/dev/zero bs=1M` (256 MiB at scale 1), syncfs included.

    The honest write time: the data is on the device when the clock stops.
    """

    name = "dd_write_synced"
    writes = True
    payload = "write"
    file = SYNCED


class DdWriteUnsynced(_DdWrite):
    """Write another such file with dd, timed as article B did: no sync (the page cache absorbs it).

    Compare with dd_write_synced: the difference is what the article's
    "writes faster than reads" really measured. The data is written back
    (untimed) before the next task.
    """

    name = "dd_write_unsynced"
    writes = False
    kind = "demonstration"  # the page cache's speed: shown, never a vote (analysis.kinds)
    # Not compared with the device's ceiling: this is the page cache's speed, on purpose
    # (the article's mistake shown beside the honest figure). Its throughput is still shown.
    columns = (*REAL_USER_SYS, "throughput_bytes_per_s")

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        return {"payload_bytes": float(self.payload_bytes(ctx))}

    file = UNSYNCED


class DdRead(Task):
    """Read the synced file back with `dd of=/dev/null bs=1M`, caches dropped first.

    If no earlier task wrote it, it is written (untimed) in preparation.
    """

    tools = (Tool("dd", "coreutils"),)

    name = "dd_read"
    kind = "large_files"
    datasets = ("dd",)
    columns = REAL_USER_SYS
    payload = "read"

    def prepare(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(SYNCED)):
            ctx.executor.call(dd_write(ctx, SYNCED).argv)
            ctx.sync()

    def commands(self, ctx: TaskContext) -> list[Command]:
        count = _size(ctx).size_mib
        return [
            Command(("dd", f"if={ctx.path(SYNCED)}", "of=/dev/null", "bs=1M", f"count={count}"))
        ]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [check_written(ctx, SYNCED)]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return _size(ctx).size_bytes


class DdDelete(Task):
    """Delete the file (`rm -f`), syncfs included; the unsynced copy is removed first, untimed."""

    name = "dd_delete"
    kind = "large_files"
    writes = True
    datasets = ("dd",)
    columns = REAL_USER_SYS

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(ctx.path(UNSYNCED))
        ctx.sync()

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-f", ctx.path(SYNCED)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, ctx.path(SYNCED))]


TASKS = (DdWriteSynced, DdWriteUnsynced, DdRead, DdDelete)
