"""Benchmark of dataset generation against the destination's write ceiling.

Usage: python bench/dataset_throughput.py [--dest DIR] [--scale F] [--repeat N]

Generates article A's ISO and tree, article D's Portage tree and the
kernel-like source tree (scaled, 0.25 by default) into a fresh
directory under DIR (default: under /dev/shm, the tmpfs fsarena prefers as
source), first without a manifest cache (files are hashed while written), then
with it (bytes only), and verifies the result. In the same run, `dd
if=/dev/zero bs=4M conv=fsync` of the same size measures what the destination
can absorb at best; the ratio is generation's share of that ceiling. Each
generation is followed by syncfs(), so a disk-backed destination is timed like
dd's fsync (syncfs of the destination only). The measurements are interleaved
and repeated, and the medians printed; everything written is removed
afterwards.
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
from pathlib import Path

try:
    from fsarena.plan import catalog
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from fsarena.plan import catalog
from fsarena.datasets.core import ARTICLE_A_ISO, DatasetSpec
from fsarena.datasets.generate import generate
from fsarena.datasets.linux_source import KERNEL_LIKE
from fsarena.datasets.manifest import VerifyResult
from fsarena.datasets.tree import ARTICLE_A_TREE
from fsarena.datasets.verify import verify

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


def _dd(target: Path, size_bytes: int) -> None:
    count = -(-size_bytes // DD_BLOCK_BYTES)
    argv = ["dd", "if=/dev/zero", f"of={target}", "bs=4M", f"count={count}", "conv=fsync"]
    subprocess.run(argv, check=True, capture_output=True)


def _round(spec: DatasetSpec, work: Path) -> tuple[float, float, float, float]:
    """Seconds for: generate without cache, generate with cache, verify, dd."""
    cache, data, dd_file = work / "cache", work / "data", work / "dd.bin"
    t0 = time.perf_counter()
    generate(spec, data, cache)
    _syncfs(work)
    t1 = time.perf_counter()
    shutil.rmtree(data)
    t2 = time.perf_counter()
    manifest = generate(spec, data, cache)
    _syncfs(work)
    t3 = time.perf_counter()
    _check(verify(manifest, data / spec.name))
    t4 = time.perf_counter()
    shutil.rmtree(data)
    shutil.rmtree(cache)
    t5 = time.perf_counter()
    _dd(dd_file, spec.total_bytes)
    t6 = time.perf_counter()
    dd_file.unlink()
    return t1 - t0, t3 - t2, t4 - t3, t6 - t5


def _bench_spec(spec: DatasetSpec, work: Path, repeat: int) -> list[tuple[str, float]]:
    """(label, MB/s) for generation without and with cache, verification and dd.

    The four measurements are interleaved in every round, so a noisy
    neighbour slows them alike; the median round counts.
    """
    rounds = [_round(spec, work) for _ in range(repeat)]
    sizes = [spec.total_bytes] * 3 + [-(-spec.total_bytes // DD_BLOCK_BYTES) * DD_BLOCK_BYTES]
    labels = [
        "generate, no cache (write + hash)",
        "generate, cached manifest (write)",
        "verify (read + hash, 2 threads)",
        "dd if=/dev/zero bs=4M conv=fsync",
    ]
    medians = [statistics.median(column) for column in zip(*rounds, strict=True)]
    return [(label, n / t / 1e6) for label, n, t in zip(labels, sizes, medians, strict=True)]


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
        for base in (
            ARTICLE_A_ISO,
            ARTICLE_A_TREE,
            catalog.PORTAGE,  # text-like trees: many small files, one write each
            KERNEL_LIKE.generated(),
        ):
            spec = base.scaled(args.scale)
            rows = _bench_spec(spec, work, args.repeat)
            ceiling = rows[-1][1]
            files = len(spec.plan().files)
            print(f"\n{spec.name} ({files:,} files): {spec.description()}")
            for label, mb_s in rows:
                print(f"  {label:36s} {mb_s:8.0f} MB/s  {mb_s / ceiling:6.0%} of dd's")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
