"""Benchmark: fsarena's measured wall time of a task vs the bare command under GNU time.

Not a test. Runs article A's iso_copy_in (cp of a large file onto ext4 on a
direct-I/O loop device, then syncfs) alternately through fsarena's measurement
path and as the same commands under /usr/bin/time, dropping caches before
each, and prints the median ratio fsarena / GNU time (target <= 1.02).

    sudo .venv/bin/python bench/overhead.py [--size-mib 512] [--rounds 10]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from fsarena.filesystems.profiles import PROFILES
from fsarena.host.executor import RealExecutor
from fsarena.measure.collect import Command

GNU_TIME = "/usr/bin/time"


def gnu_time_wall(argv: list[str]) -> float:
    """Wall seconds as GNU time reports them (%e, centiseconds)."""
    out = subprocess.run(
        [GNU_TIME, "-f", "WALL %e", *argv], capture_output=True, text=True, check=True
    )
    return float(re.findall(r"WALL ([\d.]+)", out.stderr)[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--workdir", default="/var/tmp")
    args = parser.parse_args()
    ex = RealExecutor()
    base = Path(tempfile.mkdtemp(prefix="fsarena-bench-", dir=args.workdir))
    src, mnt, image = base / "src.bin", base / "mnt", base / "target.img"
    with open(src, "wb") as f:
        for _ in range(args.size_mib):
            f.write(os.urandom(1 << 20))
    ex.create_image(str(image), 4 * args.size_mib * (1 << 20) + (512 << 20))
    device = ex.attach_loop(str(image))
    profile = PROFILES["ext4"]
    try:
        ex.call(profile.mkfs_argv(device))
        mnt.mkdir()
        ex.call(profile.mount_argv(device, str(mnt)))
        dst = str(mnt / "copy.bin")
        # Exactly what the runner times for iso_copy_in: cp, then syncfs.
        cmds = [Command(("cp", str(src), dst)), Command(("sync", "-f", str(mnt)))]
        ours, theirs = [], []
        for _ in range(args.rounds):
            for who in ("fsarena", "gnu-time"):
                ex.remove_path(dst)
                ex.drop_caches()
                if who == "fsarena":
                    ours.append(ex.measure(cmds, device, 600).measurement.wall_s)
                else:
                    theirs.append(sum(gnu_time_wall(list(c.argv)) for c in cmds))
                time.sleep(0.2)
        ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
        print(
            f"task: cp {args.size_mib} MiB + syncfs on ext4 (loop, direct I/O), "
            f"{args.rounds} rounds"
        )
        print(
            f"fsarena  median {statistics.median(ours):.3f} s  "
            + " ".join(f"{x:.3f}" for x in ours)
        )
        print(
            f"gnu time median {statistics.median(theirs):.3f} s  "
            + " ".join(f"{x:.2f}" for x in theirs)
        )
        print(f"ratio fsarena / GNU time: median {statistics.median(ratios):.3f} (target <= 1.02)")
    finally:
        if ex.is_mounted(str(mnt)):
            ex.call(["umount", str(mnt)])
        ex.detach_loop(device)
        ex.remove_path(str(base))


if __name__ == "__main__":
    main()
