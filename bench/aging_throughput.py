"""Benchmark of the aging workload's write rate against the device's write ceiling.

Usage (root): python bench/aging_throughput.py [--fs ext4] [--size 1G] [--workdir DIR]

On one loop image (direct I/O, as fsarena's targets), in one run, side by side:
1. fio's raw sequential write ceiling of the loop device (fsarena.targets.ceiling, the
   same command and parameters a run uses);
2. the aging workload (fsarena.aging: fill to 50 %, churn until 1x the image
   is written) with fs-drift's 20 % of new files fsync'ed, on a fresh
   filesystem: bytes written per second, syncfs included;
3. the same without fsync, so the cost of the fsyncs is visible, and the
   writer's own CPU time (user + sys of this process), so whether the Python
   loop or the device sets the pace is measured, not guessed.
Prints each rate and its share of the ceiling; removes everything it made.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from fsarena.aging.profiles import resolve_age
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from fsarena.aging.profiles import resolve_age
from fsarena.aging.workload import AgingPlan, Writer
from fsarena.filesystems.profiles import PROFILES
from fsarena.plan.suite import parse_size
from fsarena.targets.ceiling import fio_argv, parse_fio


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _ceiling(device: str, size: int) -> float:
    out = subprocess.run(
        fio_argv(device, "write", min(size, 1 << 30)), capture_output=True, text=True, check=True
    ).stdout
    return parse_fio(out, "write")[0]


def _age(fs: str, device: str, mnt: str, size: int, fsync_share: float) -> tuple[float, float]:
    """(bytes written per second, CPU seconds per wall second) of one aging on a fresh fs."""
    profile = PROFILES[fs]
    subprocess.run(profile.mkfs_argv(device), check=True, capture_output=True)
    subprocess.run(profile.mount_argv(device, mnt), check=True)
    try:
        age = resolve_age(
            {"name": "bench", "source": "bench", "fullness": 0.5, "written_factor": 1.0,
             "fsync_share": fsync_share}
        )  # fmt: skip
        cpu0, t0 = _cpu_s(), time.monotonic()
        tally = Writer(AgingPlan(age, size, 1), f"{mnt}/aged").run()
        subprocess.run(profile.sync_argv(mnt), check=True)
        wall = time.monotonic() - t0
        return tally.bytes_written / wall, (_cpu_s() - cpu0) / wall
    finally:
        subprocess.run(["umount", mnt], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fs", default="ext4")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--workdir", default="/var/tmp")
    args = ap.parse_args()
    size = parse_size(args.size)
    with tempfile.TemporaryDirectory(dir=args.workdir, prefix="fsarena-bench-aging-") as tmp:
        image, mnt = f"{tmp}/img", f"{tmp}/mnt"
        os.mkdir(mnt)
        with open(image, "wb") as f:
            f.truncate(size)
        device = subprocess.run(
            ["losetup", "--direct-io=on", "--find", "--show", image],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        try:
            ceiling = _ceiling(device, size)
            synced, cpu_synced = _age(args.fs, device, mnt, size, 0.2)
            unsynced, cpu_unsynced = _age(args.fs, device, mnt, size, 0.0)
        finally:
            subprocess.run(["losetup", "-d", device], check=False)
    print(f"{args.fs} on a {size >> 20} MiB loop image (direct I/O):")
    print(f"  fio write ceiling:            {ceiling / 1e6:8,.0f} MB/s")
    for label, rate, cpu in (
        ("aging, 20 % fsync'ed", synced, cpu_synced),
        ("aging, no fsync", unsynced, cpu_unsynced),
    ):
        print(
            f"  {label + ':':29} {rate / 1e6:8,.0f} MB/s = {rate / ceiling:6.1%} of the ceiling; "
            f"writer CPU {cpu:.0%} of its wall time"
        )


if __name__ == "__main__":
    main()
