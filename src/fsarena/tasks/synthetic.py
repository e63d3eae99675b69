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
from fsarena.measure import cgroups
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import (
    Check,
    Task,
    TaskContext,
    Tool,
    cache_values,
    memory_cgroup_failure,
)
from fsarena.tasks.toolparse import parse_bonnie_csv

BONNIE_DIR = "bonnie"
MIB = 1 << 20
MIN_CGROUP_MIB = 32  # about ten times bonnie++'s own memory (GNU time: 3.3 MiB max RSS)


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

    def _spec(self, ctx: TaskContext) -> SizeSpec:
        spec = ctx.dataset("bonnie").spec
        if not isinstance(spec, SizeSpec):
            raise FsarenaError("dataset 'bonnie' must be a size (kind = \"size\")")
        return spec

    def _sizes(self, ctx: TaskContext) -> tuple[int, int, int]:
        """(file MiB, RAM MiB, files in units of 1024) for bonnie++."""
        spec = self._spec(ctx)
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
