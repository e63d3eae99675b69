"""Synthetic benchmarks: bonnie++ as article C ran it, with its RAM rule kept honestly.

Article C ran `bonnie++ -d $DIR -s 2000 -u root -q` (2000 MB on a 768 MB
machine). bonnie++ insists on a file twice the RAM, so that the page cache
cannot hold it. fsarena scales the size with --scale and runs bonnie++ in a
memory cgroup limited to half of it, passing that limit as `-r`: the file
really is twice the memory bonnie++ may cache in, and the session records
both (bonnie_size_mib, bonnie_ram_mib) and the cgroup's peak use. The cgroup
is never below 32 MiB: in a smaller one bonnie++ itself (3.3 MiB) leaves too
little page cache to reclaim and the kernel's out-of-memory killer stops it (an
8 MiB cgroup at scale 0.005, exit code -9 on xfs), which the run would then say
in so many words. Below a 64 MiB file (scale < 0.032) the file therefore fits
in the memory bonnie++ may cache in, and the run warns that it measures memory
(fits_page_cache). `-f`
skips the per-character tests (optional in the article's reading, and slow).
bonnie++'s CSV is parsed into fsarena's metrics (MB/s, CPU %, seeks/s,
files/s); tests bonnie++ could not time ("+++++") are left out, never guessed.
"""

from __future__ import annotations

from fsarena.datasets.realistic import SizeSpec
from fsarena.errors import FsarenaError
from fsarena.host import cgroups
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import (
    Check,
    Task,
    TaskContext,
    Tool,
    cache_values,
    memory_cgroup_failure,
)

BONNIE_DIR = "bonnie"
MIB = 1 << 20
MIN_CGROUP_MIB = 32  # about ten times bonnie++'s own memory (GNU time: 3.3 MiB max RSS)

BONNIE_CSV_VERSION = "1.98"  # the CSV format of bonnie++ 1.97 .. 2.00a
KIB = 1024

# (field index in the 1.98 CSV, fsarena metric, factor to its unit). Throughputs are
# printed in KiB/s; fsarena stores MB/s (10^6 bytes), as the articles did.
_BONNIE_FIELDS: tuple[tuple[int, str, float], ...] = (
    (9, "bonnie_putc_mb_s", KIB / 1e6),
    (10, "bonnie_putc_cpu_pct", 1.0),
    (11, "bonnie_seq_write_mb_s", KIB / 1e6),
    (12, "bonnie_seq_write_cpu_pct", 1.0),
    (13, "bonnie_rewrite_mb_s", KIB / 1e6),
    (14, "bonnie_rewrite_cpu_pct", 1.0),
    (15, "bonnie_getc_mb_s", KIB / 1e6),
    (16, "bonnie_getc_cpu_pct", 1.0),
    (17, "bonnie_seq_read_mb_s", KIB / 1e6),
    (18, "bonnie_seq_read_cpu_pct", 1.0),
    (19, "bonnie_random_seeks_per_s", 1.0),
    (20, "bonnie_random_seeks_cpu_pct", 1.0),
    (26, "bonnie_seq_create_per_s", 1.0),
    (27, "bonnie_seq_create_cpu_pct", 1.0),
    (28, "bonnie_seq_stat_per_s", 1.0),
    (29, "bonnie_seq_stat_cpu_pct", 1.0),
    (30, "bonnie_seq_delete_per_s", 1.0),
    (31, "bonnie_seq_delete_cpu_pct", 1.0),
    (32, "bonnie_random_create_per_s", 1.0),
    (33, "bonnie_random_create_cpu_pct", 1.0),
    (34, "bonnie_random_stat_per_s", 1.0),
    (35, "bonnie_random_stat_cpu_pct", 1.0),
    (36, "bonnie_random_delete_per_s", 1.0),
    (37, "bonnie_random_delete_cpu_pct", 1.0),
)


def parse_bonnie_csv(text: str) -> dict[str, float]:
    """fsarena metrics from bonnie++'s `-q` CSV line.

    A test bonnie++ ran too briefly to time (under 500 ms) prints "+++++"
    instead of a number ("I would rather display no result than a wrong
    result"); such values and skipped tests (empty fields) are left out, so
    nothing is made up. `bonnie_tests_too_fast` counts the "+++++" rates.
    """
    lines = [line for line in text.splitlines() if line.startswith(BONNIE_CSV_VERSION + ",")]
    if not lines:
        raise FsarenaError(
            f"bonnie++ printed no CSV line of format {BONNIE_CSV_VERSION}; "
            "is this bonnie++ 1.97 or newer?"
        )
    fields = lines[-1].split(",")
    if len(fields) < 38:
        raise FsarenaError(f"bonnie++ CSV line has {len(fields)} fields, expected at least 38")
    values: dict[str, float] = {}
    too_fast = 0
    for index, metric, factor in _BONNIE_FIELDS:
        raw = fields[index].strip()
        if raw.startswith("+"):
            too_fast += not metric.endswith("_cpu_pct")
            continue
        if raw:
            try:
                values[metric] = float(raw) * factor
            except ValueError:
                raise FsarenaError(f"bonnie++ CSV field {index} is {raw!r}, not a number") from None
    values["bonnie_tests_too_fast"] = float(too_fast)
    return values


class Bonnie(Task):
    """bonnie++ -d MNT/bonnie -s SIZE -r SIZE/2 -u root -q -f -n N, in a SIZE/2 memory cgroup
    (at least 32 MiB).

    N (the file-creation test, in units of 1024 files) is bonnie++'s default
    16 scaled like SIZE. The wall time is bonnie++'s whole run; its own
    figures are the metrics.
    """

    tools = (Tool("bonnie++", "bonnie++", ("-h",), "Version"),)

    name = "bonnie"
    kind = "synthetic"
    datasets = ("bonnie",)
    columns = (
        "bonnie_seq_write_mb_s",
        "bonnie_seq_write_cpu_pct",
        "bonnie_rewrite_mb_s",
        "bonnie_seq_read_mb_s",
        "bonnie_seq_read_cpu_pct",
        "bonnie_random_seeks_per_s",
        "bonnie_seq_create_per_s",
        "bonnie_seq_stat_per_s",
        "bonnie_seq_delete_per_s",
        "bonnie_tests_too_fast",  # why a rate shows "-": bonnie++ printed +++++
        "wall_s",
    )
    cgroup: str = ""

    def _sizes(self, ctx: TaskContext) -> tuple[int, int, int]:
        """(file MiB, RAM MiB, files in units of 1024) for bonnie++."""
        spec = ctx.parameters(SizeSpec, "bonnie")
        size_mib = spec.size_mib
        files_k = max(1, round(16 * spec.size_bytes / (2000 * MIB)))
        return size_mib, size_mib // 2, files_k

    def _limit_bytes(self, ctx: TaskContext) -> int:
        """The memory cgroup's limit: bonnie++'s RAM, and never below MIN_CGROUP_MIB."""
        _, ram_mib, _ = self._sizes(ctx)
        return max(ram_mib, MIN_CGROUP_MIB) * MIB

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/bonnie.csv"

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(ctx.path(BONNIE_DIR))
        self.cgroup = ctx.executor.create_memory_cgroup(self._limit_bytes(ctx))

    def commands(self, ctx: TaskContext) -> list[Command]:
        size_mib, ram_mib, files_k = self._sizes(ctx)
        argv = (
            "bonnie++",
            "-d",
            ctx.path(BONNIE_DIR),
            "-s",
            str(size_mib),
            "-r",
            str(ram_mib),
            "-n",
            str(files_k),
            "-u",
            "root",
            "-q",
            "-f",
        )
        return [Command(cgroups.enter_argv(self.cgroup, argv), stdout_path=self._output(ctx))]

    def failure(self, ctx: TaskContext) -> str:
        return memory_cgroup_failure(ctx.executor.read_text, self.cgroup, "bonnie++")

    def verify(self, ctx: TaskContext) -> list[Check]:
        try:
            values = parse_bonnie_csv(ctx.executor.read_text(self._output(ctx)))
        except (FsarenaError, OSError) as exc:
            return [Check("bonnie++ CSV parsed", False, str(exc))]
        left = ctx.executor.output(("find", ctx.path(BONNIE_DIR), "-mindepth", "1")).split()
        return [
            Check("bonnie++ CSV parsed", True, f"{len(values) - 1} figures"),
            Check("bonnie++ removed its files", not left, f"{len(left)} left"),
        ]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        size_mib, ram_mib, files_k = self._sizes(ctx)
        limit = self._limit_bytes(ctx)
        values = parse_bonnie_csv(ctx.executor.read_text(self._output(ctx)))
        values.update(
            bonnie_size_mib=float(size_mib),
            bonnie_ram_mib=float(ram_mib),
            bonnie_files_k=float(files_k),
            cgroup_memory_limit_bytes=float(limit),
            **cache_values(size_mib * MIB, limit),
        )
        try:
            peak = ctx.executor.read_text(cgroups.peak_file(self.cgroup)).strip()
            values["cgroup_memory_peak_bytes"] = float(peak)
        except (OSError, ValueError):
            pass  # the peak is informative only; older kernels lack memory.peak
        return values

    def cleanup(self, ctx: TaskContext) -> None:
        if self.cgroup:
            ctx.executor.remove_cgroup(self.cgroup)
            self.cgroup = ""
        ctx.executor.remove_path(ctx.path(BONNIE_DIR))


TASKS = (Bonnie,)
