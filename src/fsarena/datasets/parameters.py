"""Parameters of today's server workloads (SQLite, pgbench, fs_mark, dbench, fio), as data.

Each is a dataset spec that a task makes itself on the test filesystem
(`on_source` False), so a suite's `[datasets.NAME]` table can change any
parameter and `--scale` shrinks them like any dataset. What scales is listed
per class in SCALED with its floor: counts, sizes and durations shrink, but
never below what keeps the workload what it models (a few hundred commits,
a database larger than shared_buffers at the suite's scale, seconds not
milliseconds of run time). Concurrency (clients, threads, copies) and block
sizes never scale: they define the workload, not its size.

`total_bytes` is the room each workload needs on the test filesystem (the
image is sized from it). Where the page cache matters (pgbench, fio), the
working set is compared with the memory the workload may use
(`memory_bytes`, the memory cgroup it runs in), and the report says when a
scale has turned a disk benchmark into a memory benchmark.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Self

from fsarena.datasets.spec import MIB, DatasetSpec, Layout, check_factor, require

# pgbench -i writes about 15 MiB of tables and indexes per unit of scale factor
# (measured here with PostgreSQL 15: SF 10 -> 160 MB database).
PGBENCH_BYTES_PER_SF = 16 * MIB


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec(DatasetSpec):
    """A server workload's parameters; scaling multiplies the SCALED fields, down to floors."""

    on_source: ClassVar[bool] = False
    proportional: ClassVar[bool] = False  # floors by design; the page-cache flag covers them
    SCALED: ClassVar[dict[str, int]] = {}  # field -> smallest value a scale may give it
    name: str = "workload"
    seed: int = 0

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        values = {
            f: max(floor, round(getattr(self, f) * factor)) for f, floor in self.SCALED.items()
        }
        return dataclasses.replace(self, **values)

    def plan(self) -> Layout:
        return Layout((), ())

    def _positive(self, *fields: str) -> None:
        for f in fields:
            require(getattr(self, f) > 0, f"{f} must be > 0, got {getattr(self, f)}")


@dataclass(frozen=True, kw_only=True)
class SqliteSpec(WorkloadSpec):
    """pts/sqlite's shape: single-row INSERTs, each its own autocommit transaction."""

    kind: ClassVar[str] = "sqlite"
    SCALED: ClassVar[dict[str, int]] = {"inserts": 100}
    inserts: int = 7500  # PTS: 2,500 INSERTs piped 3 times
    row_text_bytes: int = 64  # the two text columns' length

    def __post_init__(self) -> None:
        super().__post_init__()
        self._positive("inserts", "row_text_bytes")

    @property
    def total_bytes(self) -> int:
        return self.inserts * (2 * self.row_text_bytes + 32)

    def description(self) -> str:
        return f"{self.inserts:,} single-row INSERTs, one transaction each, per database"


@dataclass(frozen=True, kw_only=True)
class PgbenchSpec(WorkloadSpec):
    """pgbench's TPC-B-like load: the scale factor, clients, threads, duration, server memory."""

    kind: ClassVar[str] = "pgbench"
    SCALED: ClassVar[dict[str, int]] = {
        "scale_factor": 1,
        "duration_s": 5,
        "shared_buffers_bytes": 16 * MIB,
        "memory_bytes": 128 * MIB,
        "max_wal_bytes": 64 * MIB,
    }
    scale_factor: int = 100  # about 1.6 GB: 12x shared_buffers, 3x the server's memory
    clients: int = 8
    jobs: int = 2
    duration_s: int = 60
    shared_buffers_bytes: int = 128 * MIB  # PostgreSQL's default
    memory_bytes: int = 512 * MIB  # the server's memory cgroup: shared_buffers + page cache
    max_wal_bytes: int = 1024 * MIB  # PostgreSQL's default max_wal_size

    def __post_init__(self) -> None:
        super().__post_init__()
        self._positive("scale_factor", "clients", "jobs", "duration_s", "shared_buffers_bytes")
        require(
            self.memory_bytes >= self.shared_buffers_bytes + 64 * MIB,
            "memory_bytes must leave 64 MiB beside shared_buffers for the server's processes",
        )

    @property
    def database_bytes(self) -> int:
        return self.scale_factor * PGBENCH_BYTES_PER_SF

    @property
    def total_bytes(self) -> int:
        """Room it needs on the filesystem: the database, its growth, and the WAL."""
        return 2 * self.database_bytes + self.max_wal_bytes

    def description(self) -> str:
        return (
            f"pgbench scale factor {self.scale_factor} (~{self.database_bytes / MIB:,.0f} MiB), "
            f"{self.clients} clients, {self.jobs} threads, {self.duration_s} s; shared_buffers "
            f"{self.shared_buffers_bytes // MIB} MiB, server memory {self.memory_bytes // MIB} MiB"
        )


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
        self._positive("files_per_thread", "file_bytes", "threads")

    @property
    def total_bytes(self) -> int:
        return self.files_per_thread * self.threads * self.file_bytes

    def description(self) -> str:
        return (
            f"{self.threads} threads x {self.files_per_thread:,} files of "
            f"{self.file_bytes:,} bytes, each fsync'ed"
        )


@dataclass(frozen=True, kw_only=True)
class DbenchSpec(WorkloadSpec):
    """dbench's NetBench load: clients and an explicit duration (dbench's default is 600 s)."""

    kind: ClassVar[str] = "dbench"
    SCALED: ClassVar[dict[str, int]] = {"duration_s": 5}
    clients: int = 8  # the "several clients" variant; the other runs 1
    duration_s: int = 60

    def __post_init__(self) -> None:
        super().__post_init__()
        self._positive("clients", "duration_s")

    @property
    def total_bytes(self) -> int:
        return 0  # dbench's files are created and deleted by its load file

    def description(self) -> str:
        return f"dbench NetBench load, 1 and {self.clients} clients, {self.duration_s} s each"


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
        self._positive("size_bytes", "block_bytes", "fsync_every", "runtime_s", "memory_bytes")

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
