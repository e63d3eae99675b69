"""Benchmark of dataset generation and copy verification against bare C loops and dd.

Usage: python bench/dataset_throughput.py [--dest DIR] [--scale F] [--repeat N]

Generates article A's ISO and tree, article D's Portage tree and the
kernel-like source tree (scaled, 0.25 by default) into a fresh directory under
DIR (default: under /dev/shm, the tmpfs fsarena prefers as source), first
without a manifest cache (files are hashed while written), then with it (bytes
only), as runs do (text trees written by fsarena-mkfiles), and once more with
the cache but Python writing every file (the "before" of text trees); then
verifies the result in Python and with fsarena-verify (XXH3-128, manifest
version 2), and with fsarena-verify as it was with manifest version 1
(SHA-256, compiled from git: the "before"). In the same round, side by side:
- a bare C loop (bench/bare_loops.py) that makes the same directories and
  files, their bytes computed as fsarena computes them, the reference for
  generation (target >= 0.8x), and the same loop writing one buffer (the
  reference before);
- a bare C loop that lists every directory and opens, reads, hashes
  (XXH3-128) and closes every file on the same threads, the reference for
  verification (target >= 0.8x), and one that only opens, reads, SHA-256-hashes
  and closes, the reference of the "before";
- `dd if=/dev/zero bs=4M conv=fsync` of the same size (what the destination
  absorbs at best) and `dd of=/dev/null bs=4M` reading it back: the references
  for a large file (target >= 0.8x).
Each generation and bare write ends with syncfs() of the destination, as dd's
fsync does. The measurements are interleaved and repeated, the medians
printed; everything written is removed afterwards.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

try:
    from fsarena.plan import catalog
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from fsarena.plan import catalog
from bare_loops import bare_verify, bare_write, compile_loops, compile_v1, v1_records, v1_verify
from fsarena.datasets.generate import generate
from fsarena.datasets.linux_source import KERNEL_LIKE
from fsarena.datasets.manifest import VerifyResult
from fsarena.datasets.spec import ARTICLE_A_ISO, DatasetSpec
from fsarena.datasets.tree import ARTICLE_A_TREE
from fsarena.datasets.verify import verify
from fsarena.measure.native import native_tool

DD_BLOCK_BYTES = 4 << 20
_LIBC = ctypes.CDLL(None, use_errno=True)


def _syncfs(path: Path) -> None:
    """Write back only the destination's filesystem, as dd's fsync does for its file."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _LIBC.syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), "syncfs failed")
    finally:
        os.close(fd)


def _dd(target: Path, size_bytes: int) -> float:
    """Seconds to write size_bytes (rounded up to 4 MiB blocks) with dd and fsync."""
    count = -(-size_bytes // DD_BLOCK_BYTES)
    argv = ["dd", "if=/dev/zero", f"of={target}", "bs=4M", f"count={count}", "conv=fsync"]
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - t0


def _dd_read(target: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(["dd", f"if={target}", "of=/dev/null", "bs=4M"], check=True, capture_output=True)
    return time.perf_counter() - t0


def _timed(action: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    action()
    return time.perf_counter() - t0


# What each round measures, in order, and the reference each is compared with.
LABELS = (
    ("generate, no cache (write + hash)", "bare write"),
    ("generate, cached manifest (write)", "bare write"),
    ("  before: cached, Python writer", "bare write"),
    ("bare C loop: mkdir, open, write, close", ""),
    ("  bare C loop, from one buffer (before)", ""),
    ("verify, Python (2 threads)", "bare verify"),
    ("verify, fsarena-verify (2 threads)", "bare verify"),
    ("bare C loop: list, open, read, XXH3, close", ""),
    ("  before: fsarena-verify v1, SHA-256", "bare SHA-256"),
    ("  bare C loop: open, read, SHA-256, close", ""),
    ("dd if=/dev/zero bs=4M conv=fsync", ""),
    ("dd of=/dev/null bs=4M (read)", ""),
)
REFERENCES = {"bare write": 3, "bare verify": 7, "bare SHA-256": 9}
DD_WRITE, DD_READ = 10, 11
# Kinds whose bytes fsarena computes (pool slice XOR constant): their bare loop does too.
XOR_KINDS = ("large_file", "tree")


def _round(spec: DatasetSpec, work: Path, loops: tuple[str, str], v1: str) -> list[float]:
    """Seconds for each of LABELS, in one interleaved round."""
    cache, data, dd_file, bare = work / "cache", work / "data", work / "dd.bin", work / "bare"
    layout = spec.plan()
    mkfiles = native_tool("mkfiles")

    def make(writer: str | None) -> Callable[[], None]:
        def action() -> None:
            generate(spec, data, cache, mkfiles=writer)
            _syncfs(work)

        return action

    times = [_timed(make(mkfiles))]
    shutil.rmtree(data)
    times.append(_timed(make(None)))
    shutil.rmtree(data)
    times.insert(1, _timed(make(mkfiles)))
    manifest = generate(spec, work / "unused", cache)  # from the cache: the manifest only
    shutil.rmtree(work / "unused")
    content = "xor" if spec.kind in XOR_KINDS else "plain"
    for mode in (content, "plain"):
        times.append(bare_write(loops[1], bare, list(layout.directories), list(layout.files), mode))
        shutil.rmtree(bare)
    root = data / spec.name
    times.append(_timed(lambda: _check(verify(manifest, root))))
    tool = native_tool("verify")
    times.append(_timed(lambda: _check(verify(manifest, root, tool=tool))))
    dirs, files = [".", *manifest.directories], [f.path for f in manifest.files]
    times.append(bare_verify(loops[0], root, dirs, files, 2, "xxh128"))
    records = v1_records(manifest, root)
    times.append(_timed(lambda: v1_verify(v1, records, root)))
    times.append(bare_verify(loops[0], root, [], files, 2, "sha256"))
    shutil.rmtree(data)
    shutil.rmtree(cache)
    times.append(_dd(dd_file, spec.total_bytes))
    times.append(_dd_read(dd_file))
    dd_file.unlink()
    return times


def _bench_spec(
    spec: DatasetSpec, work: Path, repeat: int, loops: tuple[str, str], v1: str
) -> list[tuple[str, float, str]]:
    """(label, MB/s, comparison) per measurement; the median round counts.

    The measurements are interleaved in every round, so a noisy neighbour slows
    them alike.
    """
    rounds = [_round(spec, work, loops, v1) for _ in range(repeat)]
    medians = [statistics.median(column) for column in zip(*rounds, strict=True)]
    dd_bytes = -(-spec.total_bytes // DD_BLOCK_BYTES) * DD_BLOCK_BYTES
    sizes = [spec.total_bytes] * DD_WRITE + [dd_bytes] * 2
    rates = [n / t / 1e6 for n, t in zip(sizes, medians, strict=True)]
    rows = []
    for i, (label, ref) in enumerate(LABELS):
        note = f"{rates[i] / rates[REFERENCES[ref]]:5.2f}x {ref}" if ref else ""
        if "generate" in label or "writer" in label:
            note += f", {rates[i] / rates[DD_WRITE]:5.2f}x dd write"
        elif "verify" in label or "read," in label:
            note += f"{', ' if note else ''}{rates[i] / rates[DD_READ]:5.2f}x dd read"
        rows.append((label, rates[i], note))
    return rows


def _check(result: VerifyResult) -> None:
    if not result.ok:
        raise SystemExit(f"verification failed: {result.problems}")


def _filesystem(path: Path) -> str:
    out = subprocess.run(
        ["df", "--output=fstype", str(path)], capture_output=True, text=True, check=False
    )
    lines = out.stdout.split()
    return lines[-1] if out.returncode == 0 and lines else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=Path("/dev/shm"), help="where to write")
    parser.add_argument("--scale", type=float, default=0.25, help="dataset scale (default 0.25)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fsarena-bench-", dir=args.dest))
    print(f"destination {work} ({_filesystem(work)}), scale {args.scale}, {os.cpu_count()} CPUs")
    try:
        loops = compile_loops(work)
        v1 = compile_v1(work)
        for base in (
            ARTICLE_A_ISO,
            ARTICLE_A_TREE,
            catalog.PORTAGE,  # text-like trees: many small files, one write each
            KERNEL_LIKE.generated(),
        ):
            spec = base.scaled(args.scale)
            files = len(spec.plan().files)
            print(f"\n{spec.name} ({files:,} files): {spec.description()}")
            for label, mb_s, note in _bench_spec(spec, work, args.repeat, loops, v1):
                print(f"  {label:40s} {mb_s:8.0f} MB/s  {note}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
