"""Kernel-tarball tasks: article B's .tar copy, extract, delete, and article C's .tar.bz2 test.

Article B copied the Linux 2.4.4 source as an uncompressed .tar (`cp
linux-2.4.4.tar prova.tar`), extracted it (`tar xf`), deleted the tar, then
the tree (`rm -rf linux`). Article C copied a bzip2 tarball of a kernel tree
to the test filesystem and decompressed it there, in MB/s. The tree is
Debian's real Linux source where it can be had (see fsarena.datasets.linux_source). Here
the tarballs come from the source (the articles' second disk), so the copy
measures the test filesystem's writes; every extraction is verified file by
file against the tree's manifest.
"""

from __future__ import annotations

from fsarena.measure.collect import Command
from fsarena.tasks.base import (
    CP,
    RATE_FIRST,
    REAL_USER_SYS,
    Check,
    Task,
    TaskContext,
    Tool,
    verify_absent,
    verify_copy,
    verify_tree,
)

TAR_DIR, TREE_DIR = "ktar", "ktree"  # article B
TBZ_DIR, TBZ_TREE_DIR = "kbz2", "kbz2-tree"  # article C


def _archive(ctx: TaskContext, dataset: str, directory: str) -> str:
    (entry,) = ctx.dataset(dataset).manifest.files
    return ctx.path(directory, entry.path)


def _copy(ctx: TaskContext, dataset: str, directory: str) -> list[Command]:
    (entry,) = ctx.dataset(dataset).manifest.files
    src = f"{ctx.dataset(dataset).root}/{entry.path}"
    return [Command((*CP, src, ctx.path(directory) + "/"))]


class KernelTarCopy(Task):
    """Copy the kernel source .tar from the source onto the test filesystem (cp + syncfs).

    Verified against the tarball's checksum.
    """

    name = "kernel_tar_copy"
    kind = "large_files"
    writes = True
    datasets = ("kernel", "kernel_tar")
    columns = REAL_USER_SYS
    payload = "write"

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(ctx.path(TAR_DIR))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return _copy(ctx, "kernel_tar", TAR_DIR)

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "kernel_tar", ctx.path(TAR_DIR))]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("kernel_tar").manifest.total_bytes


class _Extract(Task):
    """Extract a kernel tarball on the test filesystem, verified file by file against the tree.

    The tarball is put there untimed if no copy task ran. Subclasses name the
    archive's dataset, its directory, the tree's directory and tar's mode.
    """

    tools = (
        Tool("tar", "tar"),
        Tool("bzip2", "bzip2"),
    )

    writes = True
    payload = "write"
    archive_dataset: str
    archive_dir: str
    tree_dir: str
    tar_mode: str  # "-xf", "-xjf"

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(ctx.path(self.tree_dir))
        if not ctx.executor.exists(_archive(ctx, self.archive_dataset, self.archive_dir)):
            ctx.executor.make_dir(ctx.path(self.archive_dir))
            for cmd in _copy(ctx, self.archive_dataset, self.archive_dir):
                ctx.executor.call(cmd.argv)

    def commands(self, ctx: TaskContext) -> list[Command]:
        archive = _archive(ctx, self.archive_dataset, self.archive_dir)
        flags = ctx.profile.tar_extract_flags()  # no chown/chmod where there are no owners
        return [Command(("tar", self.tar_mode, archive, *flags, "-C", ctx.path(self.tree_dir)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        root = ctx.path(self.tree_dir, ctx.dataset("kernel").manifest.name)
        return [verify_tree(ctx, "kernel", root, "extraction")]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("kernel").manifest.total_bytes


class KernelTarExtract(_Extract):
    """Extract the .tar on the test filesystem (`tar xf`, then syncfs).

    Reads one large file while creating a large tree of small ones; the tree
    is verified file by file. The tar is put there untimed if no copy task ran.
    """

    name = "kernel_tar_extract"
    kind = "file_trees"
    datasets = ("kernel", "kernel_tar")
    columns = REAL_USER_SYS
    archive_dataset, archive_dir, tree_dir, tar_mode = "kernel_tar", TAR_DIR, TREE_DIR, "-xf"


class KernelTarDelete(Task):
    """Delete the .tar (`rm -f`), syncfs included."""

    name = "kernel_tar_delete"
    kind = "large_files"
    writes = True
    datasets = ("kernel", "kernel_tar")
    columns = REAL_USER_SYS

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-f", _archive(ctx, "kernel_tar", TAR_DIR)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, _archive(ctx, "kernel_tar", TAR_DIR))]


class KernelTreeDelete(Task):
    """Delete the extracted tree (`rm -rf`), syncfs included (article B: XFS slowest by far)."""

    name = "kernel_tree_delete"
    kind = "file_trees"
    writes = True
    datasets = ("kernel",)
    columns = REAL_USER_SYS

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-rf", ctx.path(TREE_DIR)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, ctx.path(TREE_DIR))]


class KernelBz2Copy(Task):
    """Copy the kernel tree's .tar.bz2 onto the test filesystem (cp + syncfs), in MB/s."""

    name = "kernel_bz2_copy"
    kind = "large_files"
    writes = True
    datasets = ("kernel", "kernel_tbz")
    columns = RATE_FIRST
    payload = "write"

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(ctx.path(TBZ_DIR))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return _copy(ctx, "kernel_tbz", TBZ_DIR)

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "kernel_tbz", ctx.path(TBZ_DIR))]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("kernel_tbz").manifest.total_bytes


class KernelBz2Extract(_Extract):
    """Decompress the .tar.bz2 there (`tar xjf`, then syncfs), in MB/s of the tree (article C).

    bzip2 decompression is single-threaded and CPU-bound, so this mostly
    measures the CPU; the filesystem shows in the remaining difference. The
    tree is verified file by file.
    """

    name = "kernel_bz2_extract"
    kind = "archives"
    datasets = ("kernel", "kernel_tbz")
    columns = RATE_FIRST
    archive_dataset, archive_dir, tree_dir, tar_mode = "kernel_tbz", TBZ_DIR, TBZ_TREE_DIR, "-xjf"

    def cleanup(self, ctx: TaskContext) -> None:
        # Article C's closing `rm -fr $DIR/*`: what later tasks do not need goes.
        for d in (TBZ_DIR, TBZ_TREE_DIR):
            ctx.executor.remove_path(ctx.path(d))


TASKS = (
    KernelTarCopy,
    KernelTarExtract,
    KernelTarDelete,
    KernelTreeDelete,
    KernelBz2Copy,
    KernelBz2Extract,
)
