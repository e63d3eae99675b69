"""Article D's five operations on a tree, shared by the Portage tree and the small files.

For each tree: compress (`tar czf`), decompress (`tar xzf` into another
directory), move (`mv` of that directory, a rename within the filesystem, as
the article's 0.1 s timings show), delete (`rm -rf` of every copy and the
archive). Each step checks its result: the archive lists exactly the tree's
files and directories (reading it whole also checks gzip's CRC), the
extraction and the moved tree match the manifest byte for byte, deleted
paths are gone. A step whose input an earlier task did not leave (a suite
may pick single tasks) prepares it untimed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fsarena.measure.collect import Command
from fsarena.tasks.base import (
    CP,
    REAL_USER_SYS,
    Check,
    Task,
    TaskContext,
    Tool,
    verify_absent,
    verify_tree,
)


@dataclass(frozen=True)
class Block:
    """Where one tree's copies live on the test filesystem."""

    dataset: str
    copy: str  # the tree itself (named like the dataset's root)
    archive: str
    unpacked: str
    moved: str

    def root(self, ctx: TaskContext) -> str:
        return ctx.dataset(self.dataset).manifest.name


class _BlockTask(Task):
    tools = (
        Tool("tar", "tar"),
        Tool("gzip", "gzip"),
        Tool("mv", "coreutils"),
    )
    block: ClassVar[Block]
    writes = True
    columns = REAL_USER_SYS

    def ensure_tree(self, ctx: TaskContext) -> None:
        """Untimed: make sure the tree is at block.copy (copied or generated)."""
        raise NotImplementedError

    def ensure_archive(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(self.block.archive)):
            self.ensure_tree(ctx)
            ctx.executor.call(compress_argv(ctx, self.block))

    def ensure_unpacked(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(self.block.unpacked, self.block.root(ctx))):
            self.ensure_tree(ctx)
            ctx.executor.make_dir(ctx.path(self.block.unpacked))
            ctx.executor.call((*CP, "-r", ctx.path(self.block.copy), ctx.path(self.block.unpacked)))


def compress_argv(ctx: TaskContext, block: Block) -> tuple[str, ...]:
    return ("tar", "-czf", ctx.path(block.archive), "-C", ctx.mountpoint, block.copy)


def archive_listing_check(ctx: TaskContext, block: Block) -> Check:
    """`tar -tzf` lists exactly the tree's directories and files (and decompresses it all)."""
    manifest = ctx.dataset(block.dataset).manifest
    top = block.copy
    expected = {f"{top}/"} | {f"{top}/{d}/" for d in manifest.directories}
    expected |= {f"{top}/{f.path}" for f in manifest.files}
    listed = set(ctx.executor.output(("tar", "-tzf", ctx.path(block.archive))).splitlines())
    missing, extra = len(expected - listed), len(listed - expected)
    return Check(
        "archive lists the tree",
        not missing and not extra,
        f"{len(listed)} entries; {missing} missing, {extra} unexpected",
    )


class BlockCompress(_BlockTask):
    kind = "archives"

    def prepare(self, ctx: TaskContext) -> None:
        self.ensure_tree(ctx)
        ctx.executor.remove_path(ctx.path(self.block.archive))
        ctx.sync()

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(compress_argv(ctx, self.block))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [archive_listing_check(ctx, self.block)]


class BlockDecompress(_BlockTask):
    kind = "archives"

    def prepare(self, ctx: TaskContext) -> None:
        self.ensure_archive(ctx)
        ctx.executor.remove_path(ctx.path(self.block.unpacked))
        ctx.executor.make_dir(ctx.path(self.block.unpacked))
        ctx.sync()

    def commands(self, ctx: TaskContext) -> list[Command]:
        archive = ctx.path(self.block.archive)
        flags = ctx.profile.tar_extract_flags()  # no chown/chmod where there are no owners
        return [Command(("tar", "-xzf", archive, *flags, "-C", ctx.path(self.block.unpacked)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        root = ctx.path(self.block.unpacked, self.block.root(ctx))
        return [verify_tree(ctx, self.block.dataset, root, "extraction")]


class BlockMove(_BlockTask):
    def prepare(self, ctx: TaskContext) -> None:
        self.ensure_unpacked(ctx)
        ctx.executor.remove_path(ctx.path(self.block.moved))
        ctx.sync()

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("mv", ctx.path(self.block.unpacked), ctx.path(self.block.moved)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        root = ctx.path(self.block.moved, self.block.root(ctx))
        return [
            verify_tree(ctx, self.block.dataset, root, "moved tree"),
            verify_absent(ctx, ctx.path(self.block.unpacked)),
        ]


class BlockDelete(_BlockTask):
    def paths(self, ctx: TaskContext) -> list[str]:
        b = self.block
        return [ctx.path(p) for p in (b.copy, b.unpacked, b.moved, b.archive)]

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-rf", *self.paths(ctx)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, *self.paths(ctx))]
