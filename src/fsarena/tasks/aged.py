"""Tasks on the aged tree: its layout (probe), and the reads that expose it (Conway, FAST '17).

With `--age`, every filesystem runs these both aged (on the tree the aging
left) and fresh (on the same file set written in one pass, sorted by path,
onto the fresh filesystem: Conway's "clean" copy, made here by writing rather
than `cp -a`, which gives the same file set and a sequential first layout; after
git replay, the host's replay copied with `cp -a`, as Conway did).
Caches are dropped before each timed read, so the reads go to the device.
"""

from __future__ import annotations

import os

from fsarena.aging.gitreplay import HOST_COPY, reference
from fsarena.aging.layout import free_space, tree_layout
from fsarena.aging.workload import MARK, ROOT, AgingPlan, Writer, mark_tree
from fsarena.datasets.gitrepo import REPO_DIR
from fsarena.errors import FsarenaError
from fsarena.measure.core import Command
from fsarena.tasks.base import Task, TaskContext


def aging_of(ctx: TaskContext) -> AgingPlan:
    if ctx.aging is None:
        raise FsarenaError("the aged-tree tasks need --age PROFILE (or age = ... in the suite)")
    if ctx.profile.driver == "guest":
        raise FsarenaError("the aged-tree tasks write the tree from the host; not in a guest")
    return ctx.aging


def ensure_tree(ctx: TaskContext) -> None:
    """Untimed: on a fresh filesystem, write the aged file set in one sorted pass."""
    plan = aging_of(ctx)
    root = ctx.path(ROOT)
    if os.path.exists(ctx.path(MARK)):
        return
    if os.path.exists(root):
        raise FsarenaError(f"{root} exists but is incomplete; the tree was not written whole")
    if plan.profile.kind == "git-replay":
        _clean_copy(ctx, plan)
        return
    writer = Writer(plan, root)
    os.makedirs(root)
    for d in plan.directories():
        os.mkdir(f"{root}/{d}")
    final = plan.final()
    for path in sorted(final):
        writer.write(final[path])
    mark_tree(ctx.mountpoint)
    ctx.executor.call(ctx.profile.sync_argv(ctx.mountpoint))


def _clean_copy(ctx: TaskContext, plan: AgingPlan) -> None:
    """Conway's clean copy: the replay done once on the host, `cp -a` onto the fresh filesystem."""
    origin = f"{ctx.dataset(plan.profile.repository).root}/{REPO_DIR}"
    # In the ledger before it exists: `fsarena cleanup` removes it after a crash, and the
    # run removes it when it ends (fsarena.run.aged.remove_snapshots).
    ctx.executor.track("tree", f"{ctx.scratch}/{HOST_COPY}")
    replayed = reference(origin, ctx.scratch, plan.profile)
    ctx.executor.call(("cp", "-a", replayed, ctx.path(ROOT)))
    mark_tree(ctx.mountpoint)
    ctx.executor.call(ctx.profile.sync_argv(ctx.mountpoint))


class AgedLayout(Task):
    """The aged tree's layout, untimed: FIEMAP extents per file, the static layout score in
    traversal order, and free-space fragmentation from the filesystem's own tool.

    See fsarena.aging.layout for the definitions; on a loop image the layout is
    the loop device's, i.e. offsets within the image file.
    """

    name = "aged_layout"
    kind = "layout"
    timed = False
    columns = (
        "extents_per_file",
        "fragmented_files_pct",
        "layout_score",
        "free_extents",
        "free_extent_mean_bytes",
    )

    def prepare(self, ctx: TaskContext) -> None:
        ensure_tree(ctx)

    def probe(self, ctx: TaskContext) -> dict[str, float]:
        values = tree_layout(ctx.path(ROOT)).values()
        block = os.statvfs(ctx.mountpoint).f_frsize
        ctx.executor.call(ctx.profile.sync_argv(ctx.mountpoint))
        return {**values, **free_space(ctx.profile, ctx.executor, ctx.device, block)}


class _AgedRead(Task):
    kind = "aged_reads"

    def prepare(self, ctx: TaskContext) -> None:
        ensure_tree(ctx)

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("sh", "-c", self.script(ctx)))]

    def script(self, ctx: TaskContext) -> str:
        raise NotImplementedError


class AgedGrep(_AgedRead):
    """Cold `grep -r` over the whole aged tree for a string it does not hold (Conway's measure).

    grep reads every byte of every file in traversal order; exit status 1 (not
    found) is success, anything else a failure.
    """

    name = "aged_grep"

    def script(self, ctx: TaskContext) -> str:
        needle = f"fsarena{aging_of(ctx).seed:x}QZXJ"
        return f"grep -r -F -q {needle} '{ctx.path(ROOT)}'; test $? -eq 1"


class AgedTar(_AgedRead):
    """`tar -c` of the whole aged tree, read in traversal order, through a pipe.

    Through a pipe, not to /dev/null: GNU tar skips reading file contents when
    its archive is /dev/null.
    """

    name = "aged_tar"

    def script(self, ctx: TaskContext) -> str:
        return f"tar -C '{ctx.mountpoint}' -cf - {ROOT} | cat > /dev/null"


class AgedCat(_AgedRead):
    """`find -type f | xargs cat` of the whole aged tree: every file read in find's order."""

    name = "aged_cat"

    def script(self, ctx: TaskContext) -> str:
        return f"find '{ctx.path(ROOT)}' -type f -print0 | xargs -0 cat > /dev/null"


AGED_TASKS = (AgedLayout, AgedGrep, AgedTar, AgedCat)
