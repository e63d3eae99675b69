"""Benchmark of fsarena's start-up: `fsarena --help` against `python3 -c pass`, side by side.

Usage: python bench/startup.py [--rounds 15] [--fsarena PATH]

The two commands run interleaved (one of each per round, so load from other
processes on the machine touches both alike); each child's wall time is taken
around its run and its peak resident memory from getrusage(RUSAGE_CHILDREN)
(ru_maxrss of the children waited for so far is a maximum, so each child runs
from a fresh helper process that reports its own child's figure). Prints the
median wall time and peak RSS of each, and fsarena's ratio to bare Python.
Issue #13's target for `fsarena --help`: <= 0.2 s and <= 40 MB (a reference,
not measured here).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

# Runs one command and prints "<wall seconds> <peak RSS KiB>" of that child alone.
_PROBE = """
import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
wall = time.perf_counter() - t
print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measure(command: list[str]) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *command], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1])


def default_fsarena() -> str:
    beside = Path(sys.executable).with_name("fsarena")
    return str(beside) if beside.exists() else shutil.which("fsarena") or "fsarena"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--fsarena", default=default_fsarena(), help="the entry point to time")
    args = parser.parse_args()
    # The interpreter the fsarena script runs on: a python3 found on PATH may be another
    # one, or a pyenv shim (a shell script) that alone takes longer than fsarena's start.
    python = sys.executable
    commands = {
        "python3 -c pass": [python, "-c", "pass"],
        "fsarena --help": [args.fsarena, "--help"],
    }
    samples: dict[str, list[tuple[float, int]]] = {name: [] for name in commands}
    for command in commands.values():  # warm the page cache, not counted
        measure(command)
    for _ in range(args.rounds):
        for name, command in commands.items():
            samples[name].append(measure(command))
    medians = {}
    print(f"{args.rounds} interleaved rounds; medians:")
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        rss = statistics.median(r for _, r in runs) / 1024
        medians[name] = (wall, rss)
        print(f"  {name:<16} {wall:6.3f} s  {rss:6.1f} MiB peak RSS")
    (base_wall, base_rss), (wall, rss) = medians.values()
    print(f"  ratio fsarena/python: {wall / base_wall:.1f}x time, {rss / base_rss:.1f}x memory")
    print("  target (issue #13, reference): fsarena --help <= 0.2 s and <= 40 MB")


if __name__ == "__main__":
    main()
