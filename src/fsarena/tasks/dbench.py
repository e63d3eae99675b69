"""File serving: dbench's NetBench load (a Samba file server's clients) with 1 and several clients.

Follows pts/dbench and article A's own use case: Debian's dbench 4.0 replays
the NetBench client load file (/usr/share/dbench/client.txt: create, write,
read, rename, lock, flush, delete, find) from N clients at once, for an
explicit `-t` seconds (dbench's default is 600 s, which pts/dbench kept).
dbench's own throughput (MB/s) and the worst operation latency it saw are
the figures. dbench works on files it creates and deletes; most of its I/O
is served by the page cache, as a file server's is, so its figure is not a
device throughput and is never compared with the device's ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fsarena.datasets.spec import WorkloadSpec
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import (
    Check,
    Task,
    TaskContext,
    Tool,
    cpu_per_unit,
    find_number,
    require_tools,
)

DIR = "dbench"
LOADFILE = "/usr/share/dbench/client.txt"  # Debian's dbench package ships it


@dataclass(frozen=True, kw_only=True)
class DbenchSpec(WorkloadSpec):
    """dbench's NetBench load: clients and an explicit duration (dbench's default is 600 s)."""

    kind: ClassVar[str] = "dbench"
    SCALED: ClassVar[dict[str, int]] = {"duration_s": 5}
    clients: int = 8  # the "several clients" variant; the other runs 1
    duration_s: int = 60

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("clients", "duration_s")

    @property
    def total_bytes(self) -> int:
        return 0  # dbench's files are created and deleted by its load file

    def description(self) -> str:
        return f"dbench NetBench load, 1 and {self.clients} clients, {self.duration_s} s each"


def parse_dbench(text: str) -> tuple[float, float]:
    """(MB/s, max latency ms) from dbench 4.0's "Throughput X MB/sec ... max_latency=Y ms"."""
    mb_s = find_number(r"^Throughput ([\d.]+) MB/sec", text, "dbench's Throughput line")
    latency = find_number(r"max_latency=([\d.]+) ms", text, "dbench's max_latency")
    return mb_s, latency


class _Dbench(Task):
    tools = (Tool("dbench", "dbench", ("--help",)),)
    kind = "file_serving"
    writes = True
    datasets = ("dbench",)
    parameters = DbenchSpec(name="dbench")
    columns: ClassVar[tuple[str, ...] | None] = (
        "dbench_mb_s",
        "dbench_max_latency_ms",
        "dbench_clients",
        "cpu_ms_per_mb",
        "wall_s",
        "cpu_pct",
        "device_write_bytes",
    )
    several: ClassVar[bool]

    def _clients(self, ctx: TaskContext) -> int:
        return ctx.parameters(DbenchSpec).clients if self.several else 1

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/{self.name}.txt"

    def prepare(self, ctx: TaskContext) -> None:
        require_tools(ctx, self.tools)
        if not ctx.executor.exists(LOADFILE):
            raise FsarenaError(f"{LOADFILE} missing: apt-get install dbench")
        ctx.executor.remove_path(ctx.path(DIR))
        ctx.executor.make_dir(ctx.path(DIR))

    def commands(self, ctx: TaskContext) -> list[Command]:
        duration_s = ctx.parameters(DbenchSpec).duration_s
        argv: tuple[str, ...] = ("dbench", "-D", ctx.path(DIR), "-t", str(duration_s))
        argv += ("-c", LOADFILE, str(self._clients(ctx)))
        return [Command(argv, stdout_path=self._output(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        try:
            mb_s, latency = parse_dbench(ctx.executor.read_text(self._output(ctx)))
        except FsarenaError as exc:
            return [Check("dbench result parsed", False, str(exc))]
        ok = mb_s > 0
        return [Check("dbench result parsed", ok, f"{mb_s:,.1f} MB/s, max {latency:,.1f} ms")]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        mb_s, latency = parse_dbench(ctx.executor.read_text(self._output(ctx)))
        values = {
            "dbench_mb_s": mb_s,
            "dbench_max_latency_ms": latency,
            "dbench_clients": float(self._clients(ctx)),
        }
        # dbench -t runs for a fixed time: its work is the MB it moved in it.
        megabytes = mb_s * ctx.parameters(DbenchSpec).duration_s
        if (per_mb := cpu_per_unit(measurement, megabytes, 1e3)) is not None:
            values["cpu_ms_per_mb"] = per_mb
        return values

    def cleanup(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(ctx.path(DIR))


class Dbench1(_Dbench):
    """dbench -D MNT/dbench -t T -c client.txt 1: one client (one Samba user)."""

    name = "dbench_1"
    several = False


class DbenchN(_Dbench):
    """dbench -D MNT/dbench -t T -c client.txt N: several clients at once (8 by default)."""

    name = "dbench_n"
    several = True


TASKS = (Dbench1, DbenchN)
