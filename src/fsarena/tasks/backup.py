"""Backups: a full `rsync -a --delete` of a tree onto the test filesystem, then an incremental one.

What nightly backups do (BetrFS's application suite times rsync too): the
first run copies every file; after a seeded mutation of a few per cent of the
source (files rewritten, deleted and added), the same command runs again and
is dominated by the stat of every file on both sides, plus the changed
files' data. The tree is the Portage-like text tree (many small files), or
the user's directory with --data. The source on fsarena's source stays
untouched: the mutated source is a copy in the scratch directory, made
untimed, and the incremental run is verified against the mutated manifest
(every file's size and content digest, nothing missing, nothing extra).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace

from fsarena.datasets.manifest import FileEntry, Manifest, bytes_digest
from fsarena.datasets.verify import verify_where
from fsarena.measure.collect import Command
from fsarena.tasks.base import (
    REAL_USER_SYS,
    Check,
    Task,
    TaskContext,
    Tool,
    verify_absent,
    verify_copy,
)

DATASET = "portage"
BACKUP = "backup"
MUTATED = "backup-source"  # in the scratch directory, outside the test filesystem
MUTATED_SHARE = 0.05  # of the files: 60 % rewritten, 20 % deleted, 20 % added
MUTATION_SEED = 16
RSYNC = ("rsync", "-a", "--delete")


def _full_argv(ctx: TaskContext) -> tuple[str, ...]:
    return (*RSYNC, ctx.dataset(DATASET).root + "/", ctx.path(BACKUP) + "/")


class RsyncFull(Task):
    """The first backup: `rsync -a --delete TREE/ BACKUP/` onto the test filesystem, then syncfs.

    Verified file by file against the tree's manifest.
    """

    tools = (Tool("rsync", "rsync"),)

    name = "rsync_full"
    kind = "backups"
    writes = True
    datasets = (DATASET,)
    payload = "write"
    columns = REAL_USER_SYS

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset(DATASET).manifest.total_bytes

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(_full_argv(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_copy(ctx, DATASET, ctx.path(BACKUP))]


class RsyncIncremental(Task):
    """The next night's backup: the same rsync after a seeded change of 5 % of the files.

    Untimed first: the backup exists (a full rsync if rsync_full did not run),
    and a copy of the tree outside the test filesystem (`cp -a`, mtimes kept)
    has 3 % of its files rewritten, 1 % deleted and 1 % added, chosen with a
    fixed seed. Timed: `rsync -a --delete MUTATED/ BACKUP/`, syncfs included.
    Verified against the mutated tree's manifest.
    """

    tools = (Tool("rsync", "rsync"),)

    name = "rsync_incremental"
    kind = "backups"
    writes = True
    datasets = (DATASET,)
    columns = REAL_USER_SYS
    _mutated: Manifest  # the changed source's manifest, made by prepare

    def _source(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/{MUTATED}"

    def prepare(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(BACKUP)):
            ctx.executor.call(_full_argv(ctx))
        ctx.executor.remove_path(self._source(ctx))
        ctx.executor.call(("cp", "-a", ctx.dataset(DATASET).root, self._source(ctx)))
        self._mutated = mutate(ctx, ctx.dataset(DATASET).manifest, self._source(ctx))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command((*RSYNC, self._source(ctx) + "/", ctx.path(BACKUP) + "/"))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        result = verify_where(ctx.executor, self._mutated, ctx.path(BACKUP), ctx.hash_content)
        detail = f"{result.files_checked} files, {result.bytes_checked} bytes checked"
        if not result.ok:
            detail = "; ".join(result.problems[:5])
        return [Check("backup matches the changed source", result.ok, detail)]

    def cleanup(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(self._source(ctx))


def mutate(ctx: TaskContext, manifest: Manifest, root: str) -> Manifest:
    """Rewrite, delete and add a seeded few per cent of the files under root; the new manifest."""
    rng = random.Random(MUTATION_SEED)
    files = {f.path: f for f in manifest.files}
    count = max(5, round(len(files) * MUTATED_SHARE))
    chosen = rng.sample(sorted(files), min(count, len(files)))
    cut = len(chosen) * 3 // 5
    for path in chosen[:cut]:  # rewritten: new bytes, a little longer, a new mtime
        data = _content(path, files[path].size_bytes + 100)
        ctx.executor.write_file(f"{root}/{path}", data)
        files[path] = FileEntry(path, len(data), bytes_digest(data))
    for path in chosen[cut : cut + (len(chosen) - cut) // 2]:
        ctx.executor.remove_path(f"{root}/{path}")
        del files[path]
    for i, path in enumerate(chosen[cut + (len(chosen) - cut) // 2 :]):
        new = f"{path}.new{i}"  # beside an existing file: its directory exists
        data = _content(new, 1000 + 97 * i)
        ctx.executor.write_file(f"{root}/{new}", data)
        files[new] = FileEntry(new, len(data), bytes_digest(data))
    entries = tuple(sorted(files.values(), key=lambda f: f.path))
    return replace(manifest, files=entries)


def _content(path: str, size: int) -> bytes:
    """Deterministic text-like bytes for a changed file."""
    line = hashlib.sha256(f"{MUTATION_SEED}:{path}".encode()).hexdigest().encode() + b"\n"
    return (line * (size // len(line) + 1))[:size]


class RsyncDelete(Task):
    """Delete the backup (`rm -rf`), syncfs included; verified gone."""

    name = "rsync_delete"
    kind = "backups"
    writes = True
    datasets = (DATASET,)
    columns = REAL_USER_SYS

    def prepare(self, ctx: TaskContext) -> None:
        if not ctx.executor.exists(ctx.path(BACKUP)):
            ctx.executor.call(_full_argv(ctx))

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-rf", ctx.path(BACKUP)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, ctx.path(BACKUP))]


TASKS = (RsyncFull, RsyncIncremental, RsyncDelete)
