"""SQLite commits: single-row INSERTs, each its own transaction, in DELETE and WAL journal modes.

Follows the Phoronix Test Suite's pts/sqlite: a table
`t(i INT, dt TIMESTAMP DEFAULT CURRENT_TIMESTAMP, f1 TEXT, f2 TEXT)` and a
generated script of single-row INSERTs piped into the real `sqlite3` CLI,
each INSERT an autocommit transaction (so every row waits for its own
fsyncs), run by 1 database or by `nproc` databases at once. The journal mode
is in the task's name and set explicitly in the script: pts/sqlite switched
to WAL silently between 2.2.0 and 2.3.0, and its results stopped being
comparable. Browsers, desktop programs and package managers commit this way:
the task is bound by fsync latency, not by the page cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fsarena.datasets.spec import WorkloadSpec
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import Check, Task, TaskContext, Tool, require_tools

DIR = "sqlite"
SCHEMA = "CREATE TABLE t(i INT, dt TIMESTAMP DEFAULT CURRENT_TIMESTAMP, f1 TEXT, f2 TEXT);"


@dataclass(frozen=True, kw_only=True)
class SqliteSpec(WorkloadSpec):
    """pts/sqlite's shape: single-row INSERTs, each its own autocommit transaction."""

    kind: ClassVar[str] = "sqlite"
    SCALED: ClassVar[dict[str, int]] = {"inserts": 100}
    inserts: int = 7500  # PTS: 2,500 INSERTs piped 3 times
    row_text_bytes: int = 64  # the two text columns' length

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("inserts", "row_text_bytes")

    @property
    def total_bytes(self) -> int:
        return self.inserts * (2 * self.row_text_bytes + 32)

    def description(self) -> str:
        return f"{self.inserts:,} single-row INSERTs, one transaction each, per database"


def insert_script(mode: str, inserts: int, text_bytes: int) -> str:
    """The piped script: the journal mode, then one INSERT per line (autocommit each)."""
    lines = [f"PRAGMA journal_mode={mode};"]
    for i in range(inserts):
        text = (f"{i:08d}" * (text_bytes // 8 + 1))[:text_bytes]
        lines.append(f"INSERT INTO t(i, f1, f2) VALUES ({i}, '{text}', '{text[::-1]}');")
    return "\n".join(lines) + "\n"


class _SqliteCommit(Task):
    tools = (Tool("sqlite3", "sqlite3"),)
    kind = "databases"
    writes = True
    datasets = ("sqlite",)
    parameters = SqliteSpec(name="sqlite")
    columns: ClassVar[tuple[str, ...] | None] = (
        "transactions_per_s",
        "wall_s",
        "sqlite_databases",
        "cpu_pct",
        "device_write_bytes",
    )
    mode: ClassVar[str]  # the journal mode, in the task's name
    parallel: ClassVar[bool]  # False: one database; True: nproc databases at once
    copies: int = 1

    def _db(self, ctx: TaskContext, i: int) -> str:
        return ctx.path(DIR, f"db{i}.sqlite")

    def _script(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/sqlite-inserts-{self.mode}.sql"

    def prepare(self, ctx: TaskContext) -> None:
        require_tools(ctx, self.tools)
        self.copies = int(ctx.executor.output(("nproc",)).strip()) if self.parallel else 1
        spec = ctx.parameters(SqliteSpec)
        ctx.executor.remove_path(ctx.path(DIR))
        ctx.data_directory(ctx.path(DIR))  # empty: its databases inherit the attributes
        script = insert_script(self.mode, spec.inserts, spec.row_text_bytes)
        ctx.executor.write_file(self._script(ctx), script.encode())
        for i in range(self.copies):
            ctx.executor.call(("sqlite3", self._db(ctx, i), f"PRAGMA journal_mode={self.mode};"))
            ctx.executor.call(("sqlite3", self._db(ctx, i), SCHEMA))

    def commands(self, ctx: TaskContext) -> list[Command]:
        # The copies run at once; the shell waits for each and fails if any did.
        runs = " ".join(
            f'sqlite3 -bail "{self._db(ctx, i)}" < "{self._script(ctx)}" & p="$p $!";'
            for i in range(self.copies)
        )
        shell = f'p=""; {runs} rc=0; for x in $p; do wait $x || rc=1; done; exit $rc'
        return [Command(("sh", "-c", shell))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        expected = ctx.parameters(SqliteSpec).inserts
        checks = []
        for i in range(self.copies):
            query = "PRAGMA integrity_check; SELECT count(*) FROM t; PRAGMA journal_mode;"
            out = ctx.executor.output(("sqlite3", self._db(ctx, i), query)).split()
            ok = out == ["ok", str(expected), self.mode.lower()]
            checks.append(Check(f"database {i} intact, {expected:,} rows", ok, " ".join(out)))
        return checks

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        total = self.copies * ctx.parameters(SqliteSpec).inserts
        rate = total / measurement.wall_s if measurement.wall_s > 0 else 0.0
        return {"transactions_per_s": rate, "sqlite_databases": float(self.copies)}

    def cleanup(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(ctx.path(DIR))
        ctx.executor.remove_path(self._script(ctx))


class SqliteCommitDelete1(_SqliteCommit):
    """sqlite3 < INSERTs, journal_mode=DELETE (the rollback journal), one database.

    Every commit creates, fsyncs and deletes a journal file beside the database:
    a metadata-heavy commit. Transactions/s = INSERTs / wall time, syncfs included.
    """

    name = "sqlite_commit_delete_1"
    mode = "DELETE"
    parallel = False


class SqliteCommitDeleteN(_SqliteCommit):
    """sqlite3 < INSERTs, journal_mode=DELETE, `nproc` databases committing at once.

    Concurrent committers show how the filesystem's journal batches fsyncs.
    """

    name = "sqlite_commit_delete_n"
    mode = "DELETE"
    parallel = True


class SqliteCommitWal1(_SqliteCommit):
    """sqlite3 < INSERTs, journal_mode=WAL (write-ahead log, pts/sqlite >= 2.3.0), one database.

    Each commit appends to the -wal file and fsyncs it: a data-append commit.
    """

    name = "sqlite_commit_wal_1"
    mode = "WAL"
    parallel = False


class SqliteCommitWalN(_SqliteCommit):
    """sqlite3 < INSERTs, journal_mode=WAL, `nproc` databases committing at once."""

    name = "sqlite_commit_wal_n"
    mode = "WAL"
    parallel = True


TASKS = (SqliteCommitDelete1, SqliteCommitDeleteN, SqliteCommitWal1, SqliteCommitWalN)
