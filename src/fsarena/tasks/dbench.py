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

from typing import ClassVar

from fsarena.datasets.parameters import DbenchSpec
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import Check, Task, TaskContext, Tool, cpu_per_unit, require_tools
from fsarena.tasks.toolparse import parse_dbench

DIR = "dbench"
LOADFILE = "/usr/share/dbench/client.txt"  # Debian's dbench package ships it


def _spec(ctx: TaskContext) -> DbenchSpec:
    spec = ctx.dataset("dbench").spec
    if not isinstance(spec, DbenchSpec):
        raise FsarenaError('dataset "dbench" must be of kind "dbench"')
    return spec


class _Dbench(Task):
    tools = (Tool("dbench", "dbench", ("--help",)),)
    kind = "file_serving"
    writes = True
    datasets = ("dbench",)
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
        return _spec(ctx).clients if self.several else 1

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/{self.name}.txt"

    def prepare(self, ctx: TaskContext) -> None:
        require_tools(ctx, self.tools)
        if not ctx.executor.exists(LOADFILE):
            raise FsarenaError(f"{LOADFILE} missing: apt-get install dbench")
        ctx.executor.remove_path(ctx.path(DIR))
        ctx.executor.make_dir(ctx.path(DIR))

    def commands(self, ctx: TaskContext) -> list[Command]:
        argv: tuple[str, ...] = ("dbench", "-D", ctx.path(DIR), "-t", str(_spec(ctx).duration_s))
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
        megabytes = mb_s * _spec(ctx).duration_s
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
