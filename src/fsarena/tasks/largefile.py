"""Tasks on one large file (article A's 700 MB ISO image): copy in, copy within, delete."""

from __future__ import annotations

from fsarena.measure.collect import Command
from fsarena.tasks.base import CP, Check, Task, TaskContext, verify_absent, verify_copy

ISO_DIRS = ("iso1", "iso2")


def _iso_file(ctx: TaskContext) -> str:
    (entry,) = ctx.dataset("iso").manifest.files
    return entry.path


class IsoCopyIn(Task):
    """Copy the ISO image from the source (the "second disk") onto the test filesystem.

    `cp SOURCE/image.iso MNT/iso1/`, then syncfs inside the timed region, so the
    time includes getting the data to the device, not only into the page cache.
    The copy is verified against the manifest's checksum afterwards.
    """

    name = "iso_copy_in"
    kind = "large_files"
    writes = True
    datasets = ("iso",)
    payload = "write"

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("iso").manifest.total_bytes

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(ctx.path(ISO_DIRS[0]))

    def commands(self, ctx: TaskContext) -> list[Command]:
        src = f"{ctx.dataset('iso').root}/{_iso_file(ctx)}"
        return [Command((*CP, src, ctx.path(ISO_DIRS[0]) + "/"))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "iso", ctx.path(ISO_DIRS[0]))]


class IsoCopyWithin(Task):
    """Copy the ISO image again to another directory of the test filesystem (cp + syncfs).

    Reads come from the device (caches were dropped), writes go to the same device.
    """

    name = "iso_copy_within"
    kind = "large_files"
    writes = True
    datasets = ("iso",)
    payload = "write"

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("iso").manifest.total_bytes

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(ctx.path(ISO_DIRS[1]))

    def commands(self, ctx: TaskContext) -> list[Command]:
        src = ctx.path(ISO_DIRS[0], _iso_file(ctx))
        return [Command((*CP, src, ctx.path(ISO_DIRS[1]) + "/"))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "iso", ctx.path(ISO_DIRS[1]))]


class IsoDelete(Task):
    """Delete both copies of the ISO image (`rm -f`), syncfs included, so freeing is on disk."""

    name = "iso_delete"
    kind = "large_files"
    writes = True
    datasets = ("iso",)

    def commands(self, ctx: TaskContext) -> list[Command]:
        files = [ctx.path(d, _iso_file(ctx)) for d in ISO_DIRS]
        return [Command(("rm", "-f", *files))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, *(ctx.path(d, _iso_file(ctx)) for d in ISO_DIRS))]


TASKS = (IsoCopyIn, IsoCopyWithin, IsoDelete)
