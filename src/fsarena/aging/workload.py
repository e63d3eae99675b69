"""The aging workload: a seeded stream of creates and deletes (pure), and its writer.

Methodology (Geriatrix, ATC '18, bounded as fs-drift bounds it):
- Fill: an Impressions-style tree (fsarena's TextTreeSpec: Impressions'
  directory growth, Poisson depths, Pareto directory popularity) whose
  apparent bytes are `fullness` x the image's size; files get log-normal
  sizes with a Pareto tail.
- Churn rounds: delete a seeded `delete_share` of the live files and create as
  many new ones holding the bytes deleted (fullness stays put), sizes from the
  same distributions, each new file in the directory of a randomly drawn live
  file (so popular directories stay popular and creates interleave across
  directories); deletes and creates alternate; `fsync_share` of the new files
  are fsync'ed. Rounds go on until `written_factor` x the image's size has
  been written, or the time cap (the writer stops between rounds).

The stream depends only on the profile, the image's size and the seed, never
on the filesystem, so every filesystem ends with the same file set (the
manifest digest says so). Content is cut from one 16 MiB text pool at seeded
offsets, as fsarena's generated trees are.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from fsarena.aging.profiles import AgeProfile
from fsarena.datasets.numeric import raw_words, uniforms
from fsarena.datasets.realistic import TextTreeSpec
from fsarena.datasets.textwrite import pieces, write_all

ROOT = "aged"  # the aged tree's directory on the filesystem under test
_STREAM_ROUND = 1000  # PCG64 stream ids of churn rounds start here
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


@dataclass(frozen=True)
class NewFile:
    path: str  # relative to the aged tree's root
    size: int
    offset: int  # where its bytes start in the content pool
    fsync: bool = False


Op = NewFile | str  # a str is a path to delete


@dataclass
class Tally:
    """What the writer did: bytes written, files created and deleted, fsyncs, rounds."""

    bytes_written: int = 0
    created: int = 0
    deleted: int = 0
    fsyncs: int = 0
    rounds: int = 0
    stopped_by: str = "bytes"  # "bytes" (the bound was reached) | "time" (the cap)
    live: dict[str, NewFile] = field(default_factory=dict)


def tree_spec(profile: AgeProfile, image_bytes: int, seed: int) -> TextTreeSpec:
    """The fill's tree: the profile's distributions, sized to its fullness of the image."""
    total = int(profile.fullness * image_bytes)
    files = max(10, total // profile.mean_file_bytes)
    return TextTreeSpec(
        name=ROOT,
        files=files,
        directories=max(2, files // profile.files_per_directory),
        total_bytes_target=total,
        max_file_bytes=max(profile.max_file_bytes, total // files + 1),
        body_median_bytes=profile.body_median_bytes,
        body_sigma=profile.body_sigma,
        tail_fraction=profile.tail_fraction,
        tail_min_bytes=profile.tail_min_bytes,
        tail_alpha=profile.tail_alpha,
        max_depth=profile.max_depth,
        depth_mean=profile.depth_mean,
        flavour="small",
        seed=seed,
    )


@dataclass(frozen=True)
class AgingPlan:
    """The seeded operation stream of one profile on one image size."""

    profile: AgeProfile
    image_bytes: int
    seed: int

    @property
    def spec(self) -> TextTreeSpec:
        return tree_spec(self.profile, self.image_bytes, self.seed)

    @property
    def churn_bytes(self) -> int:
        return int(self.profile.written_factor * self.image_bytes)

    def directories(self) -> tuple[str, ...]:
        return self.spec.plan().directories

    def fill(self) -> list[NewFile]:
        spec = self.spec
        files = spec.plan().files
        offsets = spec.offsets(len(files))
        return [NewFile(p, s, o) for (p, s), o in zip(files, offsets, strict=True)]

    def churn_round(self, number: int, live: dict[str, NewFile]) -> list[Op]:
        """Round `number` (from 1): deletes and creates alternating, drawn from the live set."""
        import numpy as np

        names = sorted(live)
        stream = np.random.PCG64([self.seed, _STREAM_ROUND + number])
        count = max(1, int(len(names) * self.profile.delete_share))
        picks = raw_words(stream, count) % np.uint64(len(names))
        doomed = sorted({names[int(i)] for i in picks})
        freed = sum(live[n].size for n in doomed)
        sizes = self._sizes(len(doomed), freed, number)
        homes = (raw_words(stream, len(doomed)) % np.uint64(len(names))).tolist()
        offsets = (raw_words(stream, len(doomed)) % np.uint64(self.spec.pool_bytes)).tolist()
        synced = uniforms(raw_words(stream, len(doomed))) < self.profile.fsync_share
        ops: list[Op] = []
        for i, gone in enumerate(doomed):
            folder = os.path.dirname(names[homes[i]])
            name = f"r{number:05d}-{i:06d}.dat"
            path = f"{folder}/{name}" if folder else name
            ops += [gone, NewFile(path, int(sizes[i]), int(offsets[i]), bool(synced[i]))]
        return ops

    def _sizes(self, count: int, total: int, number: int) -> list[int]:
        """count sizes from the fill's distributions, summing to total (fullness kept)."""
        spec = self.spec
        one = TextTreeSpec(
            name=ROOT,
            files=count,
            directories=0,
            total_bytes_target=total,
            max_file_bytes=max(spec.max_file_bytes, total // count + 1),
            body_median_bytes=spec.body_median_bytes,
            body_sigma=spec.body_sigma,
            tail_fraction=spec.tail_fraction,
            tail_min_bytes=spec.tail_min_bytes,
            tail_alpha=spec.tail_alpha,
            max_depth=spec.max_depth,
            depth_mean=spec.depth_mean,
            seed=self.seed * 100_003 + number,
        )
        return [int(s) for s in one.file_sizes()]

    def rounds(self, live: dict[str, NewFile]) -> Iterator[list[Op]]:
        """Churn rounds until churn_bytes are written; `live` is updated as they are applied."""
        written, number = 0, 0
        while written < self.churn_bytes and live:
            number += 1
            ops = self.churn_round(number, live)
            written += sum(op.size for op in ops if isinstance(op, NewFile))
            yield ops

    def final(self) -> dict[str, NewFile]:
        """The live file set at the end, computed without writing anything."""
        live = {f.path: f for f in self.fill()}
        for ops in self.rounds(live):
            apply_to(live, ops)
        return live


def apply_to(live: dict[str, NewFile], ops: list[Op]) -> None:
    for op in ops:
        if isinstance(op, NewFile):
            live[op.path] = op
        else:
            del live[op]


def digest(live: dict[str, NewFile], seed: int) -> str:
    """The file set's digest: every path, size and content offset (content follows from them)."""
    h = hashlib.sha256(f"fsarena-aging-1 {seed}\n".encode())
    for path in sorted(live):
        f = live[path]
        h.update(f"{path}\0{f.size}\0{f.offset}\n".encode())
    return h.hexdigest()


class Writer:
    """Applies a plan's operations under a directory, in a tight Python loop."""

    def __init__(self, plan: AgingPlan, root: str, clock: Callable[[], float] = time.monotonic):
        self.plan = plan
        self.root = root
        self.clock = clock
        pool = plan.spec.pool()
        self.doubled = memoryview(pool + pool)

    def write(self, f: NewFile) -> int:
        fd = os.open(f"{self.root}/{f.path}", _CREATE_FLAGS, 0o644)
        try:
            for piece in pieces(self.doubled, f.offset, f.size):
                write_all(fd, piece)
            if f.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        return f.size

    def run(self, churn: bool = True) -> Tally:
        """Fill, then churn rounds within the bytes bound and the time cap."""
        tally = Tally()
        os.makedirs(self.root, exist_ok=True)
        for d in self.plan.directories():
            os.mkdir(f"{self.root}/{d}")
        for f in self.plan.fill():
            tally.bytes_written += self.write(f)
            tally.created += 1
            tally.live[f.path] = f
        if not churn:
            return tally
        deadline = self.clock() + self.plan.profile.time_cap_s
        for ops in self.plan.rounds(tally.live):
            if self.clock() > deadline:
                tally.stopped_by = "time"
                break
            self._apply(ops, tally)
        return tally

    def _apply(self, ops: list[Op], tally: Tally) -> None:
        for op in ops:
            if isinstance(op, NewFile):
                tally.bytes_written += self.write(op)
                tally.created += 1
                tally.fsyncs += op.fsync
            else:
                os.unlink(f"{self.root}/{op}")
                tally.deleted += 1
        apply_to(tally.live, ops)
        tally.rounds += 1


def scan(root: str) -> dict[str, int]:
    """Path -> size of every file under root, as found on disk."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = os.path.getsize(path)
    return found


MARK = ".fsarena-aged-tree"  # beside the tree, written last: the tree is complete


def mark_tree(mountpoint: str) -> None:
    with open(f"{mountpoint}/{MARK}", "w") as f:
        f.write("complete\n")
