"""Your PostgreSQL, from its own log: a base backup restored and its statement log replayed.

Where the service is PostgreSQL, its statement log (`log_statement = 'all'`)
and the base backup taken just before it (datasets/pglog.py) replay the
service itself: pgreplay sends every logged statement, session by session, to
a real server whose data directory is on the filesystem under test, so the
server's own WAL, checkpointer, background writer and buffer cache meet that
filesystem, as they would in production. The syscall replay (tasks/replay.py)
repeats the calls as they were made on the production filesystem; this one
lets the server make the calls it would make on this one.

Untimed, on each fresh filesystem: the base backup is restored into `pg/data`
(a plain copy, or its tar files extracted), owned by postgres, mode 0700; the
server's settings are made fsarena's where they concern where it listens and
what it logs (a Unix socket in a private directory, no TCP listener; no
statement logging, no archiving, no preloaded libraries; local trust), its
other settings stay the production's; the server starts as pgbench_oltp's does
(tasks/pgbench.py: the postgres user, a memory cgroup, a ledger resource,
stopped always), recovers the backup, and is checkpointed; the log is parsed
into pgreplay's replay file (`pgreplay -f`, from the end of the log's
pg_basebackup session). Caches are dropped.

Timed: `pgreplay -r`, in one of two timing models, the two questions the
syscall replay answers:
- `pg_replay` (kind replay_capacity), as fast as possible: speed factor 1000
  and idle time skipped (-s 1000 -j), so sessions wait only for the server and
  for their own previous statement. Capacity: the total time.
- `pg_replay_paced` (kind replay_paced), at the logged pace (-s 1): each
  statement is sent at its logged time, so the replay lasts what the service
  took where the server keeps up; pgreplay's maximum lag behind schedule is
  its figure.

pgreplay's own statistics are the task's figures: statements executed, its
replay run time, the lag behind schedule, the statements' average and maximum
duration, and the statements that failed. Verified: every statement the log
held was executed, and at most 1 % of them failed. The server's CPU over the
timed region is counted as pgbench_oltp's is. pgreplay polls its connections
with a 1 ms nap (NAP_MICROSECONDS in its source), which adds up to 1 ms to
every statement it waits for: a replay of many short statements lasts longer
than the logged run even at speed 1000 (bench/RESULTS.md, PostgreSQL replays).
Sessions that contended for the same rows may stall the replay where the log's
order of statements differs from the order the locks were granted; the task's
timeout ends such a run.
"""

from __future__ import annotations

import re
import time
from typing import Any, ClassVar

from fsarena.datasets.pglog import PgLogSpec
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command, Measurement
from fsarena.tasks.base import Check, TaskContext, Tool
from fsarena.tasks.pgbench import DIR, PORT, USER, PostgresTask

FAILED_MAX = 0.01  # the share of statements that may fail before the replay is not the log
FAST_SPEED = "1000"
# Settings the replay's server takes from fsarena, written last in postgresql.auto.conf
# (read after postgresql.conf and any ALTER SYSTEM of the production's).
OWN_SETTINGS = {
    "listen_addresses": "''",
    "log_statement": "'none'",
    "log_min_duration_statement": "-1",
    "logging_collector": "off",
    "log_destination": "'stderr'",
    "archive_mode": "off",
    "shared_preload_libraries": "''",
}
RECOVERY_S = 300.0  # the longest the restored backup's recovery may take before it is a failure


def parse_pgreplay(text: str) -> dict[str, float]:
    """pgreplay's statistics (parse or replay), as numbers keyed by their label.

    `Total run time: 8.269 seconds` -> {"run_s": 8.269}; "SQL statements executed",
    "(N or P% of these completed with error)", "Maximum lag behind schedule: N seconds",
    "Average/Maximum SQL statement duration", "Total SQL statements processed".
    FsarenaError when the text holds no statistics.
    """
    patterns = {
        "statements_parsed": r"^Total SQL statements processed: (\d+)",
        "speed": r"^Speed factor for replay: ([\d.]+)",
        "run_s": r"^Total run time: ([\d.]+) seconds",
        "lag_s": r"^Maximum lag behind schedule: (\d+) seconds",
        "calls": r"^Calls to the server: (\d+)",
        "connections": r"^Total number of connections: (\d+)",
        "statements": r"^SQL statements executed: (\d+)",
        "failed": r"^\((\d+) or [\d.]+% of these completed with error\)",
        "statement_avg_s": r"^Average SQL statement duration: ([\d.]+) seconds",
        "statement_max_s": r"^Maximum SQL statement duration: ([\d.]+) seconds",
    }
    values = {}
    for key, pattern in patterns.items():
        if m := re.search(pattern, text, re.MULTILINE):
            values[key] = float(m[1])
    if not values:
        first = text.strip().splitlines()[0] if text.strip() else "nothing"
        raise FsarenaError(f"pgreplay printed no statistics (it printed: {first})")
    return values


class _PgReplay(PostgresTask):
    tools: ClassVar[tuple[Tool, ...]] = (
        *PostgresTask.tools,
        Tool("pgreplay", "pgreplay"),
        Tool("tar", "tar"),
    )
    datasets = ("pglog",)
    parameters = None  # the statement log and its backup: the user's, no default
    # 2: on a filesystem made for it (the backup restored where nothing else ran before).
    version = 2
    fresh = True
    timing: ClassVar[str]
    _parsed: dict[str, float] | None = None
    _result: dict[str, float] | None = None

    def server_memory_bytes(self, ctx: TaskContext) -> int:
        return ctx.parameters(PgLogSpec).memory_bytes

    def _files(self, ctx: TaskContext) -> tuple[str, str, str]:
        """pgreplay's replay file, its parse statistics, its replay statistics."""
        base = f"{ctx.scratch}/{self.name}"
        return f"{base}.replay", f"{base}.parse.txt", f"{base}.txt"

    def prepare(self, ctx: TaskContext) -> None:
        self._require(ctx)
        self._parsed = self._result = None
        self._restore(ctx)
        self._configure(ctx)
        self._start(ctx)
        self._recovered(ctx)
        self._sql(ctx, "CHECKPOINT")  # the recovery's writes, untimed
        self._parse_log(ctx)
        ctx.sync()

    def _restore(self, ctx: TaskContext) -> None:
        spec, data = ctx.parameters(PgLogSpec), self._data(ctx)
        ctx.executor.remove_path(ctx.path(DIR))
        ctx.data_directory(ctx.path(DIR))  # before the restore: its files inherit the attributes
        ctx.executor.make_dir(data)
        ctx.executor.make_dir(self._socket(ctx))
        if spec.form == "plain":
            ctx.executor.call(("cp", "-a", f"{spec.base}/.", data))
        elif spec.form == "tar":
            ctx.executor.call(("tar", "-xf", spec.base, "-C", data))
        else:
            self._untar_dir(ctx, spec.base, data)
        for left in ("standby.signal", "recovery.signal", "postmaster.pid", "postmaster.opts"):
            ctx.executor.remove_path(f"{data}/{left}")
        ctx.executor.call(("chown", "-R", f"{USER}:{USER}", ctx.path(DIR)))
        ctx.executor.call(("chmod", "0700", data, self._socket(ctx)))

    def _recovered(self, ctx: TaskContext) -> None:
        """Wait until the server has replayed the backup's WAL and accepts statements."""
        deadline = time.monotonic() + RECOVERY_S
        while True:
            try:
                if self._sql(ctx, "SELECT pg_is_in_recovery()") == "f":
                    return
            except FsarenaError:
                if time.monotonic() > deadline:
                    raise
            if time.monotonic() > deadline:
                raise FsarenaError(f"the restored base backup was still in recovery after "
                                   f"{RECOVERY_S:.0f} s")  # fmt: skip
            time.sleep(0.1)

    def _untar_dir(self, ctx: TaskContext, base: str, data: str) -> None:
        """pg_basebackup -F t: base.tar[.gz] is the data directory, pg_wal.tar[.gz] its WAL."""
        for name, into in (("base", data), ("pg_wal", f"{data}/pg_wal")):
            for suffix in (".tar", ".tar.gz"):
                if ctx.executor.exists(f"{base}/{name}{suffix}"):
                    ctx.executor.make_dir(into)
                    ctx.executor.call(("tar", "-xf", f"{base}/{name}{suffix}", "-C", into))

    def _configure(self, ctx: TaskContext) -> None:
        data = self._data(ctx)
        own = {
            **OWN_SETTINGS,
            "unix_socket_directories": f"'{self._socket(ctx)}'",
            "port": str(PORT),
            "data_directory": f"'{data}'",
            "hba_file": f"'{data}/pg_hba.conf'",
            "ident_file": f"'{data}/pg_ident.conf'",
        }
        for name in ("postgresql.conf", "pg_ident.conf"):
            if not ctx.executor.exists(f"{data}/{name}"):  # Debian keeps them in /etc
                ctx.executor.write_file(f"{data}/{name}", b"")
        ctx.executor.write_file(f"{data}/pg_hba.conf", b"local all all trust\n")
        auto = f"{data}/postgresql.auto.conf"
        text = ctx.executor.read_text(auto) if ctx.executor.exists(auto) else ""
        text += "\n# fsarena pg_replay\n" + "".join(f"{k} = {v}\n" for k, v in own.items())
        ctx.executor.write_file(auto, text.encode())
        ctx.executor.call(("chown", f"{USER}:{USER}", auto, f"{data}/postgresql.conf",
                           f"{data}/pg_hba.conf", f"{data}/pg_ident.conf"))  # fmt: skip

    def _parse_log(self, ctx: TaskContext) -> None:
        """The log parsed once, untimed, into pgreplay's replay file."""
        spec, (replay, parsed, result) = ctx.parameters(PgLogSpec), self._files(ctx)
        facts = spec.facts
        argv = ["pgreplay", "-f", "-o", replay]
        argv += ["-c"] if facts.csv else []
        argv += ["-b", facts.begin] if facts.begin else []
        ctx.executor.remove_path(result)
        ctx.executor.call(("sh", "-c", '"$@" > "$0"', parsed, *argv, spec.log))
        self._parsed = parse_pgreplay(ctx.executor.read_text(parsed))

    def commands(self, ctx: TaskContext) -> list[Command]:
        replay, _, result = self._files(ctx)
        speed = ("-s", FAST_SPEED, "-j") if self.timing == "fast" else ("-s", "1")
        argv = ("pgreplay", "-r", "-h", self._socket(ctx), "-p", str(PORT), *speed, replay)
        return [Command(argv, stdout_path=result)]

    def _read(self, ctx: TaskContext) -> dict[str, float]:
        if self._result is None:
            self._result = parse_pgreplay(ctx.executor.read_text(self._files(ctx)[2]))
        return self._result

    def _logged(self, ctx: TaskContext) -> int:
        if self._parsed is None:
            self._parsed = parse_pgreplay(ctx.executor.read_text(self._files(ctx)[1]))
        return int(self._parsed.get("statements_parsed", 0))

    def verify(self, ctx: TaskContext) -> list[Check]:
        try:
            result, logged = self._read(ctx), self._logged(ctx)
        except (OSError, FsarenaError) as exc:
            return [Check("pgreplay statistics read", False, str(exc))]
        done, failed = int(result.get("statements", 0)), int(result.get("failed", 0))
        return [
            Check("every logged statement replayed", done == logged and done > 0,
                  f"{done:,} executed of {logged:,} logged"),
            Check("statements that failed", failed <= FAILED_MAX * max(1, done),
                  f"{failed:,} of {done:,} failed (at most {FAILED_MAX:.0%} may)"),
        ]  # fmt: skip

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        r = self._read(ctx)
        values = {
            "pgreplay_statements": r["statements"],
            "pgreplay_run_s": r["run_s"],
            "pgreplay_failed": r.get("failed", 0.0),
            "pgreplay_statement_avg_ms": 1e3 * r.get("statement_avg_s", 0.0),
            "pgreplay_statement_max_ms": 1e3 * r.get("statement_max_s", 0.0),
            **self._server_values(),
        }
        if self.timing == "paced":
            values["pgreplay_lag_s"] = r.get("lag_s", 0.0)
        return values

    def details(self) -> dict[str, Any]:
        """pgreplay's statistics as it printed them (parsed), and the log's; the run keeps them."""
        if self._result is None:
            return {}
        return {"pgreplay": {"replay": self._result, "parse": self._parsed or {}}}

    def cleanup(self, ctx: TaskContext) -> None:
        try:
            super().cleanup(ctx)
        finally:
            for path in self._files(ctx):
                ctx.executor.remove_path(path)
            if not self.running:
                ctx.executor.remove_path(ctx.path(DIR))


_COLUMNS = (
    "wall_s",
    "pgreplay_run_s",
    "pgreplay_statements",
    "pgreplay_statement_avg_ms",
    "pgreplay_statement_max_ms",
    "pgreplay_failed",
    "server_cpu_s",
    "cpu_pct",
    "device_write_bytes",
)


class PgReplay(_PgReplay):
    """Your PostgreSQL's statement log replayed as fast as possible (capacity: the total time).

    pgreplay -s 1000 -j on the restored base backup: no think time, idle time skipped;
    each session sends its next statement when its previous one returned.
    """

    name = "pg_replay"
    kind = "replay_capacity"
    timing = "fast"
    columns: ClassVar[tuple[str, ...] | None] = _COLUMNS


class PgReplayPaced(_PgReplay):
    """Your PostgreSQL's statement log replayed at its logged pace (latency, the lag).

    pgreplay -s 1 on the restored base backup: every statement sent at its logged
    time; pgreplay_lag_s is how far behind that schedule the replay fell at most.
    """

    name = "pg_replay_paced"
    kind = "replay_paced"
    timing = "paced"
    columns: ClassVar[tuple[str, ...] | None] = (*_COLUMNS[:3], "pgreplay_lag_s", *_COLUMNS[3:])


TASKS = (PgReplay, PgReplayPaced)
