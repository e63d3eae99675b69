"""Article C's "real data" test: a 2 GB ISO copied from one directory to another and back.

The article's script: `mkdir bench1 bench2; cp bigfile.iso bench1; time cp
-r bench1/* bench2; rm -fr bench1/*; time cp -r bench2/* bench1; rm -fr
$DIR/*`. fsarena does the same: the untimed steps in preparation, each timed
copy followed by syncfs (the article's copies were not synced) and checked
against the ISO's checksum; the result is in MB/s, as the article printed.
The report compares it with bonnie++'s block-write rate: the article's
"theory vs practice" gap.
"""

from __future__ import annotations

from fsarena.measure.collect import Command
from fsarena.tasks.base import (
    CP,
    RATE_FIRST,
    Check,
    Task,
    TaskContext,
    verify_copy,
)

BENCH1, BENCH2 = "bench1", "bench2"


def _files(ctx: TaskContext) -> list[str]:
    return [f.path for f in ctx.dataset("bigiso").manifest.files]


def _copy_all(ctx: TaskContext, src: str, dst: str) -> list[Command]:
    """`cp -r SRC/* DST`: the glob expanded from the manifest (no shell in the timed region)."""
    sources = [ctx.path(src, f) for f in _files(ctx)]
    return [Command((*CP, "-r", *sources, ctx.path(dst) + "/"))]


class _BigIsoCopy(Task):
    kind = "large_files"
    writes = True
    datasets = ("bigiso",)
    columns = RATE_FIRST
    payload = "write"
    source_dir: str
    target_dir: str

    def commands(self, ctx: TaskContext) -> list[Command]:
        return _copy_all(ctx, self.source_dir, self.target_dir)

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, "bigiso", ctx.path(self.target_dir))]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("bigiso").manifest.total_bytes


class BigisoCopyThere(_BigIsoCopy):
    """`cp -r bench1/* bench2` of the 2 GB ISO (+ syncfs), in MB/s.

    Prepared untimed: bench1 and bench2 made, the ISO copied into bench1
    from the source and synced.
    """

    name = "bigiso_copy_there"
    source_dir, target_dir = BENCH1, BENCH2

    def prepare(self, ctx: TaskContext) -> None:
        for d in (BENCH1, BENCH2):
            ctx.executor.remove_path(ctx.path(d))
            ctx.executor.make_dir(ctx.path(d))
        root = ctx.dataset("bigiso").root
        sources = [f"{root}/{f}" for f in _files(ctx)]
        ctx.executor.call((*CP, *sources, ctx.path(BENCH1) + "/"))
        ctx.sync()


class BigisoCopyBack(_BigIsoCopy):
    """`cp -r bench2/* bench1` (+ syncfs), in MB/s, after `rm -fr bench1/*` (untimed).

    Both directories are removed afterwards, as the article's `rm -fr $DIR/*`.
    If bigiso_copy_there did not run, bench2 is prepared untimed.
    """

    name = "bigiso_copy_back"
    source_dir, target_dir = BENCH2, BENCH1

    def prepare(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(BENCH2)):
            BigisoCopyThere().prepare(ctx)
            ctx.executor.call(_copy_all(ctx, BENCH1, BENCH2)[0].argv)
        ctx.executor.remove_path(ctx.path(BENCH1))
        ctx.executor.make_dir(ctx.path(BENCH1))
        ctx.sync()

    def cleanup(self, ctx: TaskContext) -> None:
        for d in (BENCH1, BENCH2):
            ctx.executor.remove_path(ctx.path(d))


TASKS = (BigisoCopyThere, BigisoCopyBack)
