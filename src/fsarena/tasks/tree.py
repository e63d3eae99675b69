"""Tasks on a tree of files (article A's 7,500 files in 900 directories): copy, list, find, delete.

Article A's text lists the recursive listing and the search after the tree's
deletion, but timed them on the test disk with results that differ by
filesystem, so they ran on a tree that was there: fsarena lists and searches the
first copy before deleting both.
"""

from __future__ import annotations

from fsarena.measure.collect import Command
from fsarena.tasks.base import CP, Check, Task, TaskContext, verify_absent, verify_copy

TREE_COPIES = ("tree1", "tree2")
LISTING = "listing.txt"
FIND_PATTERN = "*.pdf"


class TreeCopyIn(Task):
    """Copy the tree from the source onto the test filesystem (`cp -r`, then syncfs).

    Verified afterwards file by file against the manifest (sizes and checksums,
    no missing and no extra files).
    """

    name = "tree_copy_in"
    kind = "file_trees"
    writes = True
    datasets = ("tree",)
    payload = "write"

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("tree").manifest.total_bytes

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command((*CP, "-r", ctx.dataset("tree").root, ctx.path(TREE_COPIES[0])))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "tree", ctx.path(TREE_COPIES[0]))]


class TreeCopyWithin(Task):
    """Copy the tree again to another place on the test filesystem (`cp -r`, then syncfs)."""

    name = "tree_copy_within"
    kind = "file_trees"
    writes = True
    datasets = ("tree",)
    payload = "write"

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("tree").manifest.total_bytes

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command((*CP, "-r", ctx.path(TREE_COPIES[0]), ctx.path(TREE_COPIES[1])))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "tree", ctx.path(TREE_COPIES[1]))]


class TreeListRecursive(Task):
    """List the whole tree recursively (`ls -lR`) and save the listing on the test filesystem.

    With cold caches, this reads every directory and inode of the tree; the
    listing is written to the test filesystem, as in article A, and synced.
    """

    name = "tree_list_recursive"
    kind = "listing_search"
    writes = True
    datasets = ("tree",)

    def commands(self, ctx: TaskContext) -> list[Command]:
        listing = ctx.path(LISTING)
        return [Command(("ls", "-lR", ctx.path(TREE_COPIES[0])), stdout_path=listing)]

    def verify(self, ctx: TaskContext) -> list[Check]:
        manifest = ctx.dataset("tree").manifest
        lines = ctx.executor.count_lines(ctx.path(LISTING))
        # ls -lR prints at least one line per file and per directory.
        need = len(manifest.files) + len(manifest.directories)
        return [Check("listing complete", lines >= need, f"{lines} lines for {need} entries")]


class TreeFindPattern(Task):
    """Find the files of the tree whose name matches a wildcard (`find DIR -name '*.pdf'`).

    With cold caches this walks every directory of the tree. The output goes
    outside the test filesystem, and the number of matches is checked against
    the manifest.
    """

    name = "tree_find_pattern"
    kind = "listing_search"
    datasets = ("tree",)
    samples = 3  # read-only and sub-second: repeated, caches dropped before each

    def between_samples(self, ctx: TaskContext) -> None:
        ctx.cold()  # every execution walks the tree with cold caches

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/find-output.txt"

    def commands(self, ctx: TaskContext) -> list[Command]:
        argv = ("find", ctx.path(TREE_COPIES[0]), "-name", FIND_PATTERN)
        return [Command(argv, stdout_path=self._output(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        found = ctx.executor.count_lines(self._output(ctx))
        expected = ctx.dataset("tree").manifest.count_matching(FIND_PATTERN)
        return [Check("matches found", found == expected, f"{found} found, {expected} expected")]


class TreeDelete(Task):
    """Delete both copies of the tree (`rm -rf`), syncfs included.

    The listing file written by tree_list_recursive is removed untimed first, so
    capacity_residual sees an empty filesystem.
    """

    name = "tree_delete"
    kind = "file_trees"
    writes = True
    datasets = ("tree",)

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(ctx.path(LISTING))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-rf", *(ctx.path(c) for c in TREE_COPIES)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, *(ctx.path(c) for c in TREE_COPIES))]


TASKS = (TreeCopyIn, TreeCopyWithin, TreeListRecursive, TreeFindPattern, TreeDelete)
