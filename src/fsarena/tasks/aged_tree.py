"""Tasks on the aged tree: its layout (probe), and the reads that expose it (Conway, FAST '17).

With `--age`, every filesystem runs these both aged (on the tree the aging
left) and fresh (on the same file set written in one pass, sorted by path,
onto the fresh filesystem: Conway's "clean" copy, made here by writing rather
than `cp -a`, which gives the same file set and a sequential first layout; after
git replay, the host's replay copied with `cp -a`, as Conway did). The tree is
written and its layout read where the filesystem is mounted (aging.runtime:
inside a guest kernel for one it runs); git replay's tasks are skipped in guests.
Caches are dropped before each timed read, so the reads go to the device.
"""

from __future__ import annotations

import os
from typing import Any

from fsarena.aging import runtime
from fsarena.aging.gitreplay import HOST_COPY, reference
from fsarena.aging.layout import free_space
from fsarena.aging.runtime import guest_unsupported as guest_cannot
from fsarena.aging.workload import MARK, ROOT, AgingPlan, mark_tree
from fsarena.datasets.gitrepo import REPO_DIR
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command
from fsarena.tasks.base import Task, TaskContext, Tool

LAYOUT_TIMEOUT_S = 600.0  # FIEMAP of every file of the tree, in a slow guest


def aging_of(ctx: TaskContext) -> AgingPlan:
    if ctx.aging is None:
        raise FsarenaError("the aged-tree tasks need --age PROFILE (or age = ... in the suite)")
    return ctx.aging


def guest_unsupported(ctx: TaskContext) -> str:
    """Why the aged-tree tasks cannot run on this filesystem's runtime ("" when they can)."""
    if ctx.aging is None or not ctx.profile.guest:
        return ""
    return guest_cannot(ctx.aging.profile)


def ensure_tree(ctx: TaskContext) -> None:
    """Untimed: on a fresh filesystem, write the aged file set in one sorted pass.

    Written where the filesystem is mounted (aging.runtime: here, or in its guest).
    """
    plan = aging_of(ctx)
    if plan.profile.kind == "git-replay":
        if os.path.exists(ctx.path(MARK)):
            return
        if os.path.exists(ctx.path(ROOT)):
            raise FsarenaError(f"{ctx.path(ROOT)} exists but is incomplete; not written whole")
        _clean_copy(ctx, plan)
        return
    runtime.run(
        ctx.executor,
        "clean_tree",
        runtime.age_timeout(plan),
        plan=runtime.plan_args(plan),
        mountpoint=ctx.mountpoint,
        sync_argv=list(ctx.profile.sync_argv(ctx.mountpoint)),
    )


def _clean_copy(ctx: TaskContext, plan: AgingPlan) -> None:
    """Conway's clean copy: the replay done once on the host, `cp -a` onto the fresh filesystem."""
    origin = f"{ctx.dataset(plan.profile.repository).root}/{REPO_DIR}"
    # In the ledger before it exists: `fsarena cleanup` removes it after a crash, and the
    # run removes it when it ends (fsarena.run.aging_phase.remove_snapshots).
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

    def unsupported(self, ctx: TaskContext) -> str:
        return guest_unsupported(ctx)

    def prepare(self, ctx: TaskContext) -> None:
        ensure_tree(ctx)

    def __init__(self) -> None:
        self._details: dict[str, Any] = {}

    def probe(self, ctx: TaskContext) -> dict[str, float]:
        sync = list(ctx.profile.sync_argv(ctx.mountpoint))
        found = runtime.run(
            ctx.executor, "layout", LAYOUT_TIMEOUT_S, mountpoint=ctx.mountpoint, sync_argv=sync
        )
        # No figure where the filesystem gives none, and the reason kept with the run.
        self._details = {"no_extents": found["no_extents"]} if found["no_extents"] else {}
        free = free_space(ctx.profile, ctx.executor, ctx.device, int(found["block_bytes"]))
        return {**found["values"], **free}

    def details(self) -> dict[str, Any]:
        return self._details


class _AgedRead(Task):
    tools = (Tool("tar", "tar"),)
    kind = "aged_reads"

    def unsupported(self, ctx: TaskContext) -> str:
        return guest_unsupported(ctx)

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


# This module's tasks: also what --age adds to a suite, in this order (plan.model.AGED_TASKS).
TASKS = (AgedLayout, AgedGrep, AgedTar, AgedCat)
