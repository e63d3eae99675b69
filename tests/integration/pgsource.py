"""A PostgreSQL server standing for production: a statement log and a base backup recorded from it.

Started as fsarena starts its servers: as user postgres, on a Unix socket in a
private directory only (no TCP listener), recorded in the work directory's
ledger (kind "postgres") before it starts, and stopped by fsarena's own undo
(host/servers.py stop_postgres), so `fsarena cleanup --workdir` would stop
it after a kill -9. The settings are docs/replay.md's (PostgreSQL): every
statement logged in stderr format with pgreplay's prefix, from the start; the
base backup is taken with pg_basebackup while it runs, so the log also holds
the statements made before it and pg_basebackup's own sessions, which the
replay must skip. Used by tests/integration/test_pg_replay.py and
bench/pg_replay_fidelity.py.
"""

from __future__ import annotations

import glob
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fsarena.host.ledger import Ledger
from fsarena.host.servers import stop_postgres

PORT = 5433  # names the socket file only
LOGGING = {
    "listen_addresses": "''",
    "port": str(PORT),
    "log_statement": "'all'",
    "log_line_prefix": "'%m|%u|%d|%c|'",
    "log_connections": "on",
    "log_disconnections": "on",
    "log_min_messages": "error",
    "log_min_error_statement": "log",
    "lc_messages": "'C'",
    "logging_collector": "off",
}


def bindir() -> str:
    return sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))[-1]


def as_postgres(*argv: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv]


@dataclass
class Source:
    """The running source server: where its files are, and how to reach it."""

    root: Path
    data: Path
    socket: Path
    log: Path

    def client(self, tool: str, *args: str) -> list[str]:
        return [f"{bindir()}/{tool}", "-h", str(self.socket), "-p", str(PORT), "-U", "postgres",
                *args]  # fmt: skip

    def sql(self, script: str, database: str = "postgres") -> None:
        subprocess.run(self.client("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database),
                       input=script, text=True, check=True, capture_output=True)  # fmt: skip

    def base_backup(self, into: Path) -> None:
        """pg_basebackup into an empty directory made for postgres (it may be anywhere)."""
        into.mkdir(mode=0o700)
        subprocess.run(["chown", "postgres:postgres", str(into)], check=True)
        subprocess.run(as_postgres(*self.client("pg_basebackup", "-D", str(into), "-X", "stream",
                                                "-c", "fast")), check=True)  # fmt: skip


@contextmanager
def source_server(root: Path, log: Path | None = None) -> Iterator[Source]:
    """initdb and start under root (searchable by postgres); stopped however the block ends.

    log: where the server writes its log (default root/statements.log).
    """
    root.mkdir(parents=True, exist_ok=True)
    src = Source(root, root / "data", root / "socket", log or root / "statements.log")
    src.socket.mkdir()
    subprocess.run(["chown", "-R", "postgres:postgres", str(root)], check=True)
    src.socket.chmod(0o700)
    subprocess.run(as_postgres(f"{bindir()}/initdb", "-D", str(src.data), "--auth=trust",
                               "--locale=C", "--encoding=SQL_ASCII", "--no-sync"),
                   check=True, capture_output=True)  # fmt: skip
    settings = {**LOGGING, "unix_socket_directories": f"'{src.socket}'"}
    with open(src.data / "postgresql.conf", "a") as f:
        f.write("".join(f"{k} = {v}\n" for k, v in settings.items()))
    (src.data / "pg_hba.conf").write_text("local all all trust\nlocal replication all trust\n")
    src.log.touch()
    subprocess.run(["chown", "postgres:postgres", str(src.log)], check=True)
    ledger = Ledger(str(root))
    ledger.track("postgres", str(src.data))
    try:
        subprocess.run(as_postgres(f"{bindir()}/pg_ctl", "-D", str(src.data), "-l", str(src.log),
                                   "-w", "start"), check=True, capture_output=True)  # fmt: skip
        yield src
    finally:
        stop_postgres(str(src.data))
        ledger.untrack("postgres", str(src.data))


def transactions(count: int, first: int = 0) -> tuple[str, int]:
    """`count` small transactions (BEGIN, UPDATE, INSERT, COMMIT), and the statements they send."""
    lines = []
    for i in range(first, first + count):
        lines += ["BEGIN;", f"UPDATE account SET balance = balance + 1 WHERE id = {i % 100};",
                  f"INSERT INTO history (id, delta) VALUES ({i % 100}, 1);", "COMMIT;"]  # fmt: skip
    return "\n".join(lines) + "\n", len(lines)


SCHEMA = """
CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL);
INSERT INTO account SELECT g, 0 FROM generate_series(0, 99) g;
CREATE TABLE history (id int NOT NULL, delta int NOT NULL, at timestamptz DEFAULT now());
"""


def record(root: Path, sessions: int, per_session: int) -> tuple[Path, Path, int]:
    """A statement log and its base backup: schema, backup, then `sessions` psql sessions of
    small transactions one after another. Returns the log, the backup and the statements the
    workload sent after the backup; the server is stopped on return."""
    base = root / "base"
    with source_server(root) as src:
        src.sql(SCHEMA)
        src.base_backup(base)
        sent = 0
        for s in range(sessions):
            script, n = transactions(per_session, s * per_session)
            src.sql(script)
            sent += n
    return src.log, base, sent
