"""Mail spool and queue: small files each fsync'ed before close, with fs_mark -S 1.

Follows pts/fs-mark and the design note's `fsync_smallfiles`: Debian's
fs_mark 3.3 writes a fixed number of files of a fixed size from several
threads, each file written and fsync'ed in the write loop (`-S 1`), as a
mail server (Postfix, Dovecot's maildir) or a queue commits each message.
fs_mark's own files/s is the figure; afterwards the files are counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from fsarena.datasets.spec import WorkloadSpec
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import Check, Task, TaskContext, Tool, require_tools

DIR = "spool"


@dataclass(frozen=True, kw_only=True)
class FsmarkSpec(WorkloadSpec):
    """fs_mark -S 1: each file written then fsync'ed before close, as a mail spool does."""

    kind: ClassVar[str] = "fsmark"
    SCALED: ClassVar[dict[str, int]] = {"files_per_thread": 200}
    files_per_thread: int = 4000
    file_bytes: int = 16384  # a typical mail message
    threads: int = 4

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("files_per_thread", "file_bytes", "threads")

    @property
    def total_bytes(self) -> int:
        return self.files_per_thread * self.threads * self.file_bytes

    def description(self) -> str:
        return (
            f"{self.threads} threads x {self.files_per_thread:,} files of "
            f"{self.file_bytes:,} bytes, each fsync'ed"
        )


def parse_fsmark(text: str) -> float:
    """Files/s from fs_mark 3.3's table (the last row's fourth column)."""
    rows = [
        line.split()
        for line in text.splitlines()
        if re.fullmatch(r"\s*\d+\s+\d+\s+\d+\s+[\d.]+\s+\d+\s*", line)
    ]
    if not rows:
        raise FsarenaError(f"fs_mark printed no result row: {text[-300:]!r}")
    return float(rows[-1][3])


class FsmarkSynced(Task):
    """fs_mark -d spool -s SIZE -n N -t THREADS -S 1 -L 1 -k (16 KiB files, 4 threads).

    `-S 1` fsyncs every file before closing it; `-k` keeps the files so that
    their count can be checked. files/s is fs_mark's own figure, wall time
    and device bytes are fsarena's (syncfs included).
    """

    tools = (Tool("fs_mark", "fsmark", None),)

    name = "fsmark_synced"
    kind = "small_synced_files"
    writes = True
    datasets = ("fsmark",)
    parameters = FsmarkSpec(name="fsmark")
    columns: ClassVar[tuple[str, ...] | None] = (
        "fsmark_files_per_s",
        "wall_s",
        "cpu_pct",
        "device_write_bytes",
    )

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/fs_mark.txt"

    def prepare(self, ctx: TaskContext) -> None:
        require_tools(ctx, self.tools)
        ctx.executor.remove_path(ctx.path(DIR))  # fs_mark makes the directory itself

    def commands(self, ctx: TaskContext) -> list[Command]:
        s = ctx.parameters(FsmarkSpec)
        # A relative directory, from the mount point: fs_mark 3.3 refuses a directory
        # path of 40 bytes or more ("directory pathname too long").
        argv: tuple[str, ...] = ("fs_mark", "-d", DIR, "-s", str(s.file_bytes))
        argv += ("-n", str(s.files_per_thread), "-t", str(s.threads), "-S", "1", "-L", "1", "-k")
        return [Command(argv, stdout_path=self._output(ctx), cwd=ctx.mountpoint)]

    def verify(self, ctx: TaskContext) -> list[Check]:
        s = ctx.parameters(FsmarkSpec)
        expected = s.files_per_thread * s.threads
        found = ctx.executor.output(
            ("find", ctx.path(DIR), "-type", "f", "-size", f"{s.file_bytes}c")
        )
        count = len(found.split())
        try:
            rate = parse_fsmark(ctx.executor.read_text(self._output(ctx)))
        except FsarenaError as exc:
            return [Check("fs_mark result parsed", False, str(exc))]
        return [
            Check("fs_mark result parsed", True, f"{rate:,.1f} files/s"),
            Check(f"{expected:,} files of {s.file_bytes:,} bytes", count == expected, f"{count:,}"),
        ]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        return {"fsmark_files_per_s": parse_fsmark(ctx.executor.read_text(self._output(ctx)))}

    def cleanup(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(ctx.path(DIR))


TASKS = (FsmarkSynced,)
