"""Benchmark: the cost of cold caches per filesystem against the machine-wide drop, side by side.

Not a test (root). On one loop device with a real filesystem holding a file and
a tree (as tests/integration/test_cold_cache.py makes), alternates the two
methods of fsarena.run.cold before the same read: MACHINE (sync, then
`echo 3 > drop_caches`: what every timed task paid before issue 14) and
FILESYSTEM (umount, device flush, mount). Prints each one's median cost, the
ratio filesystem / machine (the target: well below 1), and the device bytes the
read then cost, which must be the data's size for both (caches really cold).
As in a run, a tmpfs holds a tree of --source-files files (the datasets'
source: article A's tree has 7,500 at scale 1) and --dirty-mb of dirty data
waits on the work directory's filesystem between drops (the session file, the
images of other runs): the machine-wide drop walks and writes back those too,
the per-filesystem one does not. With --source-files 0 --dirty-mb 0 the two
differ only by the remount.

    sudo .venv/bin/python bench/cold_cache.py [--fs ext4] [--rounds 10] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from fsarena.filesystems.profiles import PROFILES
from fsarena.host.executor import RealExecutor
from fsarena.measure.collect import Command
from fsarena.run.cold import make_cold
from fsarena.tasks import TaskContext

MIB = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fs", default="ext4")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--workdir", default="/var/tmp/fsarena-bench")
    parser.add_argument("--source-files", type=int, default=7500)
    parser.add_argument("--dirty-mb", type=int, default=64)
    args = parser.parse_args()
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=args.workdir))
    ex, profile = RealExecutor(), PROFILES[args.fs]
    image, mnt, source = str(work / "bench.img"), work / "mnt", work / "source"
    ex.create_image(image, 1024 * MIB)
    device = ex.attach_loop(image)
    source.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1g", "bench-source", str(source)], check=True
    )
    try:
        for i in range(args.source_files):
            (source / f"f{i}").write_bytes(b"s" * 4096)
        ex.call(profile.mkfs_argv(device))
        mnt.mkdir()
        ex.call(profile.mount_argv(device, str(mnt)))
        (mnt / "big").write_bytes(b"\x5a" * 32 * MIB)
        for d in range(10):
            (mnt / "tree" / f"d{d}").mkdir(parents=True)
            for f in range(50):
                (mnt / "tree" / f"d{d}" / f"f{f}").write_bytes(b"x" * 16384)
        ex.call(("sync", "-f", str(mnt)))
        ctx = TaskContext(profile, device, str(mnt), str(work), {}, ex)
        read = f"cat {mnt}/big > /dev/null && find {mnt}/tree -type f -exec cat {{}} + >/dev/null"
        cost: dict[str, list[float]] = {"machine": [], "filesystem": []}
        reads: dict[str, list[int]] = {"machine": [], "filesystem": []}
        for _ in range(args.rounds):
            for method, per_fs in (("machine", False), ("filesystem", True)):
                (work / "dirty").write_bytes(b"d" * args.dirty_mb * MIB)  # not synced
                start = time.perf_counter()
                make_cold(ex, ctx, mounted=True, per_fs=per_fs)
                cost[method].append(time.perf_counter() - start)
                timed = ex.measure([Command(("sh", "-c", read))], device, 120)
                reads[method].append(timed.measurement.device_read_bytes)
        data = 32 * MIB + 500 * 16384
        for method in cost:
            print(
                f"{method:>10}: median {statistics.median(cost[method]) * 1e3:7.1f} ms "
                f"(min {min(cost[method]) * 1e3:.1f}, max {max(cost[method]) * 1e3:.1f}); "
                f"reads after it: min {min(reads[method]) / data:.2f}x the data"
            )
        ratio = statistics.median(cost["filesystem"]) / statistics.median(cost["machine"])
        print(
            f"filesystem / machine: {ratio:.2f} ({args.fs}, {args.rounds} rounds, interleaved; "
            f"{args.source_files} files on a tmpfs, {args.dirty_mb} MB dirty)"
        )
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["umount", str(source)], check=False)
        ex.detach_loop(device)
        ex.remove_path(image)
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    main()
