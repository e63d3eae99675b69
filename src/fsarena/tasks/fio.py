"""VM and database images: fio 4 KiB random writes (fsync every N) and random reads on a file.

A VM's disk image or a database's data file is one large preallocated file
rewritten and read in small random blocks. fio runs on such a file on the
filesystem under test (not on the raw device), written once in full before
the timed run (untimed), with `direct=1` where the filesystem's O_DIRECT
reaches the device and buffered I/O with `end_fsync=1` where it does not, which
the run records (fio_direct). Decided by a real fio O_DIRECT job whose bytes
must show in the device's write counter: a filesystem that accepts O_DIRECT and
buffers it (compression, nilfs2) is found out; a probe that fails for another
reason (ENOSPC) fails the task. Buffered IOPS are recorded as fio_iops_buffered,
ranked apart from the direct runs' fio_iops. The job is bounded by
`runtime`, its size is declared larger than the memory cgroup fio runs in
(the page cache it may use), and IOPS and the completion-latency p99 come
from fio's JSON. pts/fio's `size=1g direct=0` measures the page cache: this
is its correction. Random offsets come from a fixed seed (`randseed`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import ClassVar, Self

from fsarena.datasets.spec import MIB, WorkloadSpec
from fsarena.errors import FsarenaError
from fsarena.host import cgroups
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import (
    Check,
    Task,
    TaskContext,
    Tool,
    cache_values,
    cpu_per_unit,
    memory_cgroup_failure,
    require_tools,
)

IMAGE = "vm-image.raw"


@dataclass(frozen=True, kw_only=True)
class FioSpec(WorkloadSpec):
    """fio on one preallocated file: 4 KiB random writes (fsync every N) and random reads."""

    kind: ClassVar[str] = "fio"
    SCALED: ClassVar[dict[str, int]] = {
        "size_bytes": 16 * MIB,
        "runtime_s": 3,
        "memory_bytes": 64 * MIB,
    }
    size_bytes: int = 4096 * MIB
    block_bytes: int = 4096
    fsync_every: int = 32
    runtime_s: int = 30
    memory_bytes: int = 1024 * MIB  # fio's memory cgroup: the page cache it may use

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive(
            "size_bytes", "block_bytes", "fsync_every", "runtime_s", "memory_bytes"
        )

    def scaled(self, factor: float) -> Self:
        spec = super().scaled(factor)
        return dataclasses.replace(spec, size_bytes=spec.size_bytes // MIB * MIB)

    @property
    def total_bytes(self) -> int:
        return self.size_bytes

    def description(self) -> str:
        return (
            f"a {self.size_bytes // MIB:,} MiB file, {self.block_bytes} B random I/O, "
            f"fsync every {self.fsync_every} writes, {self.runtime_s} s per task, "
            f"page cache limited to {self.memory_bytes // MIB} MiB"
        )


def parse_fio(text: str, direction: str) -> dict[str, float]:
    """IOPS, mean and p99 completion latency (ms), and fsync p99, from fio's JSON output."""
    try:
        job = json.loads(text[text.index("{") :])["jobs"][0]
        side = job[direction]
        values = {
            "fio_iops": float(side["iops"]),
            "fio_lat_mean_ms": float(side["clat_ns"]["mean"]) / 1e6,
            "fio_lat_p99_ms": float(side["clat_ns"]["percentile"]["99.000000"]) / 1e6,
        }
        if "total_ios" in side:  # the work done in the fixed time (CPU per I/O)
            values["fio_ios"] = float(side["total_ios"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise FsarenaError(f"fio's JSON output lacks {exc}: is fio >= 3.0 installed?") from None
    sync = job.get("sync", {}).get("lat_ns", {}).get("percentile", {})
    if "99.000000" in sync and job["sync"].get("total_ios"):
        values["fio_sync_p99_ms"] = float(sync["99.000000"]) / 1e6
    return values


PROBE_BYTES = 4 * MIB


def direct_io_works(ctx: TaskContext) -> bool:
    """Whether O_DIRECT writes here reach the device: a real fio job, checked on the device.

    fio writes PROBE_BYTES with direct=1 (psync, 4 KiB, fsync never): with real
    O_DIRECT every byte is on the device when fio returns, so the device's write
    counter must have grown by at least that. EINVAL is the filesystem refusing
    O_DIRECT (buffered then); any other failure is a failure of the task.
    """
    probe = ctx.path(".fsarena-odirect-probe")
    argv = ("fio", "--name=odirect-probe", f"--filename={probe}", f"--size={PROBE_BYTES}",
            "--rw=write", "--bs=4k", "--ioengine=psync", "--direct=1",
            "--output=/dev/null")  # fmt: skip
    try:
        timed = ctx.executor.measure([Command(argv)], ctx.device, 120)
    finally:
        ctx.executor.remove_path(probe)
    m = timed.measurement
    if m.exit_code != 0:
        if "invalid argument" in timed.stderr.lower():
            return False
        raise FsarenaError(f"fio's O_DIRECT probe failed: {timed.stderr or m.exit_code}")
    return m.device_write_bytes >= PROBE_BYTES


class _Fio(Task):
    tools = (Tool("fio", "fio"),)
    kind = "random_io"
    datasets = ("fio",)
    parameters = FioSpec(name="fio")
    columns: ClassVar[tuple[str, ...] | None] = (
        "fio_iops",
        "fio_iops_buffered",
        "cpu_us_per_io",
        "fio_lat_p99_ms",
        "fio_lat_mean_ms",
        "fio_sync_p99_ms",
        "fio_direct",
        "working_set_bytes",
        "page_cache_limit_bytes",
        "device_write_bytes",
        "device_read_bytes",
    )
    rw: ClassVar[str]  # fio's rw=
    direction: ClassVar[str]  # "write" or "read": the side of fio's JSON reported
    direct: bool = True
    cgroup: str = ""

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/{self.name}.json"

    def prepare(self, ctx: TaskContext) -> None:
        require_tools(ctx, self.tools)
        s = ctx.parameters(FioSpec)
        self.direct = direct_io_works(ctx)
        image = ctx.path(IMAGE)
        if not ctx.executor.exists(image):  # the random-read task reuses the writer's image
            ctx.executor.call(
                ("fio", "--name=layout", f"--filename={image}", f"--size={s.size_bytes}",
                 "--rw=write", "--bs=1M", "--end_fsync=1", "--output=/dev/null")
            )  # fmt: skip
        self.cgroup = ctx.executor.create_memory_cgroup(s.memory_bytes)

    def commands(self, ctx: TaskContext) -> list[Command]:
        s = ctx.parameters(FioSpec)
        argv = (
            "fio", f"--name={self.name}", f"--filename={ctx.path(IMAGE)}",
            f"--size={s.size_bytes}", f"--rw={self.rw}", f"--bs={s.block_bytes}",
            "--ioengine=psync", f"--direct={int(self.direct)}", f"--runtime={s.runtime_s}",
            "--time_based", f"--randseed={s.seed + 1}", "--output-format=json",
            f"--output={self._output(ctx)}", *self._options(s),
        )  # fmt: skip
        return [Command(cgroups.enter_argv(self.cgroup, argv))]

    def _options(self, s: FioSpec) -> tuple[str, ...]:
        return () if self.direct else ("--end_fsync=1",)

    def verify(self, ctx: TaskContext) -> list[Check]:
        try:
            values = parse_fio(ctx.executor.read_text(self._output(ctx)), self.direction)
        except (FsarenaError, OSError) as exc:
            return [Check("fio JSON parsed", False, str(exc))]
        ok = values["fio_iops"] > 0
        how = "O_DIRECT" if self.direct else "buffered + end_fsync (no O_DIRECT here)"
        return [Check("fio JSON parsed", ok, f"{values['fio_iops']:,.0f} IOPS, {how}")]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        s = ctx.parameters(FioSpec)
        values = parse_fio(ctx.executor.read_text(self._output(ctx)), self.direction)
        values["fio_direct"] = float(self.direct)
        if not self.direct:  # ranked apart: buffered IOPS are never compared with direct ones
            values["fio_iops_buffered"] = values.pop("fio_iops")
        if (per_io := cpu_per_unit(measurement, values.get("fio_ios", 0.0), 1e6)) is not None:
            values["cpu_us_per_io"] = per_io
        # O_DIRECT bypasses the page cache whatever the size; buffered I/O does not.
        cache = cache_values(s.size_bytes, s.memory_bytes)
        if self.direct:
            cache["fits_page_cache"] = 0.0
        return {**values, **cache}

    def failure(self, ctx: TaskContext) -> str:
        return memory_cgroup_failure(ctx.executor.read_text, self.cgroup, "fio")

    def cleanup(self, ctx: TaskContext) -> None:
        if self.cgroup:
            ctx.executor.remove_cgroup(self.cgroup)
            self.cgroup = ""


class FioRandWrite(_Fio):
    """fio rw=randwrite bs=4k fsync=32 ioengine=psync direct=1 on a preallocated image file.

    A guest's or a database's synchronous random writes: fsync every N
    writes (fsync_every), so the filesystem's journal and block allocation
    are in the path. IOPS of the writes and their completion-latency p99;
    fsync latency p99 beside it.
    """

    name = "fio_randwrite"
    rw = "randwrite"
    direction = "write"
    writes = True

    def _options(self, s: FioSpec) -> tuple[str, ...]:
        return (*super()._options(s), f"--fsync={s.fsync_every}")


class FioRandRead(_Fio):
    """fio rw=randread bs=4k ioengine=psync direct=1 on the same image file, caches dropped.

    A guest's or a database's random reads of blocks not in memory: IOPS and
    completion-latency p99. The image is removed afterwards.
    """

    name = "fio_randread"
    rw = "randread"
    direction = "read"

    def cleanup(self, ctx: TaskContext) -> None:
        super().cleanup(ctx)
        ctx.executor.remove_path(ctx.path(IMAGE))


TASKS = (FioRandWrite, FioRandRead)
