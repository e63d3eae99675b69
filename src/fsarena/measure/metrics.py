"""The metric registry: what each number means (unit, better direction, mean, threshold).

Reports, verdicts and the store look metrics up here. Standard library only, like
fsarena.measure.collect, so that a guest agent could import it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from fsarena.measure.collect import Measurement

# A throughput above this many times the device's raw ceiling (fio) cannot have reached
# the device: the run is flagged invalid (run/sequence.py). Why 1.5 (fio's own spread),
# and where it cannot catch a cached figure: targets/ceiling.py's docstring; reports
# state the limit. Where the session measured the page cache, the tolerance is derived
# from it (ceiling_tolerance), never below this.
CEILING_TOLERANCE = 1.5


def ceiling_tolerance(page_cache_ratio: float | None) -> float:
    """The tolerance for a machine whose page cache reads page_cache_ratio x its device.

    An honest rate is at most the ceiling plus fio's spread (CEILING_TOLERANCE); a cached
    one runs near the page cache's speed. The flag sits at the geometric middle of the
    two speeds, sqrt(ratio) x the ceiling, never below CEILING_TOLERANCE. Where the page
    cache is not faster than CEILING_TOLERANCE x the device (ratio <= 1.5, NVMe), no
    tolerance separates a cached rate from a real one: the report says so
    (ceiling_catches is False).
    """
    if page_cache_ratio is None or page_cache_ratio <= 0:
        return CEILING_TOLERANCE
    return max(CEILING_TOLERANCE, math.sqrt(page_cache_ratio))


def ceiling_catches(page_cache_ratio: float | None) -> bool | None:
    """Can a cached rate be told from a real one here? None: the page cache was not measured."""
    if page_cache_ratio is None:
        return None
    return page_cache_ratio > CEILING_TOLERANCE


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
    # False: a measurement or a configuration value shown beside the results (the flushes
    # a run issued, a database's size, whether fio ran direct), never ranked: neither
    # more nor less of it is better.
    ranked: bool = True


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
        # user + sys of the task's processes, and of the server it started (server_cpu_s)
        Metric("cpu_s", "CPU time", "s", "lower", practical_abs=0.01),
        # A server's CPU over the timed region, from its cgroup (tasks/pgbench.py): shown,
        # its cost judged in cpu_s and per unit of work (a fixed-time run's server does
        # more work, and uses more CPU, on a faster filesystem).
        Metric("server_user_s", "server user CPU", "s", "lower", ranked=False),
        Metric("server_sys_s", "server sys CPU", "s", "lower", ranked=False),
        Metric("server_cpu_s", "server CPU", "s", "lower", ranked=False),
        Metric("minor_faults", "minor faults", "", "lower", practical_abs=1000),
        Metric("major_faults", "major faults", "", "lower", practical_abs=100),
        Metric("max_rss_kib", "max RSS", "MiB", "lower", scale=1 / 1024, practical_abs=1024),
        Metric("device_read_bytes", "device read", "MB", "lower", scale=1e-6, practical_abs=1e6),
        Metric(
            "device_write_bytes", "device written", "MB", "lower", scale=1e-6, practical_abs=1e6
        ),
        # How the run reached durability, from the device's own counters: shown, not ranked.
        Metric("device_flushes", "device flushes", "", "lower", ranked=False),
        Metric("device_flush_ms", "device flush time", "ms", "lower", ranked=False),
        # The loop device as read before the run (measure.core.read_loop_state).
        Metric("loop_direct_io", "loop direct I/O (1) or buffered (0)", "", "higher", ranked=False),
        Metric("loop_allocated_pct", "loop image allocated", "%", "higher", ranked=False),
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
        # A compressing configuration's writes (run/space.py): what reached the device
        # against what the task wrote. The ratio is a measurement, not an outcome: fewer
        # device bytes can cost CPU and time, so it is never ranked; the space the files
        # take (compsize's disk usage) is an outcome, and less of it is better.
        Metric("logical_write_bytes", "written (logical)", "MB", "lower", scale=1e-6, ranked=False),
        Metric("device_per_logical", "device bytes per logical byte", "", "lower", ranked=False),
        Metric("compsize_disk_bytes", "space used (compsize)", "MB", "lower", scale=1e-6),
        Metric(
            "compsize_uncompressed_bytes", "uncompressed", "MB", "lower", scale=1e-6, ranked=False
        ),
        Metric("compsize_referenced_bytes", "referenced", "MB", "lower", scale=1e-6, ranked=False),
        Metric("compsize_disk_added_bytes", "space the task added", "MB", "lower", scale=1e-6),
        Metric(
            "compsize_uncompressed_added_bytes",
            "uncompressed size the task added",
            "MB",
            "lower",
            scale=1e-6,
            ranked=False,
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
        Metric("bonnie_size_mib", "bonnie++ file", "MiB", "higher", exact=True, ranked=False),
        Metric(
            "bonnie_ram_mib", "bonnie++ -r (cgroup limit)", "MiB", "lower", exact=True, ranked=False
        ),
        Metric("dirty_bytes", "dirty at umount", "MiB", "higher", scale=1 / 2**20, ranked=False),
        Metric("bonnie_files_k", "bonnie++ files", "x1024", "higher", exact=True, ranked=False),
        Metric(
            "cgroup_memory_limit_bytes",
            "memory limit",
            "MiB",
            "lower",
            scale=1 / 2**20,
            ranked=False,
        ),
        Metric("cgroup_memory_peak_bytes", "memory peak", "MiB", "lower", scale=1 / 2**20),
        # powerloss (power-loss test), per filesystem over all its workloads' crash states
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
        Metric("sqlite_databases", "databases", "", "higher", ranked=False),
        # Rates of fixed-duration runs (pgbench -T, fio time_based, dbench -t): each is
        # work over the same time, so their mean is arithmetic (harmonic is for fixed work).
        Metric("pgbench_tps", "TPS", "/s", "higher"),
        Metric("pgbench_latency_avg_ms", "latency avg", "ms", "lower"),
        Metric("pgbench_latency_p99_ms", "latency p99", "ms", "lower"),
        Metric("pgbench_transactions", "transactions", "", "higher"),
        Metric("pgbench_scale_factor", "scale factor", "", "higher", ranked=False),
        Metric("pg_database_bytes", "database", "MB", "higher", scale=1e-6, ranked=False),
        Metric(
            "pg_shared_buffers_bytes", "shared_buffers", "MB", "lower", scale=1e-6, ranked=False
        ),
        Metric("fsmark_files_per_s", "synced-file rate", "/s", "higher", "harmonic"),
        Metric("dbench_mb_s", "throughput", "MB/s", "higher"),
        Metric("dbench_max_latency_ms", "max latency", "ms", "lower"),
        Metric("dbench_clients", "clients", "", "higher", ranked=False),
        Metric("fio_iops", "IOPS", "/s", "higher"),
        # A filesystem where fio's O_DIRECT job did not reach the device: buffered IOPS,
        # ranked only against other buffered runs, never with the direct ones above.
        Metric("fio_iops_buffered", "IOPS (buffered, ranked apart)", "/s", "higher"),
        Metric("fio_ios", "I/Os done", "", "higher", ranked=False),
        # CPU per unit of work of the fixed-duration tasks (tasks.base.cpu_per_unit).
        Metric("cpu_us_per_io", "CPU per I/O", "µs", "lower"),
        Metric("cpu_ms_per_transaction", "CPU per transaction", "ms", "lower"),
        Metric("cpu_ms_per_mb", "CPU per MB", "ms", "lower"),
        Metric("fio_lat_p99_ms", "latency p99", "ms", "lower"),
        Metric("fio_lat_mean_ms", "latency mean", "ms", "lower"),
        Metric("fio_sync_p99_ms", "fsync p99", "ms", "lower"),
        Metric("fio_direct", "O_DIRECT (1) or buffered (0)", "", "higher", ranked=False),
        Metric("working_set_bytes", "working set", "MB", "higher", scale=1e-6, ranked=False),
        Metric(
            "page_cache_limit_bytes", "page cache allowed", "MB", "lower", scale=1e-6, ranked=False
        ),
        Metric("fits_page_cache", "fits in page cache (1: yes)", "", "lower", ranked=False),
        # Layout of an aged tree (fsarena.aging.layout): FIEMAP extents, the static layout
        # score after Conway et al. (1 = one sequential run), free-space fragmentation.
        Metric("extents_per_file", "extents per file", "", "lower"),
        Metric("fragmented_files_pct", "fragmented files", "%", "lower"),
        Metric("layout_score", "layout score", "", "higher"),
        Metric("free_extents", "free extents", "", "lower"),
        Metric("free_extent_mean_bytes", "mean free extent", "MiB", "higher", scale=1 / 2**20),
        # A captured service replayed (tasks/replay.py, native/replay.c): the time inside its
        # file-system calls summed over its threads, the latency of all its calls, how far
        # behind the traced pace it ended, and the calls that did not do what they did when
        # captured. The replay error (|replay's time in calls / capture's - 1|, on the
        # capture's own filesystem type and device class) is the resolution of the replay:
        # analysis/replay.py reads it; it is never ranked.
        Metric("replay_fs_s", "time in file-system calls", "s", "lower", practical_abs=0.001),
        Metric("replay_p50_us", "call latency p50", "µs", "lower"),
        Metric("replay_p99_us", "call latency p99", "µs", "lower"),
        Metric("replay_p999_us", "call latency p99.9", "µs", "lower"),
        Metric("replay_lag_s", "behind the traced pace", "s", "lower", practical_abs=0.01),
        Metric("replay_calls", "calls replayed", "", "higher", exact=True, ranked=False),
        Metric("replay_diverged", "calls that diverged", "", "lower", ranked=False),
        Metric("replay_error_pct", "replay error (time in calls)", "%", "lower", ranked=False),
        # PostgreSQL replayed from its statement log (tasks/pg_replay.py): pgreplay's statistics.
        Metric("pgreplay_run_s", "pgreplay run time", "s", "lower", practical_abs=0.01),
        Metric(
            "pgreplay_statements", "statements replayed", "", "higher", exact=True, ranked=False
        ),
        Metric("pgreplay_statement_avg_ms", "statement duration avg", "ms", "lower"),
        Metric("pgreplay_statement_max_ms", "statement duration max", "ms", "lower"),
        Metric("pgreplay_lag_s", "behind the logged pace", "s", "lower", practical_abs=1.0),
        Metric("pgreplay_failed", "statements that failed", "", "lower", ranked=False),
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
        return measurement.user_s + measurement.sys_s + (server_cpu_s(measurement) or 0.0)
    if name == "server_cpu_s":
        return server_cpu_s(measurement)
    value = getattr(measurement, name, None)
    return float(value) if isinstance(value, int | float) else None


def server_cpu_s(measurement: Measurement) -> float | None:
    """The CPU of the server a task started, over its timed region; None: none was read."""
    extra = measurement.extra
    if "server_user_s" not in extra or "server_sys_s" not in extra:
        return None
    return float(extra["server_user_s"]) + float(extra["server_sys_s"])
