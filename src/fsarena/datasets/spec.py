"""Dataset specs: the parameters of the seeded, deterministic files the tasks copy.

Article A copied a 700 MB ISO image and a tree of 7,500 files (900 directories,
1.9 GB, files of 10 KB to 5 MB) onto each filesystem. fsarena generates both
from a seed instead of shipping them (the tree is fsarena.datasets.tree; how
bytes are written, fsarena.datasets.generate; how a copy is checked,
fsarena.datasets.verify):

- Deterministic. The same spec gives byte-identical files on any machine and
  numpy version: every decision comes from the raw output of numpy's PCG64 bit
  generator (whose stream numpy guarantees across versions; `Generator` methods
  carry no such guarantee), turned into numbers with integer and IEEE-754
  arithmetic only (+, ×, ÷, floor; exp is computed in fsarena.datasets.numeric by a fixed polynomial
  instead of the platform's maths library, whose last bit may differ).
- Incompressible on purpose. The files of a file server are mostly media,
  archives and office documents, which compress badly; random content keeps a
  compressing filesystem (btrfs with compress=) from copying less data than
  the others and so distorting the copy tasks. No two 1 MiB chunks are equal,
  so deduplication finds nothing either.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, Self

from fsarena.datasets.content import CHUNK_BYTES, ChunkContent, ChunkWriter
from fsarena.datasets.content import MIB as MIB
from fsarena.datasets.manifest import MANIFEST_VERSION, Manifest, canonical_json
from fsarena.errors import FsarenaError

# Bump whenever generate() would write different bytes or a different layout
# for the same spec: it is part of spec_hash, so stale manifest caches are
# never trusted. tests/unit/test_datasets.py pins a digest to catch a forgotten bump.
GENERATOR_VERSION = 1

DEFAULT_SEED = 2006

# Independent PCG64 streams per purpose, so e.g. the pool never shares draws with the layout.
STREAM_LAYOUT, STREAM_SIZES, _STREAM_CONTENT = 1, 2, 3
# kernel_source shares text_tree's streams: its generated fallback is that very tree.
_KIND_CODES = {"large_file": 1, "tree": 2, "text_tree": 3, "small_files": 4, "kernel_source": 3}

# numpy is imported where bytes or sizes are computed, never at import: plan, tasks,
# the CLI and the guest agent read specs and manifests without loading it.
if TYPE_CHECKING:
    import numpy as np


# --------------------------------------------------------------------------- specs


class NativeWriter(NamedTuple):
    """fsarena-mkfiles (its path) and the cache directory where it may keep a content pool.

    meanwhile: work for Python while fsarena-mkfiles writes (reading the cached
    manifest); the writer calls it once it has started the process, if at all.
    """

    mkfiles: str
    cache_dir: Path
    meanwhile: Callable[[], object] | None = None


class Layout(NamedTuple):
    """What a spec will generate, without any data: directories and (path, size) of files.

    Both sorted by path; directories exclude the dataset's root.
    """

    directories: tuple[str, ...]
    files: tuple[tuple[str, int], ...]


@dataclass(frozen=True, kw_only=True)
class DatasetSpec(ABC):
    """Parameters of a dataset; the same spec always generates the same bytes."""

    kind: ClassVar[str]
    # False: the task makes the files on the test filesystem itself (small files, dd,
    # bonnie++); nothing is written to the source, but the manifest still says what to expect.
    on_source: ClassVar[bool] = True
    # True: --scale shrinks it in proportion, and a scale that leaves it at its floor is
    # refused (plan.floors). False: a fixed set by design (a workload's parameters, a
    # handful of real packages), whose floor is not a distortion.
    proportional: ClassVar[bool] = True
    name: str
    seed: int

    def __post_init__(self) -> None:
        _require_component(self.name, "dataset name")
        require(self.seed >= 0, f"seed must be >= 0, got {self.seed}")

    @property
    @abstractmethod
    def total_bytes(self) -> int:
        """Exact number of bytes the dataset will hold."""

    @abstractmethod
    def scaled(self, factor: float) -> Self:
        """The same dataset made proportionally smaller or larger; factor must be > 0."""

    @abstractmethod
    def plan(self) -> Layout:
        """The deterministic layout (no data written)."""

    @abstractmethod
    def description(self) -> str:
        """One human sentence describing the dataset and its distribution."""

    def expected_manifest(self) -> Manifest:
        """What a task that makes this dataset itself (on_source False) will have made.

        Only a layout without files by default (a size, for dd or bonnie++).
        """
        return Manifest(self.name, self.spec_hash(), (), self.plan().directories)

    def write_files(
        self, layout: Layout, root: Path, hashing: bool, native: NativeWriter | None = None
    ) -> list[str]:
        """Write the layout's files under root; their digests (hex) in order when hashing.

        native: fsarena-mkfiles and a cache directory, for the kinds it can write.
        """
        return _write_layout(self, layout, root, hashing)

    def compressibility(self) -> str:
        """What the data is to a compressor (btrfs compress=, f2fs compression), in words:
        reports state it beside every space saved. "": not stated."""
        return ""

    def to_dict(self) -> dict[str, object]:
        """Every parameter, plus "kind", a human "description" and its "compressibility"."""
        return {
            "kind": self.kind,
            **dataclasses.asdict(self),
            "description": self.description(),
            "compressibility": self.compressibility(),
        }

    def spec_hash(self) -> str:
        """SHA-256 of the parameters, GENERATOR_VERSION and MANIFEST_VERSION: equal hashes,
        equal bytes and digests.

        The description and the compressibility are left out: words about the bytes.
        """
        words = ("description", "compressibility")
        params = {k: v for k, v in self.to_dict().items() if k not in words}
        payload = {
            "generator_version": GENERATOR_VERSION,
            "manifest_version": MANIFEST_VERSION,
            "spec": params,
        }
        payload.update(self.extra_versions())
        return hashlib.sha256(canonical_json(payload)).hexdigest()

    def extra_versions(self) -> dict[str, int]:
        """Versions of a kind's own generator, part of spec_hash (none for the base kinds)."""
        return {}

    def _stream(self, purpose: int) -> np.random.PCG64:
        import numpy as np

        return np.random.PCG64([self.seed, _KIND_CODES[self.kind], purpose])


def require(condition: bool, message: str) -> None:
    if not condition:
        raise FsarenaError(f"invalid dataset spec: {message}")


def _require_component(value: str, what: str) -> None:
    ok = value not in ("", ".", "..") and "/" not in value and "\0" not in value
    require(ok, f"{what} must be a single path component, got {value!r}")


class TreeCounts(Protocol):
    """What every generated tree spec has: counts, a total and file size bounds."""

    @property
    def files(self) -> int: ...
    @property
    def directories(self) -> int: ...
    @property
    def max_depth(self) -> int: ...
    @property
    def total_bytes_target(self) -> int: ...
    @property
    def min_file_bytes(self) -> int: ...
    @property
    def max_file_bytes(self) -> int: ...


def check_tree_counts(spec: TreeCounts) -> None:
    """The counts are positive and the exact total is reachable within the size bounds."""
    require(spec.files >= 1, f"files must be >= 1, got {spec.files}")
    require(spec.directories >= 0, f"directories must be >= 0, got {spec.directories}")
    require(spec.max_depth >= 1, f"max_depth must be >= 1, got {spec.max_depth}")
    lo, hi = spec.min_file_bytes, spec.max_file_bytes
    require(0 <= lo <= hi, f"need 0 <= min_file_bytes <= max_file_bytes, got {lo}, {hi}")
    require(
        spec.files * lo <= spec.total_bytes_target <= spec.files * hi,
        f"total_bytes_target {spec.total_bytes_target:,} is not reachable with "
        f"{spec.files:,} files of {lo:,} to {hi:,} bytes",
    )


def scaled_tree_counts(spec: TreeCounts, factor: float) -> dict[str, Any]:
    """Files, directories and total multiplied (files >= 10, directories >= 2); the largest
    file size lowered if the total needs it. The other parameters stay."""
    check_factor(factor)
    files = max(10, round(spec.files * factor))
    lo = spec.min_file_bytes
    total = round(spec.total_bytes_target * factor)
    total = min(max(total, files * lo), files * spec.max_file_bytes)
    return {
        "files": files,
        "directories": max(2, round(spec.directories * factor)),
        "total_bytes_target": total,
        "max_file_bytes": min(spec.max_file_bytes, total - (files - 1) * lo),
    }


def check_factor(factor: float) -> None:
    if not (factor > 0 and math.isfinite(factor)):
        raise FsarenaError(f"scale factor must be a positive number, got {factor}")


@dataclass(frozen=True, kw_only=True)
class LargeFileSpec(DatasetSpec):
    """One large incompressible file at the dataset's root, like a CD image.

    Scaling multiplies the size, rounded to a multiple of 4096 bytes and at
    least 1 MiB.
    """

    kind: ClassVar[str] = "large_file"
    name: str = "iso"
    size_bytes: int
    filename: str = "image.iso"
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        super().__post_init__()
        _require_component(self.filename, "filename")
        require(self.size_bytes >= 1, f"size_bytes must be >= 1, got {self.size_bytes}")

    @property
    def total_bytes(self) -> int:
        return self.size_bytes

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        size = max(MIB, round(self.size_bytes * factor / 4096) * 4096)
        return dataclasses.replace(self, size_bytes=size)

    def plan(self) -> Layout:
        return Layout((), ((self.filename, self.size_bytes),))

    def compressibility(self) -> str:
        return "incompressible: generated random bytes"

    def description(self) -> str:
        return (
            f"one incompressible file {self.filename} of {self.size_bytes:,} bytes "
            f"({self.size_bytes / MIB:,.1f} MiB)"
        )


ARTICLE_A_ISO = LargeFileSpec(size_bytes=700 * MIB)


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec(DatasetSpec):
    """A workload's parameters (a tool's clients, sizes, duration); scaling multiplies the
    SCALED fields, down to floors.

    A task family that runs its own tool (tasks/dbench.py, fio.py, ...) declares its
    subclass and default beside the task (Task.parameters); the task makes its files
    itself on the test filesystem (`on_source` False), so a suite's `[datasets.NAME]`
    table can change any parameter and `--scale` shrinks them like any dataset. What
    scales is listed per class in SCALED with its floor: counts, sizes and durations
    shrink, but never below what keeps the workload what it models (a few hundred
    commits, a database larger than shared_buffers at the suite's scale, seconds not
    milliseconds of run time). Concurrency (clients, threads, copies) and block sizes
    never scale: they define the workload, not its size.

    `total_bytes` is the room the workload needs on the test filesystem (the image is
    sized from it). Where the page cache matters (pgbench, fio), the working set is
    compared with the memory the workload may use (`memory_bytes`, the memory cgroup it
    runs in), and the report says when a scale has turned a disk benchmark into a
    memory benchmark.
    """

    on_source: ClassVar[bool] = False
    proportional: ClassVar[bool] = False  # floors by design; the page-cache flag covers them
    SCALED: ClassVar[dict[str, int]] = {}  # field -> smallest value a scale may give it
    name: str = "workload"
    seed: int = 0

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        values = {
            f: max(floor, round(getattr(self, f) * factor)) for f, floor in self.SCALED.items()
        }
        return dataclasses.replace(self, **values)

    def plan(self) -> Layout:
        return Layout((), ())

    def require_positive(self, *fields: str) -> None:
        """FsarenaError unless every named field is > 0."""
        for f in fields:
            require(getattr(self, f) > 0, f"{f} must be > 0, got {getattr(self, f)}")


def _write_layout(spec: DatasetSpec, layout: Layout, root: Path, hashing: bool) -> list[str]:
    for directory in layout.directories:
        (root / directory).mkdir()
    first_chunks = [0]
    for _, size in layout.files:
        first_chunks.append(first_chunks[-1] + -(-size // CHUNK_BYTES))
    content = ChunkContent(spec._stream(_STREAM_CONTENT), first_chunks[-1])
    with ThreadPoolExecutor(1, thread_name_prefix="fsarena-generate") as stage:
        writer = ChunkWriter(content, stage, hashing)
        futures = [
            writer.write_file(f"{root}/{path}", size, first)
            for (path, size), first in zip(layout.files, first_chunks[:-1], strict=True)
        ]
        writer.drain()
        return [digest for f in futures if (digest := f.result()) is not None]
