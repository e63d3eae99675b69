"""Datasets: the seeded, deterministic files the tasks copy, and manifests to verify copies.

Article A copied a 700 MB ISO image and a tree of 7,500 files (900 directories,
1.9 GB, files of 10 KB to 5 MB) onto each filesystem. fsarena generates both
from a seed instead of shipping them:

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
- Fast. Generation is on the critical path of every first run, so it aims at
  the write bandwidth of the destination (a tmpfs: GB/s), not Python's speed:
  a 16 MiB random pool is drawn once per dataset, and every 1 MiB chunk of
  output is a pool slice at a seeded offset XOR-ed with a seeded 64-bit
  constant (numpy, several GB/s). A second thread writes 4 MiB buffers with
  unbuffered writes while the next one is filled; per file there is only an
  open, the writes and a close (fsarena.datasets.content).
- Verified. `generate` returns a manifest (paths, sizes, SHA-256). Without a
  cached manifest the second thread hashes the very buffers the first one
  writes (files are never read back), so hashing costs little wall time on
  two cores; the manifest is then cached under the spec's hash, and later
  runs only write. `verify` compares a copy against the manifest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import hashlib
import json
import math
import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, Self

from fsarena.datasets.content import CHUNK_BYTES, _Content, _Writer
from fsarena.datasets.content import MIB as MIB
from fsarena.datasets.numeric import _exp, _fit_sizes, _raw, _uniform
from fsarena.errors import FsarenaError

# Bump whenever generate() would write different bytes or a different layout
# for the same spec: it is part of spec_hash, so stale manifest caches are
# never trusted. tests/unit/test_datasets.py pins a digest to catch a forgotten bump.
GENERATOR_VERSION = 1

DEFAULT_SEED = 2006
_MAX_PROBLEMS = 20

# Independent PCG64 streams per purpose, so e.g. the pool never shares draws with the layout.
_STREAM_LAYOUT, _STREAM_SIZES, _STREAM_CONTENT = 1, 2, 3
# kernel_source shares text_tree's streams: its generated fallback is that very tree.
_KIND_CODES = {"large_file": 1, "tree": 2, "text_tree": 3, "small_files": 4, "kernel_source": 3}

# Extensions of a small business's file server with fixed shares (per mille).
# `find -name '*.pdf'` therefore matches about 15 % of the tree's files.
EXTENSION_PERMILLE: tuple[tuple[str, int], ...] = (
    ("pdf", 150),
    ("doc", 120),
    ("odt", 50),
    ("xls", 80),
    ("ods", 20),
    ("ppt", 40),
    ("jpg", 160),
    ("png", 60),
    ("mp3", 80),
    ("zip", 60),
    ("txt", 100),
    ("html", 40),
    ("csv", 40),
)


# numpy is imported where bytes or sizes are computed, never at import: plan, tasks,
# the CLI and the guest agent read specs and manifests without loading it.
if TYPE_CHECKING:
    import numpy as np

    from fsarena.datasets.numeric import IntArray, WordArray


# --------------------------------------------------------------------------- manifests


@dataclass(frozen=True)
class FileEntry:
    """One file of a dataset: relative POSIX path, size and SHA-256 (hex)."""

    path: str
    size_bytes: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """Exactly what a dataset holds: its files (sorted by path) and directories (sorted).

    `directories` excludes the dataset's root. `digest()` identifies the exact
    content, so two runs with equal digests copied the same bytes.
    """

    name: str
    spec_hash: str
    files: tuple[FileEntry, ...]
    directories: tuple[str, ...]

    def __post_init__(self) -> None:
        paths = [f.path for f in self.files]
        if paths != sorted(paths) or list(self.directories) != sorted(self.directories):
            raise ValueError("Manifest files and directories must be sorted by path")

    @property
    def total_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "spec_hash": self.spec_hash,
            "files": [
                {"path": f.path, "size_bytes": f.size_bytes, "sha256": f.sha256} for f in self.files
            ],
            "directories": list(self.directories),
        }

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Manifest:
        """Rebuild a manifest from `to_dict()` output; FsarenaError if it is malformed."""
        try:
            raw_files = d["files"]
            raw_dirs = d["directories"]
            if not isinstance(raw_files, list) or not isinstance(raw_dirs, list):
                raise TypeError("files and directories must be lists")
            files = [_file_entry(f) for f in raw_files]
            return cls(
                name=str(d["name"]),
                spec_hash=str(d["spec_hash"]),
                files=tuple(sorted(files, key=lambda f: f.path)),
                directories=tuple(sorted(str(p) for p in raw_dirs)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise FsarenaError(
                f"malformed dataset manifest ({exc!r}); delete it to have it regenerated"
            ) from exc

    def digest(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys, no spaces) of `to_dict()`."""
        return hashlib.sha256(_canonical_json(self.to_dict())).hexdigest()

    def count_matching(self, pattern: str) -> int:
        """Files whose basename matches an fnmatch wildcard, as `find -name PATTERN` counts them.

        Case-sensitive like find; only files count (no directory name contains a dot).
        """
        return sum(1 for f in self.files if fnmatch.fnmatchcase(f.path.rsplit("/", 1)[-1], pattern))


def _file_entry(obj: object) -> FileEntry:
    if not isinstance(obj, dict):
        raise TypeError(f"expected a file entry, got {obj!r}")
    return FileEntry(str(obj["path"]), _as_int(obj["size_bytes"]), str(obj["sha256"]))


def _as_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _canonical_json(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of comparing a copy with its manifest.

    files_checked and bytes_checked count the files whose content was hashed
    (present, regular, right size). `problems` holds at most 20 human-readable
    lines, sorted by path ("missing: d001/f000003.pdf", "size differs: ...",
    "checksum differs: ...", "unexpected: ..."; directories end in "/"); when
    there are more, the last line says how many were left out.
    """

    ok: bool
    files_checked: int
    bytes_checked: int
    problems: tuple[str, ...]


# --------------------------------------------------------------------------- specs


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
        _require(self.seed >= 0, f"seed must be >= 0, got {self.seed}")

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

    def write_files(self, layout: Layout, root: Path, hashing: bool) -> list[str]:
        """Write the layout's files under root; their SHA-256 (hex) in order when hashing."""
        return _write_layout(self, layout, root, hashing)

    def with_seed(self, seed: int) -> Self:
        """The same spec with another seed (different bytes, same distribution)."""
        return dataclasses.replace(self, seed=seed)

    def to_dict(self) -> dict[str, object]:
        """Every parameter, plus "kind" and a human "description"."""
        return {"kind": self.kind, **dataclasses.asdict(self), "description": self.description()}

    def spec_hash(self) -> str:
        """SHA-256 of the parameters and GENERATOR_VERSION: equal hashes, equal bytes.

        The description is left out: rewording it does not change the bytes.
        """
        params = {k: v for k, v in self.to_dict().items() if k != "description"}
        payload = {"generator_version": GENERATOR_VERSION, "spec": params}
        payload.update(self.extra_versions())
        return hashlib.sha256(_canonical_json(payload)).hexdigest()

    def extra_versions(self) -> dict[str, int]:
        """Versions of a kind's own generator, part of spec_hash (none for the base kinds)."""
        return {}

    def _stream(self, purpose: int) -> np.random.PCG64:
        import numpy as np

        return np.random.PCG64([self.seed, _KIND_CODES[self.kind], purpose])


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise FsarenaError(f"invalid dataset spec: {message}")


def _require_component(value: str, what: str) -> None:
    ok = value not in ("", ".", "..") and "/" not in value and "\0" not in value
    _require(ok, f"{what} must be a single path component, got {value!r}")


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
    _require(spec.files >= 1, f"files must be >= 1, got {spec.files}")
    _require(spec.directories >= 0, f"directories must be >= 0, got {spec.directories}")
    _require(spec.max_depth >= 1, f"max_depth must be >= 1, got {spec.max_depth}")
    lo, hi = spec.min_file_bytes, spec.max_file_bytes
    _require(0 <= lo <= hi, f"need 0 <= min_file_bytes <= max_file_bytes, got {lo}, {hi}")
    _require(
        spec.files * lo <= spec.total_bytes_target <= spec.files * hi,
        f"total_bytes_target {spec.total_bytes_target:,} is not reachable with "
        f"{spec.files:,} files of {lo:,} to {hi:,} bytes",
    )


def scaled_tree_counts(spec: TreeCounts, factor: float) -> dict[str, Any]:
    """Files, directories and total multiplied (files >= 10, directories >= 2); the largest
    file size lowered if the total needs it. The other parameters stay."""
    _check_factor(factor)
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


def _check_factor(factor: float) -> None:
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
        _require(self.size_bytes >= 1, f"size_bytes must be >= 1, got {self.size_bytes}")

    @property
    def total_bytes(self) -> int:
        return self.size_bytes

    def scaled(self, factor: float) -> Self:
        _check_factor(factor)
        size = max(MIB, round(self.size_bytes * factor / 4096) * 4096)
        return dataclasses.replace(self, size_bytes=size)

    def plan(self) -> Layout:
        return Layout((), ((self.filename, self.size_bytes),))

    def description(self) -> str:
        return (
            f"one incompressible file {self.filename} of {self.size_bytes:,} bytes "
            f"({self.size_bytes / MIB:,.1f} MiB)"
        )


@dataclass(frozen=True, kw_only=True)
class TreeSpec(DatasetSpec):
    """A tree of incompressible files as on a small business's file server.

    Layout. `directories` directories named dNNN form a random recursive tree:
    directory i picks its parent uniformly among the root and the directories
    made before it whose depth is below max_depth. Such trees are deep and
    narrow with many leaves, like a file server's department/project/year
    folders. ARTICLE_A_TREE (900 directories, max_depth 6) has 12 top-level
    directories; 12/41/105/187/253/302 directories at depths 1 to 6; 60 % of
    the directories are leaves; the others hold 2.5 subdirectories on average
    (at most 12). Each file picks its directory uniformly among the root and
    all directories (8.3 files per directory on average; the root may hold
    files too). Files are named fNNNNNN.EXT, the extension drawn from
    EXTENSION_PERMILLE (15 % pdf, 16 % jpg, 12 % doc, ...; article A's tree
    has 1,116 *.pdf files); the extension influences neither size nor content.

    Sizes. Log-normal, size = exp(mu + sigma·z) with sigma = lognormal_sigma
    (1.3 for article A) and mu = ln(mean) − sigma²/2, so that the unclipped
    mean is mean = total_bytes_target / files (253,333 bytes for article A;
    median exp(mu) = 109 KB). z is the Irwin–Hall sum of 12 uniforms minus 6
    (mean 0, variance 1, CDF within 0.003 of the normal's, tails cut at ±6σ,
    far beyond the clipping). Sizes are clipped to [min_file_bytes,
    max_file_bytes], then all multiplied by one factor (a Newton step on the
    files not at a bound), re-clipped and rounded down, repeatedly until the
    total stops improving; the few bytes still missing or in excess go to
    the first files (by file number) that have room within the bounds, so
    the total equals total_bytes_target exactly. For article A, 3.3 % of the
    files sit at 10 KB and 9 at 5 MB; the median is 111 KB.

    Scaling multiplies files, directories and total_bytes_target (files >= 10,
    directories >= 2); the file size bounds stay, except that max_file_bytes
    is lowered if needed so the target stays achievable.
    """

    kind: ClassVar[str] = "tree"
    name: str = "tree"
    files: int
    directories: int
    total_bytes_target: int
    min_file_bytes: int
    max_file_bytes: int
    lognormal_sigma: float = 1.3
    max_depth: int = 6
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        super().__post_init__()
        check_tree_counts(self)
        _require(self.lognormal_sigma > 0, "lognormal_sigma must be > 0")

    @property
    def total_bytes(self) -> int:
        return self.total_bytes_target

    def scaled(self, factor: float) -> Self:
        return dataclasses.replace(self, **scaled_tree_counts(self, factor))

    def plan(self) -> Layout:
        import numpy as np

        layout = _raw(self._stream(_STREAM_LAYOUT), self.directories + 2 * self.files)
        dir_paths = _tree_directories(layout[: self.directories], self.max_depth)
        containers = ["", *(p + "/" for p in dir_paths)]
        where = layout[self.directories : self.directories + self.files] % np.uint64(
            len(containers)
        )
        extensions = _extensions(layout[self.directories + self.files :])
        sizes = self.file_sizes()
        width = max(6, len(str(self.files - 1)))
        files = [
            (f"{containers[int(w)]}f{i:0{width}d}.{ext}", int(size))
            for i, (w, ext, size) in enumerate(zip(where, extensions, sizes, strict=True))
        ]
        return Layout(tuple(sorted(dir_paths)), tuple(sorted(files)))

    def file_sizes(self) -> IntArray:
        """Sizes of files 0..files-1 (see the class docstring); they sum to total_bytes_target."""
        import numpy as np

        raw = _raw(self._stream(_STREAM_SIZES), 12 * self.files).reshape(12, self.files)
        z = _uniform(raw[0])
        for row in raw[1:]:
            z += _uniform(row)  # one add per row: a fixed, platform-independent order
        z -= 6.0
        sigma = self.lognormal_sigma
        mean = self.total_bytes_target / self.files
        weights = _exp(sigma * z) * (mean * float(_exp(np.array([-sigma * sigma / 2]))[0]))
        return _fit_sizes(weights, self.min_file_bytes, self.max_file_bytes, self.total_bytes)

    def description(self) -> str:
        pdf = dict(EXTENSION_PERMILLE)["pdf"] / 10
        return (
            f"{self.files:,} incompressible files in {self.directories:,} directories "
            f"(random recursive tree, depth <= {self.max_depth}), {self.total_bytes_target:,} "
            f"bytes in total; sizes log-normal (sigma {self.lognormal_sigma}, mean "
            f"{self.total_bytes_target / self.files:,.0f} bytes) clipped to "
            f"{self.min_file_bytes:,}..{self.max_file_bytes:,} bytes and rescaled to the exact "
            f"total; file-server extensions ({pdf:g} % .pdf)"
        )


def _tree_directories(words: WordArray, max_depth: int) -> list[str]:
    """Paths of a random recursive tree; see TreeSpec. Parents always precede children."""
    width = max(3, len(str(len(words) - 1)))
    paths = [""]  # index 0 is the root
    depths = [0]
    eligible = [0]  # containers that may still receive a subdirectory
    for i, word in enumerate(words.tolist()):
        parent = eligible[word % len(eligible)]
        name = f"d{i:0{width}d}"
        paths.append(f"{paths[parent]}/{name}" if parent else name)
        depths.append(depths[parent] + 1)
        if depths[-1] < max_depth:
            eligible.append(i + 1)
    return paths[1:]


def _extensions(words: WordArray) -> list[str]:
    import numpy as np

    names = [ext for ext, _ in EXTENSION_PERMILLE]
    thresholds = np.cumsum([share for _, share in EXTENSION_PERMILLE])
    picks = np.searchsorted(thresholds, words % np.uint64(1000), side="right")
    return [names[int(i)] for i in picks]


ARTICLE_A_ISO = LargeFileSpec(size_bytes=700 * MIB)
ARTICLE_A_TREE = TreeSpec(
    files=7_500,
    directories=900,
    total_bytes_target=1_900_000_000,
    min_file_bytes=10_000,
    max_file_bytes=5_000_000,
)


# --------------------------------------------------------------------------- generation


def generate(spec: DatasetSpec, dest: Path, cache_dir: Path) -> Manifest:
    """Write the dataset under dest/spec.name and return its manifest.

    dest/spec.name is created; it must not exist or be an empty directory. The manifest is
    cached as cache_dir/<spec_hash>.manifest.json: with a cache entry that
    matches the planned layout, only the bytes are written (the content is
    deterministic, so the checksums are known); without one, files are hashed
    from the written buffers and the manifest is stored atomically. Nothing is
    fsynced: the runner syncs before any measurement. On failure, what was
    written is removed.
    """
    root = dest / spec.name
    created = _prepare_root(root)
    layout = spec.plan()
    cache_file = cache_dir / f"{spec.spec_hash()}.manifest.json"
    cached = _load_cached(cache_file, spec, layout)
    try:
        digests = spec.write_files(layout, root, hashing=cached is None)
    except BaseException as exc:
        _discard(root, created)
        if isinstance(exc, OSError):
            raise FsarenaError(
                f"cannot write dataset {spec.name!r} into {root}: {exc}; "
                "free some space or use a smaller scale"
            ) from exc
        raise
    if cached is not None:
        return cached
    entries = tuple(FileEntry(p, s, d) for (p, s), d in zip(layout.files, digests, strict=True))
    manifest = Manifest(spec.name, spec.spec_hash(), entries, layout.directories)
    _store_cached(cache_file, manifest)
    return manifest


def _prepare_root(root: Path) -> bool:
    """Make the dataset's root directory; True if it did not exist before."""
    if root.is_dir() and not root.is_symlink():
        if any(root.iterdir()):
            raise FsarenaError(
                f"{root} already exists and is not empty; remove it or generate elsewhere"
            )
        return False
    if root.exists() or root.is_symlink():
        raise FsarenaError(f"{root} exists and is not a directory; remove it")
    try:
        root.mkdir(parents=True)
    except OSError as exc:
        raise FsarenaError(f"cannot create {root}: {exc}; check the destination") from exc
    return True


def _discard(root: Path, created: bool) -> None:
    if created:
        shutil.rmtree(root, ignore_errors=True)
        return
    for child in root.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _write_layout(spec: DatasetSpec, layout: Layout, root: Path, hashing: bool) -> list[str]:
    for directory in layout.directories:
        (root / directory).mkdir()
    first_chunks = [0]
    for _, size in layout.files:
        first_chunks.append(first_chunks[-1] + -(-size // CHUNK_BYTES))
    content = _Content(spec._stream(_STREAM_CONTENT), first_chunks[-1])
    with ThreadPoolExecutor(1, thread_name_prefix="fsarena-generate") as stage:
        writer = _Writer(content, stage, hashing)
        futures = [
            writer.write_file(f"{root}/{path}", size, first)
            for (path, size), first in zip(layout.files, first_chunks[:-1], strict=True)
        ]
        writer.drain()
        return [digest for f in futures if (digest := f.result()) is not None]


def _load_cached(cache_file: Path, spec: DatasetSpec, layout: Layout) -> Manifest | None:
    """The cached manifest if it is readable and describes exactly this layout."""
    try:
        manifest = Manifest.from_dict(json.loads(cache_file.read_text()))
    except (OSError, ValueError, FsarenaError):
        return None  # absent or damaged: regenerate with hashing and overwrite it
    same = (
        manifest.name == spec.name
        and manifest.spec_hash == spec.spec_hash()
        and manifest.directories == layout.directories
        and tuple((f.path, f.size_bytes) for f in manifest.files) == layout.files
    )
    return manifest if same else None


def _store_cached(cache_file: Path, manifest: Manifest) -> None:
    """Store atomically (readers see the old file or the new one); best effort.

    The cache only saves hashing on later runs, so failing to write it must
    not fail a run whose dataset is complete and hashed.
    """
    tmp = cache_file.with_name(f".{cache_file.name}.{os.getpid()}.tmp")
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(manifest.to_dict(), sort_keys=True, indent=1))
        os.replace(tmp, cache_file)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


# --------------------------------------------------------------------------- verification


def verify(manifest: Manifest, root: Path, threads: int = 2) -> VerifyResult:
    """Check that root holds exactly the manifest's files and directories, byte for byte.

    Every expected file must exist as a regular file with the right size and
    SHA-256 (hashed by `threads` threads; hashlib releases the GIL); every
    expected directory must exist; anything else under root is reported as
    unexpected (without descending into unexpected directories).
    """
    if threads < 1:
        raise FsarenaError(f"verify needs at least one thread, got {threads}")
    if not root.is_dir():
        return VerifyResult(False, 0, 0, (f"missing: {root} (the copy's root directory)",))
    found = _scan(root, set(manifest.directories))
    problems = _structure_problems(manifest, found)
    to_hash = [f for f in manifest.files if found.get(f.path) == ("file", f.size_bytes)]
    with ThreadPoolExecutor(threads, thread_name_prefix="fsarena-verify") as pool:
        results = pool.map(lambda f: _check_content(root, f), to_hash)
        problems += [(f.path, p) for f, p in zip(to_hash, results, strict=True) if p]
    return VerifyResult(
        ok=not problems,
        files_checked=len(to_hash),
        bytes_checked=sum(f.size_bytes for f in to_hash),
        problems=_summarize(problems),
    )


def _scan(root: Path, expected_dirs: set[str]) -> dict[str, tuple[str, int]]:
    """Relative path -> (kind, size) of all under root; descends only into expected dirs."""
    found: dict[str, tuple[str, int]] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            found[rel] = ("unreadable", 0)
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                found[path] = ("dir", 0)
                if path in expected_dirs:
                    stack.append(path)
            elif entry.is_file(follow_symlinks=False):
                found[path] = ("file", entry.stat(follow_symlinks=False).st_size)
            else:
                found[path] = ("other", 0)
    return found


def _structure_problems(
    manifest: Manifest, found: dict[str, tuple[str, int]]
) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for d in manifest.directories:
        kind = found.get(d, ("absent", 0))[0]
        messages = {"absent": f"missing: {d}/", "unreadable": f"unreadable: {d}/"}
        if kind != "dir":
            problems.append((d, messages.get(kind, f"not a directory: {d}")))
    for f in manifest.files:
        kind, size = found.get(f.path, ("absent", 0))
        if kind == "absent":
            problems.append((f.path, f"missing: {f.path}"))
        elif kind != "file":
            problems.append((f.path, f"not a regular file: {f.path}"))
        elif size != f.size_bytes:
            problems.append(
                (f.path, f"size differs: {f.path} ({size:,} bytes, expected {f.size_bytes:,})")
            )
    expected = set(manifest.directories) | {f.path for f in manifest.files}
    for path, (kind, _) in found.items():
        if path in expected:
            continue
        if kind == "unreadable":  # only the root can get here
            problems.append((path, f"unreadable: {path or '.'}/"))
        else:
            problems.append((path, f"unexpected: {path}{'/' if kind == 'dir' else ''}"))
    return problems


def _check_content(root: Path, entry: FileEntry) -> str | None:
    """A problem line if the file's SHA-256 differs from the manifest's, else None."""
    try:
        with open(root / entry.path, "rb", buffering=0) as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        return f"unreadable: {entry.path} ({exc.strerror})"
    return None if digest == entry.sha256 else f"checksum differs: {entry.path}"


def _summarize(problems: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    lines = [message for _, message in sorted(problems)]
    if len(lines) <= _MAX_PROBLEMS:
        return tuple(lines)
    shown = lines[: _MAX_PROBLEMS - 1]
    return (*shown, f"... and {len(lines) - len(shown):,} more problems ({len(lines):,} in total)")
