"""Measurement of one task: the record and the stdlib-only collector.

This module imports only the standard library (and fsarena.errors) so that a
remote or guest agent can measure with nothing but python3.

Methodology:
- Each command of a task runs in its own session, started the way GNU time starts
  it: fsarena runs the native launcher fsarena-timeit (native/timeit.c), which
  forks and execs the command and reports its ``wait4`` rusage (which includes
  every descendant it waited for) as one JSON line on a close-on-exec file.
  A child forked straight from this Python process would inherit its memory
  high-water mark, and its ru_maxrss would be fsarena's, not the command's.
  user/sys times and page faults are summed over the task's commands; max RSS is
  the largest of them. Without the launcher (not built) max RSS is None:
  unavailable, never fsarena's own.
- rusage misses work done on the task's behalf by kernel threads (loop workers,
  filesystem writeback, journal threads), which differs per filesystem, so the
  system-wide busy and iowait CPU time from /proc/stat is recorded beside it.
- Device I/O comes from /sys/block/DEV/stat, whose sector counts are always in
  512-byte units, whatever the device's logical block size. The same file counts
  the flush requests the device completed and the milliseconds they took (its
  16th and 17th fields, Linux >= 5.5): a measurement of how each filesystem
  reaches durability, recorded per run, never ranked.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.interrupt import Stop, deferred
from fsarena.measure.launcher import Rusage, launch, outcome

SECTOR_BYTES = 512  # /sys/block/*/stat counts 512-byte sectors (Documentation/block/stat.rst)


@dataclass(frozen=True)
class Command:
    """One child process of a task: its argv and where its stdout goes."""

    argv: tuple[str, ...]
    stdout_path: str | None = None  # None: discarded (/dev/null)
    cwd: str | None = None


@dataclass(frozen=True)
class Measurement:
    """Raw figures of one timed task. Statistics are computed on read, never stored."""

    wall_s: float
    user_s: float
    sys_s: float
    minor_faults: int
    major_faults: int
    # None: not measured (no launcher; old sessions: UNAVAILABLE_BEFORE, session/file.py)
    max_rss_kib: int | None
    device_read_bytes: int
    device_write_bytes: int
    system_busy_s: float  # all CPUs, from /proc/stat: includes kernel threads rusage misses
    system_iowait_s: float
    exit_code: int
    timed_out: bool = False
    # Flush requests the device completed in the region and their time (ms), from its
    # own counters; None: not read (kernel < 5.5, no device, sessions before them).
    device_flushes: int | None = None
    device_flush_ms: int | None = None
    # A loop device's state read before the region: direct I/O (1) or buffered (0) from
    # /sys/block/loopN/loop/dio, and the share of its image file the host has allocated.
    # None: not a loop device (--device, a guest's disk) or not read (older sessions).
    loop_direct_io: int | None = None
    loop_allocated_pct: float | None = None
    extra: dict[str, float] = field(
        default_factory=dict
    )  # task-specific values (capacity_pct, ...)

    @property
    def cpu_pct(self) -> float:
        """CPU % as GNU time prints it: (user + sys) / wall."""
        return 100.0 * (self.user_s + self.sys_s) / self.wall_s if self.wall_s > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Measurement:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})  # type: ignore[arg-type]


@dataclass(frozen=True)
class DeviceStat:
    """A block device's counters at one moment (Documentation/block/stat.rst)."""

    read_bytes: int = 0
    write_bytes: int = 0
    flushes: int | None = None  # None: the kernel does not count them (< 5.5)
    flush_ms: int | None = None


def read_device_counters(device: str | None) -> DeviceStat:
    """The counters so far of a block device such as /dev/loop3 (all zero for None)."""
    if device is None:
        return DeviceStat()
    name = Path(os.path.realpath(device)).name
    # /sys/class/block has partitions (sda1) as well as whole disks; /sys/block only disks.
    stat = Path(f"/sys/class/block/{name}/stat")
    try:
        parts = stat.read_text().split()
    except OSError as exc:
        raise FsarenaError(
            f"cannot read {stat} for {device}: {exc}; is it a block device?"
        ) from exc
    flushes = int(parts[15]) if len(parts) > 16 else None
    flush_ms = int(parts[16]) if len(parts) > 16 else None
    return DeviceStat(int(parts[2]) * SECTOR_BYTES, int(parts[6]) * SECTOR_BYTES, flushes, flush_ms)


def read_device_stat(device: str | None) -> tuple[int, int]:
    """(read_bytes, write_bytes) so far on a block device such as /dev/loop3."""
    stat = read_device_counters(device)
    return stat.read_bytes, stat.write_bytes


def read_loop_state(device: str | None) -> tuple[int | None, float | None]:
    """(direct I/O 1 or 0, % of the image allocated on the host) of a loop device, else Nones."""
    if device is None:
        return None, None
    loop = Path(f"/sys/class/block/{Path(os.path.realpath(device)).name}/loop")
    try:
        dio = int(loop.joinpath("dio").read_text().strip())
        backing = loop.joinpath("backing_file").read_text().strip()
    except (OSError, ValueError):
        return None, None
    try:
        st = os.stat(backing)
    except OSError:  # deleted, or in another mount namespace
        return dio, None
    allocated = 100.0 * min(st.st_blocks * 512, st.st_size) / st.st_size if st.st_size else None
    return dio, allocated


def _delta(before: int | None, after: int | None) -> int | None:
    return None if before is None or after is None else after - before


def read_cpu_times() -> tuple[float, float]:
    """(busy_s, iowait_s) summed over all CPUs since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        fields_ = f.readline().split()[1:]
    ticks = [int(x) for x in fields_]
    hz = os.sysconf("SC_CLK_TCK")
    # user nice system idle iowait irq softirq steal (guest is already in user)
    busy = (
        ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + (ticks[7] if len(ticks) > 7 else 0)
    )
    return busy / hz, ticks[4] / hz


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


GROUP_GONE_S = 10.0  # at most this long for a killed command's processes to be gone


def wait_group_gone(pgid: int, timeout_s: float = GROUP_GONE_S) -> None:
    """Until no process of the group is left (a killed cp ends once its I/O returns).

    Waiting for the launcher is not enough: the command it ran (and what that started)
    was still ending when fsarena had exited, a process of the run left behind.
    """
    deadline = time.monotonic() + timeout_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (a zombie holds nothing; an init that
    does not reap would keep it forever)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":  # state, ppid, pgrp
            return True
    return False


@dataclass(frozen=True)
class _Outcome:
    exit_code: int
    rusage: Rusage | None
    timed_out: bool
    stderr: str


def _run_one(cmd: Command, deadline: float) -> _Outcome:
    """Run one command to completion; kill its process group at the deadline."""
    stdout = open(cmd.stdout_path, "wb") if cmd.stdout_path else subprocess.DEVNULL  # noqa: SIM115
    # stderr and the launcher's report go to files, not pipes: a command that leaves a
    # daemon behind (a FUSE mount) would hold a pipe open until it exits.
    errors = tempfile.TemporaryFile()  # noqa: SIM115
    argv, report = launch(cmd.argv)
    # A Ctrl-C (or SIGTERM, SIGHUP) that lands inside Popen, after the fork, would leave the
    # child running in its own session with nobody to stop it (a cp still reading the
    # source, which then cannot be unmounted): hold the stop signals until `proc` exists.
    # The child inherits the mask; fsarena stops children with SIGKILL, which no mask holds.
    # The launcher and the command share the child's process group: killpg stops both.
    # The mask holds the signal in this thread only: another thread (a timer's) can take
    # it, and Python then runs the handler here, inside Popen. The run's handler holds
    # the stop there too (fsarena.interrupt.deferred), and it is raised below.
    timed_out = threading.Event()
    timer: threading.Timer | None = None

    def expire() -> None:
        timed_out.set()
        _kill_group(proc)

    held = signal.pthread_sigmask(signal.SIG_BLOCK, Stop.SIGNALS)
    with deferred() as stopped:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=errors,
                cwd=cmd.cwd,
                pass_fds=() if report is None else (report.fileno(),),
                start_new_session=True,  # a Ctrl-C reaches fsarena, which then stops the group
            )
        except BaseException as exc:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            errors.close()
            if report is not None:
                report.close()
            if isinstance(exc, FileNotFoundError):
                raise FsarenaError(
                    f"command not found: {cmd.argv[0]}; run `fsarena check`"
                ) from exc
            raise
        finally:
            if not isinstance(stdout, int):
                stdout.close()
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a held Ctrl-C is raised here
        stopped.check()  # or here, if another thread took it
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
        timer.start()
        _, status, ru = os.wait4(proc.pid, 0)
    except BaseException:
        _kill_group(proc)
        proc.wait()
        wait_group_gone(proc.pid)
        errors.close()
        if report is not None:
            report.close()
        raise
    finally:
        if timer is not None:
            timer.cancel()
    try:
        code, usage = outcome(cmd.argv[0], report, status, ru)
    finally:
        if report is not None:
            report.close()
    with errors:
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")[-2000:].strip()
    return _Outcome(code, usage, timed_out.is_set(), stderr)


@dataclass(frozen=True)
class Timed:
    """A measurement and, when a command failed, the tail of its stderr."""

    measurement: Measurement
    stderr: str


def measure_commands(commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
    """Run commands one after another as one timed region and measure it.

    The region stops at the first command that fails. Device counters and
    /proc/stat are read just outside the region, so their cost is not timed.
    Wall time is the sum of the launcher's per-command times (fork to wait4, as
    GNU time measures), so fsarena's own start-up of each command is not in it;
    without the launcher it is the whole region's, measured here.
    """
    usage = Rusage()
    outcome = _Outcome(0, None, False, "")
    loop_dio, loop_allocated = read_loop_state(device)
    dev0 = read_device_counters(device)
    busy0, iowait0 = read_cpu_times()
    start = time.perf_counter()
    deadline = time.monotonic() + timeout_s
    for cmd in commands:
        outcome = _run_one(cmd, deadline)
        usage = usage.add(outcome.rusage)
        if outcome.exit_code != 0 or outcome.timed_out:
            break
    wall = time.perf_counter() - start
    busy1, iowait1 = read_cpu_times()
    dev1 = read_device_counters(device)
    measurement = Measurement(
        wall_s=wall if usage.wall_s is None else usage.wall_s,
        user_s=usage.user_s,
        sys_s=usage.sys_s,
        minor_faults=usage.minor_faults,
        major_faults=usage.major_faults,
        max_rss_kib=usage.max_rss_kib,
        device_read_bytes=dev1.read_bytes - dev0.read_bytes,
        device_write_bytes=dev1.write_bytes - dev0.write_bytes,
        system_busy_s=busy1 - busy0,
        system_iowait_s=iowait1 - iowait0,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        device_flushes=_delta(dev0.flushes, dev1.flushes) if device else None,
        device_flush_ms=_delta(dev0.flush_ms, dev1.flush_ms) if device else None,
        loop_direct_io=loop_dio,
        loop_allocated_pct=loop_allocated,
    )
    return Timed(measurement, outcome.stderr if outcome.exit_code else "")
