"""A PostgreSQL statement log and its base backup as a dataset (`kind = "pglog"`).

`[datasets.pglog] kind = "pglog"  log = "/srv/pg/statements.log"  base =
"/srv/pg/base"` (or `fsarena run --pg-replay LOG --pg-base BACKUP`) names what
the pg_replay tasks (tasks/pg_replay.py) replay with pgreplay on each fresh
filesystem: the server's own log of every statement (`log_statement = 'all'`,
in stderr format with `log_line_prefix = '%m|%u|%d|%c|'`, or in csvlog), and
the base backup `pg_basebackup` took just before the log begins (a plain
directory, a tar-format directory holding base.tar[.gz] and pg_wal.tar[.gz], or
one tar file).

Both are checked when the plan is made, so a log pgreplay cannot read or a
missing backup stops the run in one line before anything is made: the log's
lines must carry pgreplay's prefix and hold at least one statement; the backup
must be one of the three forms with a PG_VERSION. The scan also learns what the
log covers (its statements and the time from its first to its last line, the
captured run's own duration) and where the replay must begin: after the last
pg_basebackup session the log holds, whose replication connection pgreplay
could not replay. Nothing is copied to the source; a recorded workload is not
shrunk by --scale. Standard library only.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from fsarena.datasets.spec import DatasetSpec, Layout, check_factor
from fsarena.errors import FsarenaError

MIB = 1 << 20
PREFIX = "%m|%u|%d|%c|"  # pgreplay's stderr log_line_prefix
# %m: "2026-11-27 18:51:17.328 UTC", then user, database, session id, each ended by "|".
STDERR_LINE = re.compile(
    r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)(?: \S+)?\|(?P<user>[^|]*)\|"
    r"(?P<db>[^|]*)\|(?P<session>[^|]*)\|(?P<message>.*)$"
)
STATEMENT = re.compile(r"^(LOG|ERROR):  (statement|execute [^:]*|duration: .* statement): ")
SESSION_LINE = re.compile(r"^(LOG|ERROR):  (statement|execute|duration|connection|disconnection)")
HEAD_LINES = 50  # the lines that must carry the prefix (continuation lines carry none)
TAR_NAMES = ("base.tar", "base.tar.gz")
HOW_TO_LOG = (
    "set log_statement = 'all', log_line_prefix = '%m|%u|%d|%c|' (or log_destination = "
    "'csvlog'), log_connections = on, log_disconnections = on, lc_messages = 'C' "
    "(docs/replay.md, PostgreSQL)"
)
HOW_TO_BACKUP = (
    "give the base backup taken just before the log begins: pg_basebackup -D DIR -X stream "
    "(plain, or -F t for tar) (docs/replay.md, PostgreSQL)"
)


@dataclass(frozen=True)
class LogFacts:
    """What a statement log covers, read from it alone."""

    csv: bool
    statements: int
    sessions: int
    first: dt.datetime
    last: dt.datetime
    begin: str  # pgreplay -b: the end of the last pg_basebackup session ("" none in the log)

    @property
    def logged_s(self) -> float:
        """The captured run's duration: from the log's first line to its last."""
        return (self.last - self.first).total_seconds()


def _time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.split(" UTC")[0].strip()[:23])


@dataclass
class _Scan:
    """The state of one pass over the log."""

    statements: int = 0
    first: dt.datetime | None = None
    last: dt.datetime | None = None
    begin: str = ""
    sessions: set[str] | None = None
    backups: set[str] | None = None

    def line(self, ts: str, session: str, message: str) -> None:
        when = _time(ts)
        if SESSION_LINE.match(message):  # the clients' time, not the server's start or stop
            self.first = self.first or when
            self.last = when
        sessions = self.sessions = self.sessions if self.sessions is not None else set()
        backups = self.backups = self.backups if self.backups is not None else set()
        if STATEMENT.match(message) or message.startswith("statement: "):
            self.statements += 1
            sessions.add(session)
        elif "replication connection authorized" in message:
            backups.add(session)
        elif message.startswith("LOG:  disconnection") and session in backups:
            # pgreplay cannot replay a replication connection: begin after it.
            after = when + dt.timedelta(milliseconds=1)  # -b keeps lines at or after it
            self.begin = after.isoformat(sep=" ", timespec="milliseconds")
            self.statements, self.first = 0, None
            sessions.clear()


def _scan_stderr(path: str) -> _Scan:
    scan = _Scan()
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, raw in enumerate(f, 1):
            m = STDERR_LINE.match(raw.rstrip("\n"))
            if m is None:
                if n <= HEAD_LINES and not raw.startswith(("\t", " ")) and raw.strip():
                    raise FsarenaError(
                        f"line {n} of {path} lacks pgreplay's prefix "
                        f"'{PREFIX}' (log_line_prefix): {HOW_TO_LOG}"
                    )
                continue
            scan.line(m["ts"], m["session"], m["message"])
    return scan


def _scan_csv(path: str) -> _Scan:
    """csvlog: time, user, database, pid, host, session id, ..., severity (11), message (13)."""
    scan = _Scan()
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        for n, row in enumerate(csv.reader(f), 1):
            if len(row) < 14 or not re.match(r"\d{4}-\d\d-\d\d ", row[0]):
                raise FsarenaError(f"record {n} of {path} is not a csvlog record")
            scan.line(row[0], row[5], f"{row[11]}:  {row[13]}")
    return scan


@functools.lru_cache(maxsize=4)
def _read(path: str, size: int, mtime_ns: int) -> LogFacts:
    """The log's facts, read once per version of the file (a plan asks many times)."""
    del size, mtime_ns
    is_csv = path.endswith(".csv")
    try:
        scan = _scan_csv(path) if is_csv else _scan_stderr(path)
    except (OSError, csv.Error, ValueError) as exc:
        raise FsarenaError(f"cannot read the statement log {path}: {exc}") from None
    if scan.first is None or scan.last is None or scan.statements == 0:
        raise FsarenaError(
            f"the statement log {path} holds no statement"
            f"{' after its pg_basebackup session' if scan.begin else ''}: {HOW_TO_LOG}"
        )
    return LogFacts(is_csv, scan.statements, len(scan.sessions or ()), scan.first, scan.last,
                    scan.begin)  # fmt: skip


def log_facts(path: str) -> LogFacts:
    try:
        st = os.stat(path)
    except OSError:
        raise FsarenaError(
            f"no statement log at {path}: give the PostgreSQL log written with {HOW_TO_LOG}"
        ) from None
    return _read(path, st.st_size, st.st_mtime_ns)


def backup_form(path: str) -> str:
    """ "plain", "tar-dir" or "tar" (one file); FsarenaError saying what to give otherwise."""
    p = Path(path)
    if p.is_dir() and (p / "PG_VERSION").is_file():
        return "plain"
    if p.is_dir() and any((p / n).is_file() for n in TAR_NAMES):
        return "tar-dir"
    if p.is_file() and tarfile.is_tarfile(p):
        return "tar"
    what = "does not exist" if not p.exists() else "is not a base backup"
    raise FsarenaError(f"{path} {what}: {HOW_TO_BACKUP}")


def _size(path: str) -> int:
    p = Path(path)
    if p.is_file():
        return p.stat().st_size
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file() and not f.is_symlink())


@dataclass(frozen=True, kw_only=True)
class PgLogSpec(DatasetSpec):
    """A statement log and its base backup, replayed by pgreplay (see the module docstring)."""

    kind: ClassVar[str] = "pglog"
    on_source: ClassVar[bool] = False
    proportional: ClassVar[bool] = False
    name: str = "pglog"
    log: str = ""
    base: str = ""
    memory_bytes: int = 1024 * MIB  # the server's memory cgroup: shared_buffers + page cache
    seed: int = 0  # unused: the workload is the log's

    def __post_init__(self) -> None:
        super().__post_init__()
        for key, value, how in (("log", self.log, HOW_TO_LOG), ("base", self.base, HOW_TO_BACKUP)):
            if not value:
                raise FsarenaError(f"no {key} given: {how}")
            if not os.path.isabs(value):
                raise FsarenaError(f"{key} must be an absolute path, got {value!r}")
        if self.memory_bytes < 64 * MIB:
            raise FsarenaError("memory_bytes must be at least 64 MiB (the server's memory)")
        backup_form(self.base)
        log_facts(self.log)  # checked whole now: FsarenaError naming what is wrong

    @property
    def facts(self) -> LogFacts:
        return log_facts(self.log)

    @property
    def form(self) -> str:
        return backup_form(self.base)

    @property
    def total_bytes(self) -> int:
        """Room the server needs: the restored backup twice (its growth, the WAL it writes)."""
        return 2 * _size(self.base) + 256 * MIB

    def to_dict(self) -> dict[str, object]:
        f = self.facts
        return {
            **super().to_dict(),
            "captured": {"statements": f.statements, "sessions": f.sessions,
                         "logged_s": f.logged_s, "begin": f.begin, "csv": f.csv},
        }  # fmt: skip

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return self

    def plan(self) -> Layout:
        return Layout((), ())

    def description(self) -> str:
        f = self.facts
        after = f", from the end of its pg_basebackup session ({f.begin})" if f.begin else ""
        return (
            f"your PostgreSQL statement log {self.log}: {f.statements:,} statements in "
            f"{f.sessions:,} sessions over {f.logged_s:,.1f} s{after}; base backup {self.base} "
            f"({self.form}, {_size(self.base) / 1e6:,.1f} MB); server memory "
            f"{self.memory_bytes // MIB} MiB"
        )
