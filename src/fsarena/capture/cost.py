"""What tracing costs the traced service here, measured by each capture before it traces.

Both tracers slow a service down between its calls, and a paced replay must not
keep that time as the service's own think time.

- bpftrace: the probes read the clock and their own time (bpf.py's OVERHEAD_NS,
  taken out of the think time already), but not the kernel's dispatch to them on
  the way into and out of each call, and the part of a call's traced duration that
  is theirs. `ProbeCost` measures that remainder per call on a loop of the cheapest
  calls there are (an lseek and an fstat of one file, in Python): bare before the
  tracer starts (the loop times itself, best of three), then traced by it in the
  same session as the service, so its records time each iteration. The remainder
  is the traced iteration less the bare one less the probes' own measured time,
  per call. The capture adds it to each call's overhead (record.py), so the paced
  replay leaves it out of the think time too, and a paced replay of the loop lasts
  what the loop did bare. The trace's header keeps the figures (`tracer_cost`).
- strace stops the command at each call: `calibrate` times dd bare and under
  strace (its cost is said, not taken out: strace's own timestamps are around each
  stop).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsarena.capture import strace
from fsarena.capture.bpf import TASK_EVENTS, RawCall


@dataclass(frozen=True)
class Cost:
    """What strace costs per traced call here: measured just now (calibrate)."""

    calls: int
    bare_s: float
    traced_s: float

    @property
    def per_call_us(self) -> float:
        return max(0.0, (self.traced_s - self.bare_s) / self.calls * 1e6)


def calibrate(folder: Path, calls: int = 20_000) -> Cost:
    """dd's `calls` reads and writes of 512 bytes on a file, bare and under strace."""
    target = folder / "calibrate.dat"
    dd = ["dd", "if=/dev/zero", f"of={target}", "bs=512", f"count={calls // 2}", "status=none"]
    times = []
    for traced in (False, True):
        command = [*strace.argv(folder / "calibrate.strace", tuple(dd))] if traced else dd
        started = time.monotonic()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.monotonic() - started)
    target.unlink(missing_ok=True)
    (folder / "calibrate.strace").unlink(missing_ok=True)
    return Cost(calls, times[0], times[1])


# ---------------------------------------------------------------- bpftrace

LOOP = 10_000  # iterations of the loop: an lseek and an fstat each, about 0.1 s traced
BARE_TRIES = 3  # the bare loop's best of three: the machine's noise only slows it
# The loop, in Python (sys.executable): its own time per iteration, bare, on stdout.
LOOP_CODE = (
    "import os, sys, time\n"
    "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
    "n = int(sys.argv[2])\n"
    "lseek, fstat, SET = os.lseek, os.fstat, os.SEEK_SET\n"
    "t = time.perf_counter_ns()\n"
    "for _ in range(n):\n"
    "    lseek(fd, 0, SET)\n"
    "    fstat(fd)\n"
    "print((time.perf_counter_ns() - t) / n)\n"
)


def loop_argv(folder: Path) -> list[str]:
    return [sys.executable, "-S", "-c", LOOP_CODE, str(folder / "cost.dat"), str(LOOP)]


def bare_iteration_ns(folder: Path) -> float:
    """One untraced iteration, in ns: the best of BARE_TRIES loops, each timed by itself
    (so the interpreter's start is not in it)."""
    (folder / "cost.dat").write_bytes(b"\0" * 512)
    tries = []
    for _ in range(BARE_TRIES):
        done = subprocess.run(loop_argv(folder), capture_output=True, text=True, check=True)
        tries.append(float(done.stdout.strip()))
    return min(tries)


@dataclass(frozen=True)
class ProbeCost:
    """bpftrace's time per traced call here that its probes do not measure, in ns."""

    per_call_ns: float  # what the capture adds to each call's overhead (>= 0)
    iterations: int  # the loop's, traced
    calls_per_iteration: float
    bare_iteration_ns: float
    traced_iteration_ns: float
    probes_iteration_ns: float  # the probes' own measured time (OVERHEAD_NS) per iteration

    def record(self) -> dict[str, Any]:
        return {
            "per_call_ns": round(self.per_call_ns, 1),
            "iterations": self.iterations,
            "calls_per_iteration": round(self.calls_per_iteration, 3),
            "bare_iteration_ns": round(self.bare_iteration_ns, 1),
            "traced_iteration_ns": round(self.traced_iteration_ns, 1),
            "probes_iteration_ns": round(self.probes_iteration_ns, 1),
            "method": METHOD,
        }


METHOD = "a loop of lseek and fstat on one file, bare then traced"


def probe_cost(records: Sequence[RawCall], bare_ns: float) -> ProbeCost | None:
    """From the loop process's records, in start order; None when its loop is not whole.

    Its iterations run from one lseek to the next: the last LOOP lseeks are the loop's
    (the interpreter's start comes before it, and nothing seeks after it).
    """
    seeks = [i for i, r in enumerate(records) if r.name == "lseek"][-LOOP:]
    if len(seeks) < LOOP:
        return None
    first, last = seeks[0], seeks[-1]
    iterations = LOOP - 1
    inside = [r for r in records[first + 1 : last + 1] if r.name not in TASK_EVENTS]
    traced = (records[last].start_ns - records[first].start_ns) / iterations
    probes = sum(r.overhead_ns for r in inside) / iterations
    calls = len(inside) / iterations
    per_call = max(0.0, (traced - bare_ns - probes) / calls)
    return ProbeCost(per_call, iterations, calls, bare_ns, traced, probes)


def without_loop(records: list[RawCall], pid: int) -> tuple[list[RawCall], list[RawCall]]:
    """The loop process's records, and everyone else's."""
    return [r for r in records if r.pid == pid], [r for r in records if r.pid != pid]
