"""Article D's Portage tree: copy, compress, decompress, move, delete, and the space it takes.

The tree is a generated Portage-like tree (fsarena.plan.catalog.PORTAGE: many
small ebuilds, Manifests and metadata files plus some larger patches and
source, text-like and compressible), 354 MiB at scale 1 as the article's.
"""

from __future__ import annotations

from typing import ClassVar

from fsarena.datasets.verify import verify_where
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command
from fsarena.tasks.base import CP, REAL_USER_SYS, Check, Task, TaskContext, Tool, verify_copy
from fsarena.tasks.treeblock import Block, BlockCompress, BlockDecompress, BlockDelete, BlockMove

PORTAGE = Block("portage", "portage", "portage.tar.gz", "portage-unpacked", "portage-moved")
SPACE_DIR = "portage-space"


def parse_du_total(text: str) -> int:
    """Bytes from `du -s -B1 [--apparent-size] PATH` (the number before the tab)."""
    try:
        first = text.strip().splitlines()[0]
        return int(first.split("\t", 1)[0])
    except (IndexError, ValueError):
        raise FsarenaError(f"unexpected du output: {text[:200]!r}") from None


class _Portage:
    block: ClassVar[Block] = PORTAGE
    datasets: ClassVar[tuple[str, ...]] = ("portage",)

    def ensure_tree(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(PORTAGE.copy)):
            ctx.executor.call((*CP, "-r", ctx.dataset("portage").root, ctx.path(PORTAGE.copy)))


class PortageCopy(Task):
    """Copy the Portage tree from the source onto the test filesystem (`cp -r`, then syncfs).

    Verified file by file against the manifest.
    """

    name = "portage_copy"
    kind = "file_trees"
    writes = True
    datasets = ("portage",)
    columns = REAL_USER_SYS

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command((*CP, "-r", ctx.dataset("portage").root, ctx.path(PORTAGE.copy)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "portage", ctx.path(PORTAGE.copy))]


class PortageCompress(_Portage, BlockCompress):
    """Compress the tree on the test filesystem (`tar czf portage.tar.gz portage`, then syncfs)."""

    name = "portage_compress"


class PortageDecompress(_Portage, BlockDecompress):
    """Decompress the archive into another directory (`tar xzf`, then syncfs); verified."""

    name = "portage_decompress"


class PortageMove(_Portage, BlockMove):
    """Move the decompressed tree's directory (`mv`, a rename), syncfs included."""

    name = "portage_move"
    kind = "file_trees"


class PortageDelete(_Portage, BlockDelete):
    """Delete every copy of the tree and the archive (`rm -rf`), syncfs included."""

    name = "portage_delete"
    kind = "file_trees"


class PortageSpace(Task):
    """Space taken by the tree: df used before and after copying it, du, du --apparent-size.

    Untimed. On the fresh filesystem (run it before the other Portage tasks,
    as article D measured right after mkfs): df's used bytes (statvfs, as df
    computes them), a copy of the tree (synced), df again; the difference is
    data plus metadata; `du -s -B1` counts the blocks of the files,
    `du -s -B1 --apparent-size` their bytes; overhead = difference −
    apparent size. The copy is then removed.
    """

    tools = (Tool("du", "coreutils"),)

    name = "portage_space"
    kind = "space"
    timed = False
    datasets = ("portage",)
    # The headline (first) is what the tree cost: df after minus before. The article
    # printed "before" first, but an empty filesystem's df says nothing of efficiency.
    columns = (
        "df_used_difference_bytes",
        "df_used_before_bytes",
        "df_used_after_bytes",
        "du_bytes",
        "du_apparent_bytes",
        "space_overhead_bytes",
    )

    def _used(self, ctx: TaskContext) -> int:
        space = ctx.executor.space(ctx.mountpoint)
        return space.total_bytes - space.free_bytes

    def probe(self, ctx: TaskContext) -> dict[str, float]:
        where = ctx.path(SPACE_DIR)
        before = self._used(ctx)
        ctx.executor.call((*CP, "-r", ctx.dataset("portage").root, where))
        ctx.sync()
        after = self._used(ctx)
        copied = verify_where(ctx.executor, ctx.dataset("portage").manifest, where)
        if not copied.ok:
            raise FsarenaError(
                f"copy of portage for the space probe: {'; '.join(copied.problems[:3])}"
            )
        du = parse_du_total(ctx.executor.output(("du", "-s", "-B1", where)))
        apparent = parse_du_total(
            ctx.executor.output(("du", "-s", "-B1", "--apparent-size", where))
        )
        ctx.executor.remove_path(where)
        ctx.sync()
        return {
            "df_used_before_bytes": float(before),
            "df_used_after_bytes": float(after),
            "df_used_difference_bytes": float(after - before),
            "du_bytes": float(du),
            "du_apparent_bytes": float(apparent),
            "space_overhead_bytes": float(after - before - apparent),
        }


TASKS = (PortageSpace, PortageCopy, PortageCompress, PortageDecompress, PortageMove, PortageDelete)
