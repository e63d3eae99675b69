"""Writing a text-like tree's files: natively by fsarena-mkfiles, or in Python.

Every file is a slice of the dataset's content pool, read cyclically from its
offset; its digest is computed from those bytes in memory (files are never
read back).

A Portage-like or kernel-like tree is tens of thousands of files of a few kB:
Python's per-file cost (open, write, close through the interpreter) made its
generation 0.4x of a bare C loop. fsarena-mkfiles (native/mkfiles.c, the
small-files task's writer) takes the layout ("d PATH", "f OFFSET SIZE PATH")
and the content pool and does only the system calls; while it runs, Python
hashes each file's bytes from the pool in memory (files are never read
back). The pool, 16 MiB that take ~0.3 s to draw, is kept in the cache
directory beside the dataset's manifest, under the spec's hash.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from fsarena.datasets.manifest import new_digest
from fsarena.datasets.spec import Layout, NativeWriter
from fsarena.errors import FsarenaError
from fsarena.interrupt import deferred


def pool_file(native: NativeWriter, spec_hash: str, size: int, draw: Callable[[], bytes]) -> Path:
    """The cache's file of the spec's content pool, drawn and stored when absent or of
    another size (stored atomically, so a reader never sees half of one)."""
    path = native.cache_dir / f"{spec_hash}.pool"
    with contextlib.suppress(OSError):
        if path.stat().st_size == size:
            return path
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        native.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(draw())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise FsarenaError(f"cannot store the content pool in {native.cache_dir}: {exc}") from exc
    return path


def write_natively(
    native: NativeWriter,
    layout: Layout,
    root: Path,
    pool: Path,
    offsets: list[int],
    hashing: bool,
) -> list[str]:
    """Run fsarena-mkfiles for the layout under root, its files cut from the pool file;
    the digests (when hashing) are computed meanwhile from the pool in memory.
    FsarenaError (nothing removed: generate() does that) if it fails."""
    lines = [f"d {d}\n" for d in layout.directories]
    lines += [f"f {o} {s} {p}\n" for (p, s), o in zip(layout.files, offsets, strict=True)]
    with tempfile.NamedTemporaryFile("w", prefix="fsarena-layout-") as layout_file:
        layout_file.write("".join(lines))
        layout_file.flush()
        argv = [native.mkfiles, layout_file.name, str(pool), str(root)]
        # A stop raised inside Popen would leave mkfiles writing on, holding the source busy.
        with deferred() as held:
            proc = subprocess.Popen(argv, stderr=subprocess.PIPE)
        with proc:
            try:
                held.check()
                result = digests(layout, pool.read_bytes(), offsets) if hashing else []
                if native.meanwhile is not None:
                    native.meanwhile()
                _, stderr = proc.communicate()
            except BaseException:
                proc.kill()
                proc.wait()
                raise
    if proc.returncode != 0:
        message = stderr.decode(errors="replace").strip() or f"exit {proc.returncode}"
        raise FsarenaError(f"cannot write the dataset into {root}: {message}")
    return result


def write_in_python(
    layout: Layout, root: Path, pool: bytes, offsets: list[int], hashing: bool
) -> list[str]:
    """The fallback when fsarena-mkfiles was not built: the same files, written by Python."""
    for directory in layout.directories:
        (root / directory).mkdir()
    doubled = memoryview(pool + pool)  # any file up to the pool's size is one slice
    result = []
    for (path, size), offset in zip(layout.files, offsets, strict=True):
        fd = os.open(f"{root}/{path}", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            digest = new_digest() if hashing else None
            for piece in pieces(doubled, offset, size):
                write_all(fd, piece)
                if digest is not None:
                    digest.update(piece)
        finally:
            os.close(fd)
        if digest is not None:
            result.append(digest.hexdigest())
    return result


def digests(layout: Layout, pool: bytes, offsets: list[int]) -> list[str]:
    """Every file's digest, computed from the pool (nothing is read from disk)."""
    doubled = memoryview(pool * 2)
    out = []
    for (_, size), offset in zip(layout.files, offsets, strict=True):
        digest = new_digest()
        for piece in pieces(doubled, offset, size):
            digest.update(piece)
        out.append(digest.hexdigest())
    return out


def pieces(doubled: memoryview, offset: int, size: int) -> list[memoryview]:
    """The file's bytes: the pool read cyclically from offset, as slices of pool+pool."""
    n = len(doubled) // 2
    out = []
    while size > 0:
        take = min(size, n)
        out.append(doubled[offset : offset + take])
        size -= take
        offset = (offset + take) % n
    return out


def write_all(fd: int, view: memoryview) -> None:
    written = 0
    while written < len(view):
        written += os.write(fd, view[written:])
