"""Measurement of one task: the record, the metric registry and the stdlib-only collector.

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
  512-byte units, whatever the device's logical block size.
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
from typing import Literal

from fsarena.errors import FsarenaError
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
    max_rss_kib: int | None  # None: not measured (no launcher; old sessions, see results.py)
    device_read_bytes: int
    device_write_bytes: int
    system_busy_s: float  # all CPUs, from /proc/stat: includes kernel threads rusage misses
    system_iowait_s: float
    exit_code: int
    timed_out: bool = False
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


Direction = Literal["lower", "higher"]
MeanKind = Literal["arithmetic", "harmonic"]


@dataclass(frozen=True)
class Metric:
    """What a number means: its unit, which direction is better, how to average it."""

    name: str
    label: str
    unit: str
    better: Direction
    mean: MeanKind = "arithmetic"  # harmonic for rates (mmtests), arithmetic for times and counts
    scale: float = 1.0  # multiply the raw value by this to show it in `unit`
    # The practical threshold: a difference matters to a person only when it exceeds
    # both this share of the better value and this many raw units (seconds, bytes,
    # faults, percentage points). Below it reports say "no practical difference",
    # never "wins", however significant (7 against 9 major faults, a few KB read).
    practical_rel: float = 0.05
    practical_abs: float = 0.0
    # A deterministic figure (capacity, a fixed copy's bytes): the same on every run
    # of one filesystem, so it is shown as measured, without sd, CI, CV or flags.
    exact: bool = False


def _bonnie_metrics() -> tuple[Metric, ...]:
    """bonnie++'s rates (higher, harmonic mean) and the CPU % of each test."""
    rates = (
        ("putc", "per-char write", "MB/s"),
        ("seq_write", "block write", "MB/s"),
        ("rewrite", "rewrite", "MB/s"),
        ("getc", "per-char read", "MB/s"),
        ("seq_read", "block read", "MB/s"),
        ("random_seeks", "random seeks", "/s"),
        ("seq_create", "seq. create", "/s"),
        ("seq_stat", "seq. stat", "/s"),
        ("seq_delete", "seq. delete", "/s"),
        ("random_create", "random create", "/s"),
        ("random_stat", "random stat", "/s"),
        ("random_delete", "random delete", "/s"),
    )
    out = []
    for key, label, unit in rates:
        suffix = "mb_s" if unit == "MB/s" else "per_s"
        out.append(Metric(f"bonnie_{key}_{suffix}", label, unit, "higher", "harmonic"))
        out.append(Metric(f"bonnie_{key}_cpu_pct", f"{label} CPU", "%", "lower"))
    return tuple(out)


def _space_mib(name: str, label: str) -> Metric:
    """A space figure in MiB as article D printed it: fixed for a given tree, 1 MiB matters."""
    return Metric(name, label, "MiB", "lower", scale=1 / 2**20, practical_abs=2**20, exact=True)


# The metric registry: one line per metric. Reports look metrics up here;
# `extra` metrics that tasks produce (capacity, rates) are registered the same way.
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("wall_s", "time", "s", "lower", practical_abs=0.01),
        Metric("user_s", "user CPU", "s", "lower", practical_abs=0.01),
        Metric("sys_s", "sys CPU", "s", "lower", practical_abs=0.01),
        Metric("cpu_pct", "CPU", "%", "lower", practical_abs=2.0),
        Metric(
            "cpu_s", "CPU time", "s", "lower", practical_abs=0.01
        ),  # user + sys of the task's processes
        Metric("minor_faults", "minor faults", "", "lower", practical_abs=1000),
        Metric("major_faults", "major faults", "", "lower", practical_abs=100),
        Metric("max_rss_kib", "max RSS", "MiB", "lower", scale=1 / 1024, practical_abs=1024),
        Metric("device_read_bytes", "device read", "MB", "lower", scale=1e-6, practical_abs=1e6),
        Metric(
            "device_write_bytes", "device written", "MB", "lower", scale=1e-6, practical_abs=1e6
        ),
        Metric("system_busy_s", "system CPU busy", "s", "lower", practical_abs=0.01),
        Metric("system_iowait_s", "system iowait", "s", "lower", practical_abs=0.01),
        Metric(
            "capacity_pct",
            "capacity",
            "%",
            "higher",
            practical_rel=0,
            practical_abs=0.5,
            exact=True,
        ),
        # Logical bytes the task moved (extra["payload_bytes"]) per second of wall time.
        Metric("throughput_bytes_per_s", "throughput", "MB/s", "higher", "harmonic", 1e-6),
        # That throughput as a share of the best raw device throughput fio measured.
        Metric("ceiling_pct", "of device ceiling", "%", "higher", "harmonic", practical_abs=2.0),
        Metric(
            "available_bytes",
            "available",
            "MB",
            "higher",
            scale=1e-6,
            practical_abs=1e6,
            exact=True,
        ),
        # Rates of the article tasks (MB = 10^6 bytes, as the articles printed).
        Metric("files_per_s", "files created", "/s", "higher", "harmonic"),
        # Article D's space probe, in MiB as the article printed.
        _space_mib("df_used_before_bytes", "df used before"),
        _space_mib("df_used_after_bytes", "df used after"),
        _space_mib("df_used_difference_bytes", "difference"),
        _space_mib("du_bytes", "du"),
        _space_mib("du_apparent_bytes", "du --apparent-size"),
        _space_mib("space_overhead_bytes", "overhead"),
        # bonnie++'s own figures (article C), from its CSV.
        *_bonnie_metrics(),
        Metric("bonnie_tests_too_fast", "bonnie++ tests too fast to time", "", "lower"),
        Metric("bonnie_size_mib", "bonnie++ file", "MiB", "higher", exact=True),
        Metric("bonnie_ram_mib", "bonnie++ -r (cgroup limit)", "MiB", "lower", exact=True),
        Metric("bonnie_files_k", "bonnie++ files", "x1024", "higher", exact=True),
        Metric("cgroup_memory_limit_bytes", "memory limit", "MiB", "lower", scale=1 / 2**20),
        Metric("cgroup_memory_peak_bytes", "memory peak", "MiB", "lower", scale=1 / 2**20),
        # powerloss (crash test), per filesystem over all its workloads' crash states
        Metric("crash_states", "states tested", "", "higher"),
        Metric("crash_mounted_pct", "mounted", "%", "higher", practical_rel=0),
        Metric("crash_fsck_clean_pct", "fsck clean", "%", "higher", practical_rel=0),
        Metric(
            "crash_states_losing_data", "states losing fsync'ed data", "", "lower", practical_rel=0
        ),
        Metric("crash_files_lost", "fsync'ed files lost", "", "lower", practical_rel=0),
        Metric("crash_recovery_mount_ms", "recovery mount", "ms", "lower"),
        Metric("crash_clean_mount_ms", "clean mount", "ms", "lower"),
        Metric("crash_fsck_ms", "fsck", "ms", "lower"),
        # Today's server workloads (tasks/sqlite.py, pgbench.py, fsmark.py, dbench.py, fio.py)
        Metric("transactions_per_s", "transaction rate", "/s", "higher", "harmonic"),
        Metric("sqlite_databases", "databases", "", "higher"),
        Metric("pgbench_tps", "TPS", "/s", "higher", "harmonic"),
        Metric("pgbench_latency_avg_ms", "latency avg", "ms", "lower"),
        Metric("pgbench_latency_p99_ms", "latency p99", "ms", "lower"),
        Metric("pgbench_transactions", "transactions", "", "higher"),
        Metric("pgbench_scale_factor", "scale factor", "", "higher"),
        Metric("pg_database_bytes", "database", "MB", "higher", scale=1e-6),
        Metric("pg_shared_buffers_bytes", "shared_buffers", "MB", "lower", scale=1e-6),
        Metric("fsmark_files_per_s", "synced-file rate", "/s", "higher", "harmonic"),
        Metric("dbench_mb_s", "throughput", "MB/s", "higher", "harmonic"),
        Metric("dbench_max_latency_ms", "max latency", "ms", "lower"),
        Metric("dbench_clients", "clients", "", "higher"),
        Metric("fio_iops", "IOPS", "/s", "higher", "harmonic"),
        Metric("fio_lat_p99_ms", "latency p99", "ms", "lower"),
        Metric("fio_lat_mean_ms", "latency mean", "ms", "lower"),
        Metric("fio_sync_p99_ms", "fsync p99", "ms", "lower"),
        Metric("fio_direct", "O_DIRECT (1) or buffered (0)", "", "higher"),
        Metric("working_set_bytes", "working set", "MB", "higher", scale=1e-6),
        Metric("page_cache_limit_bytes", "page cache allowed", "MB", "lower", scale=1e-6),
        Metric("fits_page_cache", "fits in page cache (1: yes)", "", "lower"),
        # Layout of an aged tree (fsarena.aging.layout): FIEMAP extents, the static layout
        # score after Conway et al. (1 = one sequential run), free-space fragmentation.
        Metric("extents_per_file", "extents per file", "", "lower"),
        Metric("fragmented_files_pct", "fragmented files", "%", "lower"),
        Metric("layout_score", "layout score", "", "higher"),
        Metric("free_extents", "free extents", "", "lower"),
        Metric("free_extent_mean_bytes", "mean free extent", "MiB", "higher", scale=1 / 2**20),
    )
}


def metric_value(measurement: Measurement, name: str) -> float | None:
    """The raw value of a metric for one measurement, or None if it has none."""
    if name in measurement.extra:
        return float(measurement.extra[name])
    if name == "cpu_pct":
        return measurement.cpu_pct
    if name == "throughput_bytes_per_s":
        payload = measurement.extra.get("payload_bytes", 0)
        return payload / measurement.wall_s if payload and measurement.wall_s > 0 else None
    if name == "cpu_s":
        return measurement.user_s + measurement.sys_s
    value = getattr(measurement, name, None)
    return float(value) if isinstance(value, int | float) else None


def read_device_stat(device: str | None) -> tuple[int, int]:
    """(read_bytes, write_bytes) so far on a block device such as /dev/loop3."""
    if device is None:
        return 0, 0
    name = Path(os.path.realpath(device)).name
    # /sys/class/block has partitions (sda1) as well as whole disks; /sys/block only disks.
    stat = Path(f"/sys/class/block/{name}/stat")
    try:
        parts = stat.read_text().split()
    except OSError as exc:
        raise FsarenaError(
            f"cannot read {stat} for {device}: {exc}; is it a block device?"
        ) from exc
    return int(parts[2]) * SECTOR_BYTES, int(parts[6]) * SECTOR_BYTES


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
    # A Ctrl-C (or SIGTERM) that lands inside Popen, after the fork, would leave the child
    # running in its own session with nobody to stop it (a cp still reading the source,
    # which then cannot be unmounted): hold both signals until `proc` exists. The child
    # inherits the mask; fsarena stops children with SIGKILL, which no mask holds.
    # The launcher and the command share the child's process group: killpg stops both.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
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
            raise FsarenaError(f"command not found: {cmd.argv[0]}; run `fsarena check`") from exc
        raise
    finally:
        if not isinstance(stdout, int):
            stdout.close()
    timed_out = threading.Event()
    timer: threading.Timer | None = None

    def expire() -> None:
        timed_out.set()
        _kill_group(proc)

    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a held Ctrl-C is raised here
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
        timer.start()
        _, status, ru = os.wait4(proc.pid, 0)
    except BaseException:
        _kill_group(proc)
        proc.wait()
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
    read0, write0 = read_device_stat(device)
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
    read1, write1 = read_device_stat(device)
    measurement = Measurement(
        wall_s=wall if usage.wall_s is None else usage.wall_s,
        user_s=usage.user_s,
        sys_s=usage.sys_s,
        minor_faults=usage.minor_faults,
        major_faults=usage.major_faults,
        max_rss_kib=usage.max_rss_kib,
        device_read_bytes=read1 - read0,
        device_write_bytes=write1 - write0,
        system_busy_s=busy1 - busy0,
        system_iowait_s=iowait1 - iowait0,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
    )
    return Timed(measurement, outcome.stderr if outcome.exit_code else "")
