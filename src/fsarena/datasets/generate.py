"""Dataset generation: writing a spec's bytes under a directory, and caching its manifest.

Generation is on the critical path of every first run, so it aims at the write
bandwidth of the destination (a tmpfs: GB/s), not Python's speed: a 16 MiB
random pool is drawn once per dataset, and every 1 MiB chunk of output is a
pool slice at a seeded offset XOR-ed with a seeded 64-bit constant (numpy,
several GB/s). A second thread writes 4 MiB buffers with unbuffered writes
while the next one is filled; per file there is only an open, the writes and a
close (fsarena.datasets.content). Without a cached manifest the second thread
hashes the very buffers the first one writes (files are never read back), so
hashing costs little wall time on two cores; the manifest is then cached under
the spec's hash, and later runs only write.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
from pathlib import Path

from fsarena.datasets.manifest import FileEntry, Manifest
from fsarena.datasets.spec import DatasetSpec, Layout, NativeWriter
from fsarena.errors import FsarenaError


def generate(
    spec: DatasetSpec, dest: Path, cache_dir: Path, mkfiles: str | None = None
) -> Manifest:
    """Write the dataset under dest/spec.name and return its manifest.

    dest/spec.name is created; it must not exist or be an empty directory. The manifest is
    cached as cache_dir/<spec_hash>.manifest.json: with a cache entry that
    matches the planned layout, only the bytes are written (the content is
    deterministic, so the checksums are known); without one, files are hashed
    from the written buffers and the manifest is stored atomically. Nothing is
    fsynced: the runner syncs before any measurement. On failure, what was
    written is removed. mkfiles: the path of fsarena-mkfiles, which writes
    text-like trees natively (their per-file cost is the bottleneck); None: in Python.
    """
    root = dest / spec.name
    created = _prepare_root(root)
    layout = spec.plan()
    cache_file = cache_dir / f"{spec.spec_hash()}.manifest.json"
    # A cached manifest (27,500 entries for a Portage tree: 0.08 s of parsing and
    # checking, a fifth of the files' writing) is read while fsarena-mkfiles writes
    # the files (its own process); other writers read it after. A cache found
    # damaged or stale after all costs a second, hashed writing.
    load = functools.cache(lambda: _load_cached(cache_file, spec, layout))
    expected = cache_file.is_file()
    native = NativeWriter(mkfiles, cache_dir, load if expected else None) if mkfiles else None
    try:
        digests = spec.write_files(layout, root, hashing=not expected, native=native)
        cached = load() if expected else None
        if expected and cached is None:
            _discard(root, created=False)
            digests = spec.write_files(layout, root, hashing=True, native=native)
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
