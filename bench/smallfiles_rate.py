"""Benchmark: fsarena-mkfiles's file-creation rate against a bare C loop (target >= 0.9).

Usage: sudo .venv/bin/python bench/smallfiles_rate.py [--scale 0.5] [--rounds 5]

Article D's "create small files" must measure the filesystem, not the
harness. fsarena times the whole fsarena-mkfiles process (exec, reading the
layout and the content pool, then mkdir/open/write/close per file) exactly
as the runner does (fsarena.measure.collect, without the syncfs both would share).
The reference is the least a program can do: a C loop, compiled here, that
creates the same directories and files with the same bytes from a layout
already in memory, and times only that loop (clock_gettime). The ratio of
rates (reference time / fsarena time) is printed for a tmpfs and for ext4 on
a direct-I/O loop device; the two are run alternately, the medians count.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from fsarena.filesystems.profiles import PROFILES
from fsarena.host.executor import RealExecutor
from fsarena.measure.collect import Command, measure_commands
from fsarena.measure.native import native_tool
from fsarena.plan.catalog import SMALL_FILES

# The reference: the layout parsed before the clock starts, then only the system calls.
MINIMAL_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r"); FILE *p = fopen(argv[2], "r");
    fseek(p, 0, SEEK_END); long plen = ftell(p); rewind(p);
    char *pool = malloc(2 * plen); if (fread(pool, 1, plen, p) != (size_t)plen) return 3;
    memcpy(pool + plen, pool, plen);
    size_t n = 0, cap = 1 << 16; char **paths = malloc(cap * sizeof *paths);
    long *off = malloc(cap * sizeof *off), *size = malloc(cap * sizeof *size);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (n == cap) { cap *= 2; paths = realloc(paths, cap * sizeof *paths);
            off = realloc(off, cap * sizeof *off); size = realloc(size, cap * sizeof *size); }
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'd') { size[n] = -1; paths[n++] = strdup(line + 2); continue; }
        char *e; off[n] = strtol(line + 2, &e, 10); size[n] = strtol(e + 1, &e, 10);
        paths[n++] = strdup(e + 1);
    }
    mkdir(argv[3], 0755); int root = open(argv[3], O_RDONLY | O_DIRECTORY);
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t i = 0; i < n; i++) {
        if (size[i] < 0) { mkdirat(root, paths[i], 0755); continue; }
        int fd = openat(root, paths[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
        long left = size[i], o = off[i] % plen;
        while (left > 0) { long k = left < plen ? left : plen; long w = write(fd, pool + o, k);
            if (w <= 0) return 4; left -= w; o = (o + w) % plen; }
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.9f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
"""


def _compile(work: Path) -> str:
    src, exe = work / "minimal.c", work / "minimal"
    src.write_text(MINIMAL_C)
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(src)], check=True)
    return str(exe)


def _round(minimal: str, layout: Path, pool: Path, dest: Path, first: str) -> tuple[float, float]:
    """(fsarena-mkfiles wall as fsarena measures it, the bare loop's own time)."""
    timings = {}
    for who in (first, "minimal" if first == "fsarena" else "fsarena"):
        target = dest / who
        shutil.rmtree(target, ignore_errors=True)
        os.sync()
        time.sleep(0.2)
        if who == "fsarena":
            cmd = Command((native_tool("mkfiles"), str(layout), str(pool), str(target)))
            m = measure_commands([cmd], None, 600).measurement
            if m.exit_code != 0:
                raise SystemExit("fsarena-mkfiles failed")
            timings[who] = m.wall_s
        else:
            out = subprocess.run([minimal, str(layout), str(pool), str(target)], check=True,
                                 capture_output=True, text=True)  # fmt: skip
            timings[who] = float(out.stdout)
        shutil.rmtree(target)
    return timings["fsarena"], timings["minimal"]


def _bench(
    label: str, minimal: str, layout: Path, pool: Path, dest: Path, rounds: int, files: int
) -> None:
    # ABBA order: whichever runs second (after the other's deletion) is not always the same.
    order = ["fsarena", "minimal"]
    pairs = [_round(minimal, layout, pool, dest, order[i % 2]) for i in range(rounds)]
    ours = statistics.median(p[0] for p in pairs)
    bare = statistics.median(p[1] for p in pairs)
    ratio = statistics.median(p[1] / p[0] for p in pairs)
    print(
        f"{label:28s} fsarena-mkfiles {files / ours:9,.0f} files/s   bare C loop "
        f"{files / bare:9,.0f} files/s   rate ratio {ratio:.3f} (target >= 0.9)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=0.5, help="of article D's small files")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workdir", default="/var/tmp")
    args = parser.parse_args()
    spec = SMALL_FILES.scaled(args.scale)
    work = Path(tempfile.mkdtemp(prefix="fsarena-bench-", dir=args.workdir))
    shm = Path(tempfile.mkdtemp(prefix="fsarena-bench-", dir="/dev/shm"))
    ex = RealExecutor()
    device = None
    mnt = work / "mnt"
    try:
        layout, pool = work / "layout", work / "pool"
        layout.write_text(spec.layout_text())
        pool.write_bytes(spec.pool())
        minimal = _compile(work)
        print(
            f"{spec.files:,} files in {spec.directories:,} directories, "
            f"{spec.total_bytes / 1e6:.0f} MB; median of {args.rounds} alternating rounds"
        )
        _bench("tmpfs (/dev/shm)", minimal, layout, pool, shm, args.rounds, spec.files)
        ex.create_image(str(work / "ext4.img"), 4 << 30)
        device = ex.attach_loop(str(work / "ext4.img"))
        ex.call(PROFILES["ext4"].mkfs_argv(device))
        mnt.mkdir()
        ex.call(PROFILES["ext4"].mount_argv(device, str(mnt)))
        _bench("ext4 (loop, direct I/O)", minimal, layout, pool, mnt, args.rounds, spec.files)
    finally:
        if ex.is_mounted(str(mnt)):
            ex.call(["umount", str(mnt)])
        if device:
            ex.detach_loop(device)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


if __name__ == "__main__":
    main()
