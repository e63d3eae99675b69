"""Your data: a dataset `kind = "directory"` that is any directory the user names, read-only.

`[datasets.tree] kind = "directory"  path = "/srv/share"` (or `--data PATH`)
replaces a generated tree by the user's own: the same copy, list, find,
delete and compress tasks then copy it onto each filesystem, and every copy
is verified against its manifest (paths, sizes, XXH3-128), as the articles'
trees are. Only regular files and the directories that hold them are kept
(symbolic links, devices, sockets, FIFOs and directories with no file are left
out, so every copy can be verified byte for byte); a file with several names
is copied once per name, and a sparse file is written out in full. What a copy
leaves out or changes is counted by kind and said (`Changes`), never called
100 %. The directory itself is only read: its files are copied once to the
source, like every dataset.

`fraction` (scaled by --scale) keeps an evenly spread share of the files,
so the size histogram stays the directory's own; `max_bytes` then caps the
total by keeping a smaller evenly spread share. The checksums are cached
in fsarena's dataset cache by the directory's path, and each file's are
reused while its size and mtime are unchanged: hashing a large share runs
once, not on every run.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from fsarena.datasets.linux_source import RealTreeSpec, ancestors
from fsarena.datasets.manifest import MANIFEST_VERSION, FileEntry, Manifest, file_digest
from fsarena.datasets.spec import DatasetSpec, Layout, check_factor, require
from fsarena.errors import FsarenaError

CACHE_DIR = "directories"


@dataclass(frozen=True)
class _Stat:
    path: str  # relative, POSIX
    size_bytes: int
    mtime_ns: int
    inode: tuple[int, int] = (0, 0)  # (st_dev, st_ino): names of one file share it
    links: int = 1
    allocated_bytes: int = 0  # st_blocks x 512: below the size, the file has holes


# Kinds of entry a copy leaves out, as said to the user (singular, plural).
LEFT_OUT = {
    "symlink": ("symbolic link", "symbolic links"),
    "fifo": ("FIFO", "FIFOs"),
    "socket": ("socket", "sockets"),
    "device": ("device node", "device nodes"),
    "empty_dir": ("directory with no file", "directories with no file"),
}


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


@dataclass(frozen=True)
class _Walk:
    files: tuple[_Stat, ...]  # the regular files, sorted by path
    left_out: dict[str, int]  # LEFT_OUT kind -> how many


@functools.cache
def _walk(root: str) -> _Walk:
    """One walk per run (stat only): the regular files, and every other entry counted by kind."""
    found: list[_Stat] = []
    left_out = dict.fromkeys(LEFT_OUT, 0)
    directories: set[str] = set()

    def fail(exc: OSError) -> None:
        raise FsarenaError(f"cannot read {exc.filename}: {exc.strerror}; fix its permissions")

    for current, dirs, names in os.walk(root, onerror=fail):
        rel = os.path.relpath(current, root)
        prefix = "" if rel == "." else rel + "/"
        directories.update(prefix + d for d in dirs)  # os.walk lists symlinked dirs here
        for n in names:
            st = os.lstat(os.path.join(current, n))
            if stat.S_ISREG(st.st_mode):
                inode = (st.st_dev, st.st_ino)
                blocks = st.st_blocks * 512
                found.append(
                    _Stat(prefix + n, st.st_size, st.st_mtime_ns, inode, st.st_nlink, blocks)
                )
            else:
                left_out[_kind(st.st_mode)] += 1
    for d in sorted(directories):
        if os.path.islink(os.path.join(root, d)):
            directories.discard(d)
            left_out["symlink"] += 1
    held = {a for s in found for a in ancestors(s.path)}
    left_out["empty_dir"] = len(directories - held)
    return _Walk(tuple(sorted(found, key=lambda s: s.path)), left_out)


def _listing(root: str) -> tuple[_Stat, ...]:
    """The regular files under root, sorted by path."""
    return _walk(root).files


@dataclass(frozen=True)
class Changes:
    """What a copy of the user's directory leaves out or changes, counted by kind."""

    left_out: dict[str, int]  # LEFT_OUT kind -> how many (the whole directory)
    linked_files: int  # kept files with several names in the tree (hard links) ...
    linked_names: int  # ... and their names: each name is copied as a separate file
    sparse_files: int  # kept files with holes: written out in full
    hole_bytes: int

    def words(self) -> str:
        """E.g. "left out: 81 symbolic links, 2 FIFOs; 1 sparse file written out in full"; or ""."""
        parts = []
        gone = [_count(n, *LEFT_OUT[k]) for k, n in self.left_out.items() if n]
        if gone:
            parts.append(f"left out: {', '.join(gone)}")
        if self.linked_files:
            linked = _count(self.linked_files, "hard-linked file", "hard-linked files")
            parts.append(f"{linked} ({self.linked_names} names) copied as separate files")
        if self.sparse_files:
            parts.append(
                f"{_count(self.sparse_files, 'sparse file', 'sparse files')} written out in full "
                f"({self.hole_bytes / 1e6:,.1f} MB of holes become data)"
            )
        return "; ".join(parts)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def changes(root: str, kept: tuple[_Stat, ...]) -> Changes:
    """What copying these files of root does not keep as it is."""
    names: dict[tuple[int, int], int] = {}
    for s in kept:
        if s.links > 1:
            names[s.inode] = names.get(s.inode, 0) + 1
    sparse = [s for s in kept if s.allocated_bytes < s.size_bytes]
    return Changes(
        left_out=dict(_walk(root).left_out),
        linked_files=sum(n > 1 for n in names.values()),
        linked_names=sum(n for n in names.values() if n > 1),
        sparse_files=len(sparse),
        hole_bytes=sum(s.size_bytes - s.allocated_bytes for s in sparse),
    )


@dataclass(frozen=True, kw_only=True)
class DirectorySpec(DatasetSpec):
    """Any directory the user names (see the module docstring)."""

    kind: ClassVar[str] = "directory"
    name: str = "tree"
    path: str
    fraction: float = 1.0
    max_bytes: int = 0  # 0: no cap
    seed: int = 0  # unused: the data is the user's

    def __post_init__(self) -> None:
        super().__post_init__()
        require(os.path.isabs(self.path), f"path must be absolute, got {self.path!r}")
        require(
            os.path.isdir(self.path), f"path {self.path!r} is not a directory (or cannot be read)"
        )
        require(0 < self.fraction <= 1, f"fraction must be within (0, 1], got {self.fraction}")
        require(self.max_bytes >= 0, f"max_bytes must be >= 0, got {self.max_bytes}")

    def selected(self) -> tuple[_Stat, ...]:
        """The files kept: an evenly spread fraction, then capped at max_bytes."""
        files = _listing(os.path.normpath(self.path))
        kept = _evenly(files, self.fraction)
        total = sum(s.size_bytes for s in kept)
        if self.max_bytes and total > self.max_bytes:
            # A smaller evenly spread share first (the histogram stays the directory's),
            # then the last files that still do not fit are left out.
            kept = _evenly(files, self.fraction * self.max_bytes / total)
            total, capped = 0, []
            for s in kept:
                if total + s.size_bytes <= self.max_bytes:
                    capped.append(s)
                    total += s.size_bytes
            kept = capped
        if not kept:
            raise FsarenaError(
                f"dataset {self.name}: no file of {self.path} is kept (fraction "
                f"{self.fraction:.3g}, max_bytes {self.max_bytes}); raise --scale or max_bytes"
            )
        return tuple(kept)

    @property
    def total_bytes(self) -> int:
        return sum(s.size_bytes for s in self.selected())

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return dataclasses.replace(self, fraction=min(1.0, self.fraction * factor))

    def plan(self) -> Layout:
        files = self.selected()
        dirs = {p for s in files for p in ancestors(s.path)}
        return Layout(tuple(sorted(dirs)), tuple((s.path, s.size_bytes) for s in files))

    def description(self) -> str:
        cap = f", at most {self.max_bytes:,} bytes" if self.max_bytes else ""
        root = os.path.normpath(self.path)
        kept = self.selected()
        every = len(_listing(root))
        changed = changes(root, kept).words()
        return f"your directory {self.path}: {len(kept)} of its {every} regular files{cap}" + (
            f"; {changed}" if changed else ""
        )


def _evenly(files: tuple[_Stat, ...], fraction: float) -> list[_Stat]:
    """An evenly spread share: file i is kept when floor((i+1)·f) > floor(i·f)."""
    if fraction >= 1:
        return list(files)
    return [s for i, s in enumerate(files) if int((i + 1) * fraction) > int(i * fraction)]


def resolve_directory(spec: DirectorySpec, cache_dir: Path) -> tuple[DatasetSpec, str]:
    """The selection as a real tree with its manifest (checksums cached), and its origin note."""
    folder = cache_dir / CACHE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(os.path.normpath(spec.path).encode()).hexdigest()[:24]
    selected = spec.selected()
    sums = _checksums(Path(spec.path), selected, folder / f"{key}.v{MANIFEST_VERSION}.sums.json")
    entries = tuple(FileEntry(s.path, s.size_bytes, sums[s.path]) for s in selected)
    layout = spec.plan()
    manifest = Manifest(spec.name, "directory", entries, layout.directories)
    manifest_path = folder / f"{key}-{manifest.digest()[:16]}.manifest.json"
    manifest_path.write_text(json.dumps(manifest.to_dict(), sort_keys=True))
    real = RealTreeSpec(
        name=spec.name,
        label=f"directory {spec.path}",
        tree_root=spec.path,
        manifest_path=str(manifest_path),
        tree_digest=manifest.digest(),
    )
    cap = f", capped at {spec.max_bytes:,} B" if spec.max_bytes else ""
    root = os.path.normpath(spec.path)
    every = len(_listing(root))
    changed = changes(root, selected).words()
    note = (
        f"your directory {spec.path}: {len(entries)} of its {every} regular files (evenly "
        f"spread{cap}), {manifest.total_bytes / 1e6:.0f} MB" + (f"; {changed}" if changed else "")
    )
    return real, note


def _checksums(root: Path, files: tuple[_Stat, ...], cache: Path) -> dict[str, str]:
    """The content digest of each file, reusing the cache's where size and mtime are unchanged."""
    try:
        known: dict[str, list[object]] = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    fresh = [s for s in files if known.get(s.path, [])[:2] != [s.size_bytes, s.mtime_ns]]

    def digest(s: _Stat) -> str:
        with open(root / s.path, "rb") as f:
            return file_digest(f)

    with ThreadPoolExecutor(2) as pool:
        for s, sha in zip(fresh, pool.map(digest, fresh), strict=True):
            known[s.path] = [s.size_bytes, s.mtime_ns, sha]
    tmp = cache.with_suffix(".tmp")
    tmp.write_text(json.dumps(known, sort_keys=True))
    tmp.replace(cache)
    return {s.path: str(known[s.path][2]) for s in files}
