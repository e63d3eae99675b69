"""PostgreSQL OLTP: a real server on the test filesystem, pgbench's bulk load and TPC-B-like load.

Follows pts/pgbench and the design note's `pgbench_oltp`. Untimed, fsarena
runs Debian's PostgreSQL as the `postgres` user (it refuses to run as root)
with its data directory on the filesystem under test: `initdb`, then
`pg_ctl start -w` listening only on a Unix socket in a private directory
(listen_addresses = '', so no TCP port is taken), inside a memory cgroup
(the server's memory: shared_buffers plus the page cache it may use) and a
cgroup that counts its CPU (the same one on cgroup v2, cpuacct on v1), with
fsync = on and synchronous_commit = on. The server is a ledger resource: it
is stopped after each task, on failure, timeout and Ctrl-C by the task's
cleanup, and by `fsarena cleanup` after a kill -9 (servers.py).

pgbench_init times `pgbench -i -s SF` (a bulk load: COPY, VACUUM, primary
keys); pgbench_oltp restarts the server, caches dropped, and times
`pgbench -c C -j J -T T -n`. TPS and average latency are pgbench's; the
p99 comes from pgbench's per-transaction log (--log), never estimated. SF
is chosen so that the database is larger than shared_buffers and the
server's memory; the report states both sizes, and warns when a scale made
the database fit in memory. Most of the work is the server's: its CPU over the
timed region (every backend, the checkpointer, the WAL writer; read from its
cgroup just before and after) is recorded as server_user_s and server_sys_s and
counted in the task's CPU cost and CPU per transaction with pgbench's own.
Verified: pgbench exits 0 with no failed transaction, and sum(abalance) over
pgbench_accounts equals sum(delta) over pgbench_history (every committed
transaction moved its delta into both).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from fsarena.datasets.spec import MIB, WorkloadSpec, require
from fsarena.errors import FsarenaError
from fsarena.host import cgroups
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import (
    Check,
    HostFault,
    Task,
    TaskContext,
    Tool,
    Unsupported,
    cache_values,
    cpu_per_unit,
    find_number,
    memory_cgroup_failure,
    require_tools,
)

DIR = "pg"
PORT = 5432  # names the socket file in the private directory only (no TCP listener)
USER = "postgres"
LEDGER_KIND = "postgres"
# pgbench -i writes about 15 MiB of tables and indexes per unit of scale factor
# (measured here with PostgreSQL 15: SF 10 -> 160 MB database).
PGBENCH_BYTES_PER_SF = 16 * MIB


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
        self.require_positive(
            "scale_factor", "clients", "jobs", "duration_s", "shared_buffers_bytes"
        )
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


def parse_pgbench(text: str) -> dict[str, float]:
    """TPS, average latency, transactions and failures from pgbench 15's summary."""
    done = find_number(r"^number of transactions actually processed: (\d+)", text, "transactions")
    if done == 0:
        # pgbench prints no tps or latency then (seen in a User-Mode Linux guest).
        raise FsarenaError("pgbench completed no transaction in its run: see the server's log")
    return {
        "pgbench_tps": find_number(r"^tps = ([\d.]+)", text, "pgbench's tps"),
        "pgbench_latency_avg_ms": find_number(r"^latency average = ([\d.]+) ms", text, "latency"),
        "pgbench_transactions": done,
        "pgbench_failed": find_number(r"^number of failed transactions: (\d+)", text, "failures"),
    }


def percentile_from_pgbench_log(lines: list[str], pct: float) -> float:
    """The pct-th percentile (nearest rank) of the latencies, in ms, of pgbench --log lines.

    Each line is "client_id transaction_no time_us script_no epoch epoch_us"
    (pgbench 15 documentation, "Per-Transaction Logging"); failed or skipped
    transactions print a word instead of time_us and are left out.
    """
    latencies = sorted(
        int(fields[2]) for line in lines if len(fields := line.split()) >= 3 and fields[2].isdigit()
    )
    if not latencies:
        raise FsarenaError("pgbench's transaction log holds no completed transaction")
    rank = max(1, math.ceil(pct / 100 * len(latencies)))
    return latencies[rank - 1] / 1000.0


def as_postgres(*argv: str) -> tuple[str, ...]:
    return ("runuser", "-u", USER, "--", *argv)


class PostgresTask(Task):
    """A real PostgreSQL server on the test filesystem: its checks, start, CPU and stop."""

    tools: ClassVar[tuple[Tool, ...]] = (
        Tool("runuser", "util-linux"),
        Tool("psql", "postgresql"),
        Tool("pgbench", "postgresql"),
    )
    kind = "databases"
    datasets = ("pgbench",)
    parameters: ClassVar[WorkloadSpec | None] = PgbenchSpec(name="pgbench")
    writes = True
    bindir: str = ""
    cgroup: str = ""
    cpu_cgroup: str = ""  # counts the server's CPU; the memory cgroup itself on cgroup v2
    running: bool = False
    server_cpu: tuple[cgroups.CpuUsage | None, cgroups.CpuUsage | None] = (None, None)

    def _data(self, ctx: TaskContext) -> str:
        return ctx.path(DIR, "data")

    def _socket(self, ctx: TaskContext) -> str:
        return ctx.path(DIR, "socket")

    def _client(self, ctx: TaskContext, tool: str, *args: str) -> tuple[str, ...]:
        return (f"{self.bindir}/{tool}", "-h", self._socket(ctx), "-p", str(PORT), "-U", USER,
                *args)  # fmt: skip

    def _sql(self, ctx: TaskContext, query: str) -> str:
        argv = self._client(ctx, "psql", "-X", "-At", "-d", "postgres", "-c", query)
        return ctx.executor.output(argv).strip()

    def _require(self, ctx: TaskContext) -> None:
        """Unsupported without Unix owners; a host fault without the server or its user's access."""
        if not ctx.profile.unix_ownership:
            raise Unsupported(
                "PostgreSQL needs a data directory owned by user postgres with mode 0700, "
                "and this filesystem has no Unix owners or permissions"
            )
        require_tools(ctx, self.tools)
        found = ctx.executor.output(("sh", "-c", "ls -d /usr/lib/postgresql/*/bin || true"))
        if not found.split():
            raise HostFault(
                "missing-server",
                "no PostgreSQL server in /usr/lib/postgresql",
                "install postgresql (./scripts/setup.sh installs it)",
            )
        self.bindir = sorted(found.split(), key=lambda p: int(p.split("/")[-2]))[-1]
        try:
            ctx.executor.call(as_postgres("test", "-x", ctx.mountpoint))
        except FsarenaError:
            raise HostFault(
                "permission",
                f"user postgres cannot reach {ctx.mountpoint}",
                "make the work directory and its parents searchable by others (chmod o+x)",
            ) from None

    def _initdb(self, ctx: TaskContext) -> None:
        ctx.executor.remove_path(ctx.path(DIR))
        ctx.data_directory(ctx.path(DIR))  # before initdb: its files inherit the attributes
        ctx.executor.make_dir(self._socket(ctx))
        ctx.executor.call(("chown", "-R", f"{USER}:{USER}", ctx.path(DIR)))
        ctx.executor.call(("chmod", "0700", self._socket(ctx)))
        ctx.executor.call(
            as_postgres(f"{self.bindir}/initdb", "-D", self._data(ctx), "--encoding=SQL_ASCII",
                        "--locale=C", "--auth=trust", "--no-sync")
        )  # fmt: skip
        s = ctx.parameters(PgbenchSpec)
        settings = {
            "listen_addresses": "''",
            "unix_socket_directories": f"'{self._socket(ctx)}'",
            "port": str(PORT),
            "shared_buffers": f"{s.shared_buffers_bytes // 1024}kB",
            "fsync": "on",
            "synchronous_commit": "on",
            "full_page_writes": "on",
            "max_connections": str(max(100, s.clients + 10)),
            "huge_pages": "off",
            "max_wal_size": f"{s.max_wal_bytes // MIB}MB",
        }
        conf = self._data(ctx) + "/postgresql.conf"
        text = ctx.executor.read_text(conf) + "\n# fsarena\n"
        text += "".join(f"{k} = {v}\n" for k, v in settings.items())
        ctx.executor.write_file(conf, text.encode())

    def server_memory_bytes(self, ctx: TaskContext) -> int:
        """The server's memory cgroup limit: shared_buffers plus the page cache it may use."""
        return ctx.parameters(PgbenchSpec).memory_bytes

    def _start(self, ctx: TaskContext) -> None:
        self.cgroup = ctx.executor.create_memory_cgroup(self.server_memory_bytes(ctx))
        self.cpu_cgroup = ctx.executor.create_cpu_cgroup(self.cgroup)
        joined = tuple(dict.fromkeys(p for p in (self.cgroup, self.cpu_cgroup) if p))
        ctx.executor.track(LEDGER_KIND, self._data(ctx))  # the intent, before it exists
        self.running = True
        argv = as_postgres(f"{self.bindir}/pg_ctl", "-D", self._data(ctx), "-l",
                           ctx.path(DIR, "server.log"), "-w", "-t", "120", "start")  # fmt: skip
        ctx.executor.call(cgroups.enter_all_argv(joined, argv))

    def _server_cpu(self, ctx: TaskContext) -> cgroups.CpuUsage | None:
        if not self.cpu_cgroup:
            return None
        return cgroups.cpu_usage(self.cpu_cgroup, ctx.executor.read_text)

    def region_starts(self, ctx: TaskContext) -> None:
        self.server_cpu = (self._server_cpu(ctx), None)

    def region_ended(self, ctx: TaskContext) -> None:
        self.server_cpu = (self.server_cpu[0], self._server_cpu(ctx))

    def _server_values(self) -> dict[str, float]:
        """The server's CPU over the timed region ({} when no cgroup could count it)."""
        start, end = self.server_cpu
        if start is None or end is None:
            return {}
        used = end.since(start)
        return {"server_user_s": used.user_s, "server_sys_s": used.sys_s}

    def failure(self, ctx: TaskContext) -> str:
        return memory_cgroup_failure(ctx.executor.read_text, self.cgroup, "the PostgreSQL server")

    def _stop(self, ctx: TaskContext) -> None:
        """Fast shutdown, then immediate if that fails; the ledger keeps it until it is gone."""
        stop = as_postgres(f"{self.bindir}/pg_ctl", "-D", self._data(ctx), "-w", "-t", "60", "stop")
        try:
            ctx.executor.call((*stop, "-m", "fast"))
        except FsarenaError:
            status = ctx.executor.output(("sh", "-c", f"test -e '{self._data(ctx)}/postmaster.pid'"
                                          " && echo running || echo stopped"))  # fmt: skip
            if "running" in status:
                ctx.executor.call((*stop, "-m", "immediate"))
        self.running = False
        ctx.executor.untrack(LEDGER_KIND, self._data(ctx))

    def cleanup(self, ctx: TaskContext) -> None:
        try:
            if self.running:
                self._stop(ctx)
        finally:
            if self.cpu_cgroup and self.cpu_cgroup != self.cgroup:
                ctx.executor.remove_cgroup(self.cpu_cgroup)
            self.cpu_cgroup = ""
            if self.cgroup:
                ctx.executor.remove_cgroup(self.cgroup)
                self.cgroup = ""

    def _sizes(self, ctx: TaskContext) -> dict[str, float]:
        s = ctx.parameters(PgbenchSpec)
        db = int(self._sql(ctx, "SELECT pg_database_size('postgres')"))
        return {
            "pgbench_scale_factor": float(s.scale_factor),
            "pg_database_bytes": float(db),
            "pg_shared_buffers_bytes": float(s.shared_buffers_bytes),
            **cache_values(db, s.memory_bytes),
        }

    def _init_argv(self, ctx: TaskContext) -> tuple[str, ...]:
        scale_factor = ctx.parameters(PgbenchSpec).scale_factor
        return self._client(ctx, "pgbench", "-i", "-q", "-s", str(scale_factor), "postgres")


class PgbenchInit(PostgresTask):
    """pgbench -i -s SF: the bulk load (tables, COPY of SF x 100,000 rows, VACUUM, keys), timed.

    On a fresh `initdb` and a freshly started server, caches dropped. Verified:
    pgbench_accounts holds exactly SF x 100,000 rows.
    """

    name = "pgbench_init"
    columns: ClassVar[tuple[str, ...] | None] = (
        "wall_s",
        "pg_database_bytes",
        "pg_shared_buffers_bytes",
        "pgbench_scale_factor",
        "cpu_pct",
        "server_cpu_s",
        "device_write_bytes",
    )

    def prepare(self, ctx: TaskContext) -> None:
        self._require(ctx)
        self._initdb(ctx)
        self._start(ctx)

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(self._init_argv(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        expected = ctx.parameters(PgbenchSpec).scale_factor * 100_000
        rows = int(self._sql(ctx, "SELECT count(*) FROM pgbench_accounts"))
        return [Check(f"{expected:,} accounts loaded", rows == expected, f"{rows:,} rows")]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        return {**self._server_values(), **self._sizes(ctx)}


class PgbenchOltp(PostgresTask):
    """pgbench -c C -j J -T T -n --log: the TPC-B-like read-write load, every commit synced.

    C = 8 clients, J = 2 threads, T = 60 s at scale 1; -n: no vacuum before
    the run (pgbench_init did it). The database is pgbench_init's, or loaded
    untimed here when the suite has no pgbench_init.
    """

    name = "pgbench_oltp"
    columns: ClassVar[tuple[str, ...] | None] = (
        "pgbench_tps",
        "pgbench_latency_avg_ms",
        "pgbench_latency_p99_ms",
        "pgbench_transactions",
        "cpu_ms_per_transaction",
        "server_cpu_s",
        "pg_database_bytes",
        "pg_shared_buffers_bytes",
        "pgbench_scale_factor",
        "device_write_bytes",
    )

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/pgbench.txt"

    def _log_prefix(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/pgbench-log"

    def prepare(self, ctx: TaskContext) -> None:
        self._require(ctx)
        ctx.executor.call(("sh", "-c", f"rm -f '{self._log_prefix(ctx)}'.*"))
        loaded = ctx.executor.exists(self._data(ctx) + "/PG_VERSION")
        if not loaded:
            self._initdb(ctx)
        self._start(ctx)
        if not loaded:
            ctx.executor.call(self._init_argv(ctx))

    def commands(self, ctx: TaskContext) -> list[Command]:
        s = ctx.parameters(PgbenchSpec)
        argv = self._client(ctx, "pgbench", "-c", str(s.clients), "-j", str(s.jobs),
                            "-T", str(s.duration_s), "-n", "--log",
                            f"--log-prefix={self._log_prefix(ctx)}", "postgres")  # fmt: skip
        return [Command(argv, stdout_path=self._output(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        try:
            values = parse_pgbench(ctx.executor.read_text(self._output(ctx)))
        except (FsarenaError, OSError) as exc:
            return [Check("pgbench summary parsed", False, str(exc))]
        failed = int(values["pgbench_failed"])
        balance = self._sql(
            ctx,
            "SELECT (SELECT sum(abalance) FROM pgbench_accounts) || ' ' || "
            "(SELECT coalesce(sum(delta), 0) FROM pgbench_history)",
        ).split()
        return [
            Check("no failed transaction", failed == 0, f"{failed} failed"),
            Check(
                "sum(abalance) = sum(delta)",
                len(balance) == 2 and balance[0] == balance[1],
                " vs ".join(balance),
            ),
        ]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        values = parse_pgbench(ctx.executor.read_text(self._output(ctx)))
        values.pop("pgbench_failed")
        log = ctx.executor.output(("sh", "-c", f"cat '{self._log_prefix(ctx)}'.*"))
        values["pgbench_latency_p99_ms"] = percentile_from_pgbench_log(log.splitlines(), 99.0)
        server = self._server_values()
        values.update(server)
        # -T: a fixed time, so the CPU (pgbench's and the server's) is judged per
        # transaction done in it.
        done = values["pgbench_transactions"]
        server_s = server.get("server_user_s", 0.0) + server.get("server_sys_s", 0.0)
        if (per_tx := cpu_per_unit(measurement, done, 1e3, server_s)) is not None:
            values["cpu_ms_per_transaction"] = per_tx
        return {**values, **self._sizes(ctx)}

    def cleanup(self, ctx: TaskContext) -> None:
        try:
            super().cleanup(ctx)
        finally:
            ctx.executor.call(("sh", "-c", f"rm -f '{self._log_prefix(ctx)}'.*"))
            if not self.running:
                ctx.executor.remove_path(ctx.path(DIR))


TASKS = (PgbenchInit, PgbenchOltp)
