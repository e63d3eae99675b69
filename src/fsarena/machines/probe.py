"""Proof that a machine profile is in force: the throttled disk, the CPU share, the memory cap.

Measured before the run, under the profile, through the same executor the
tasks use, and stored in the session beside the profile:
- disk: fio's sequential write then read of a fresh throttled test loop
  device (ceiling.py's machinery: O_DIRECT, 4 MiB blocks, 16 in flight, two
  passes per direction), sized to last about PROBE_S seconds per pass;
- CPU: a busy loop runs for CPU_PROBE_S seconds of wall time inside the CPU
  cgroup; the CPU time it got over the wall time is the share it had (one
  thread: at most one core);
- memory: dd writes 1.5x the memory limit through the page cache of the work
  directory's (unthrottled) filesystem inside the memory cgroup; the cgroup's
  peak usage must stay at the limit while more than that was written.
A figure more than 10 % off the profile is a warning in the session, with
what it means and what to do.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.host import cgroups
from fsarena.host.executor import Executor, TaskExecutor
from fsarena.machines.enforce import Machine
from fsarena.measure.collect import Command
from fsarena.plan.machines import Limits
from fsarena.plan.model import Plan
from fsarena.session.file import CeilingSample
from fsarena.targets import ceiling_target
from fsarena.targets.ceiling import measure_ceiling

MIB = 1 << 20
PROBE_S = 4.0  # per fio pass: long enough that blk-throttle's first-slice burst is noise
MIN_PROBE_BYTES = 16 * MIB
MAX_PROBE_BYTES = 1024 * MIB
CPU_PROBE_S = 2.0
MEMORY_OVERSHOOT = 1.5  # write this many times the limit: the cap must hold the cache down
TOLERANCE = 0.10  # the bar: warn when a figure misses the profile by more than 10 %
BUSY_LOOP = "import time\nend = time.monotonic() + {s}\nwhile time.monotonic() < end:\n    pass\n"


def probe_bytes(limits: Limits) -> int:
    """How much fio moves per pass: PROBE_S seconds at the slower limited direction."""
    rates = [r for r in (limits.disk_read_bytes_per_s, limits.disk_write_bytes_per_s) if r]
    size = min(max(int(min(rates) * PROBE_S), MIN_PROBE_BYTES), MAX_PROBE_BYTES)
    return size // MIB * MIB


def probe_disk(executor: Executor, plan: Plan, limits: Limits, scratch: str) -> list[CeilingSample]:
    nbytes = probe_bytes(limits)
    # Repetition 0: the probe's own image (images/ceiling-r0.img), throttled like every test image.
    target = ceiling_target(plan, 0, nbytes)
    output = str(Path(scratch, "machine-probe-fio.json"))
    return measure_ceiling(executor, target, nbytes, output, plan.task_timeout_s, 0)


def probe_cpu(executor: TaskExecutor, timeout_s: float) -> dict[str, float]:
    argv = (sys.executable, "-c", BUSY_LOOP.format(s=CPU_PROBE_S))
    m = executor.measure([Command(argv)], None, timeout_s).measurement
    cpu_s = m.user_s + m.sys_s
    return {"wall_s": m.wall_s, "cpu_s": cpu_s, "share_cores": cpu_s / m.wall_s}


def probe_memory(
    executor: TaskExecutor, group: Path, limit_bytes: int, scratch: str, timeout_s: float
) -> dict[str, int]:
    count = int(limit_bytes * MEMORY_OVERSHOOT) // MIB
    path = str(Path(scratch, "machine-probe-memory"))
    argv = ("dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={count}")
    try:
        timed = executor.measure([Command(argv)], None, timeout_s)
    finally:
        executor.remove_path(path)
    if timed.measurement.exit_code != 0:
        return {"written_bytes": 0, "peak_bytes": 0, "limit_bytes": limit_bytes}
    limit_file = "memory.max" if (group / "memory.max").exists() else "memory.limit_in_bytes"
    return {
        "written_bytes": count * MIB,
        "peak_bytes": int(executor.read_text(cgroups.peak_file(str(group))).strip()),
        "limit_bytes": int(executor.read_text(str(group / limit_file)).strip()),
    }


def run_probe(executor: Executor, plan: Plan, machine: Machine) -> dict[str, Any]:
    """Every probe the profile calls for; the record the session keeps, misses included."""
    scratch = str(Path(plan.workdir, "scratch"))
    executor.make_dir(scratch)
    limits = machine.limits
    record: dict[str, Any] = {"at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    failed = []
    try:
        if machine.profile.limits_disk:
            samples = probe_disk(executor, plan, limits, scratch)
            record["disk"] = [s.model_dump(mode="json") for s in samples]
        if limits.cpu_cores is not None:
            record["cpu"] = probe_cpu(executor, plan.task_timeout_s)
        group = machine.memory_group()
        if limits.memory_bytes is not None and group is not None:
            record["memory"] = probe_memory(
                executor, group, limits.memory_bytes, scratch, plan.task_timeout_s
            )
    except (FsarenaError, OSError) as exc:
        # Faults are data: the run goes on, its session says the profile is unproven.
        failed.append(f"the machine profile could not be probed ({exc}): its limits are unproven")
    record["misses"] = failed + misses(record, limits)
    return record


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def disk_rates(record: dict[str, Any]) -> dict[str, float]:
    """Mean probed bytes/s per direction."""
    found: dict[str, list[float]] = {}
    for sample in record.get("disk", []):
        found.setdefault(str(sample["direction"]), []).append(float(sample["bytes_per_s"]))
    return {direction: _mean(rates) for direction, rates in found.items()}


def _miss(what: str, got: float, wanted: float, unit: str, low: str, high: str) -> list[str]:
    """A probed figure more than TOLERANCE off the profile, with what a low or high one means."""
    off = got / wanted - 1
    if abs(off) <= TOLERANCE:
        return []
    meaning = low if off < 0 else high
    return [f"{what} {got:.3g} {unit}, {off:+.0%} off the profile's {wanted:.3g} {unit}: {meaning}"]


def misses(record: dict[str, Any], limits: Limits) -> list[str]:
    """Each probed figure more than TOLERANCE off the profile, said with what to do."""
    found = []
    wanted = {"read": limits.disk_read_bytes_per_s, "write": limits.disk_write_bytes_per_s}
    for direction, rate in disk_rates(record).items():
        if limit := wanted.get(direction):
            found += _miss(
                f"the throttled test device {direction}s at",
                rate / MIB,
                limit / MIB,
                "MiB/s",
                "the disk under the images is slower than the profile, which then cannot be "
                "emulated here",
                "the throttle is not in force (see the machine's cgroup backend)",
            )
    cpu = record.get("cpu")
    if cpu and limits.cpu_cores is not None:
        found += _miss(
            "a CPU-bound probe got",
            float(cpu["share_cores"]),
            min(limits.cpu_cores, 1.0),  # one thread: at most one core
            "of a core",
            "the host is busy (other runs?): CPU-bound tasks will be slower than the profile; "
            "rerun when it is quiet",
            "the CPU quota is not in force",
        )
    memory = record.get("memory")
    if memory and limits.memory_bytes is not None:
        found += _memory_miss(int(memory["peak_bytes"]), int(memory["written_bytes"]), limits)
    return found


def _memory_miss(peak: int, written: int, limits: Limits) -> list[str]:
    assert limits.memory_bytes is not None
    if not written:
        return ["the memory probe (dd into the page cache) failed: the cap is unproven"]
    if peak <= limits.memory_bytes * (1 + TOLERANCE):
        return []
    return [
        f"memory is not capped: {written / MIB:.0f} MiB written through the page cache "
        f"peaked at {peak / MIB:.0f} MiB, above the profile's {limits.memory_bytes / MIB:.0f} MiB"
    ]
