"""Article D's small files: create (by a generator), compress, decompress, move, delete.

Creation must measure the filesystem, not the harness: the files are made by
fsarena-mkfiles, a small C program (native/mkfiles.c) that reads the whole
layout and the content pool before creating anything, then only mkdir,
open, write and close. bench/smallfiles_rate.py compares its rate with a
bare C loop. The layout and the content come from the seeded SmallFilesSpec,
so the created tree is verified byte for byte against its manifest.
"""

from __future__ import annotations

from typing import ClassVar

from fsarena.datasets.realistic import SmallFilesSpec
from fsarena.measure.collect import Command, Measurement
from fsarena.measure.native import native_tool
from fsarena.tasks.base import REAL_USER_SYS, Check, Task, TaskContext, verify_tree
from fsarena.tasks.treeblock import Block, BlockCompress, BlockDecompress, BlockDelete, BlockMove

SMALL = Block(
    "smallfiles", "smallfiles", "smallfiles.tar.gz", "smallfiles-unpacked", "smallfiles-moved"
)


def _inputs(ctx: TaskContext) -> tuple[str, str]:
    return f"{ctx.scratch}/smallfiles.layout", f"{ctx.scratch}/smallfiles.pool"


def write_inputs(ctx: TaskContext) -> None:
    """Untimed: the generator's layout and content pool, in the scratch directory."""
    spec = ctx.parameters(SmallFilesSpec, "smallfiles")
    layout, pool = _inputs(ctx)
    ctx.executor.write_file(layout, spec.layout_text().encode())
    ctx.executor.write_file(pool, spec.pool())


def create_command(ctx: TaskContext) -> Command:
    layout, pool = _inputs(ctx)
    return Command((native_tool("mkfiles"), layout, pool, ctx.path(SMALL.copy)))


class _Small:
    block: ClassVar[Block] = SMALL
    datasets: ClassVar[tuple[str, ...]] = ("smallfiles",)

    def ensure_tree(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(SMALL.copy)):
            write_inputs(ctx)
            ctx.executor.call(create_command(ctx).argv)


class SmallfilesCreate(Task):
    """Create the small files with the native generator (mkdir, open, write, close), then syncfs.

    60,000 files of a few kB in 1,200 directories at scale 1 (article D did
    not publish its generator's parameters); verified byte for byte.
    """

    name = "smallfiles_create"
    kind = "small_files"
    writes = True
    datasets = ("smallfiles",)
    columns = (*REAL_USER_SYS, "files_per_s")

    def prepare(self, ctx: TaskContext) -> None:
        write_inputs(ctx)
        ctx.executor.remove_path(ctx.path(SMALL.copy))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [create_command(ctx)]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_tree(ctx, "smallfiles", ctx.path(SMALL.copy), "creation")]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        wall = measurement.wall_s
        files = len(ctx.dataset("smallfiles").manifest.files)
        return {"files_per_s": files / wall} if wall > 0 else {}

    def cleanup(self, ctx: TaskContext) -> None:
        for path in _inputs(ctx):
            ctx.executor.remove_path(path)


class SmallfilesCompress(_Small, BlockCompress):
    """Compress the small files (`tar czf`, then syncfs); the archive's listing is checked."""

    name = "smallfiles_compress"


class SmallfilesDecompress(_Small, BlockDecompress):
    """Decompress them into another directory (`tar xzf`, then syncfs); verified."""

    name = "smallfiles_decompress"


class SmallfilesMove(_Small, BlockMove):
    """Move the decompressed directory (`mv`, a rename), syncfs included."""

    name = "smallfiles_move"
    kind = "small_files"


class SmallfilesDelete(_Small, BlockDelete):
    """Delete every copy of the small files and the archive (`rm -rf`), syncfs included."""

    name = "smallfiles_delete"
    kind = "small_files"


TASKS = (
    SmallfilesCreate,
    SmallfilesCompress,
    SmallfilesDecompress,
    SmallfilesMove,
    SmallfilesDelete,
)
