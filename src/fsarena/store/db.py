"""A connection to a store, SQLite or PostgreSQL, behind one small interface.

Both engines get the same SQL: statements are written with `?` placeholders and
translated for psycopg. A store opened here is always migrated to the newest
schema version first (store.schema.MIGRATIONS).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.store.schema import CREATE_VERSION_TABLE, MIGRATIONS

Row = tuple[Any, ...]
ADVISORY_LOCK = 0x66736172656E61  # "fsarena": PostgreSQL's key for exclusive transactions
BUSY_TIMEOUT_S = 60.0  # how long a write waits for another writer's transaction to end
BUSY_STEP_S = 0.5  # SQLite's own wait for a lock, at most, between two checks for a signal


class Store:
    """One open store: run statements, in transactions, on SQLite or PostgreSQL."""

    def __init__(self, conn: Any, url: str, postgres: bool) -> None:
        self._conn = conn
        self.url = url
        self.postgres = postgres

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.close()

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._conn.execute(self._sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        if self.postgres:
            with self._conn.cursor() as cur:
                cur.executemany(self._sql(sql), [tuple(r) for r in rows])
        else:
            self._conn.executemany(sql, [tuple(r) for r in rows])

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """All rows of a query, with column names available through `columns`."""
        cur = self._conn.execute(self._sql(sql), tuple(params))
        self.columns = [d[0] for d in cur.description or ()]
        return [tuple(r) for r in cur.fetchall()]

    @contextmanager
    def transaction(self, exclusive: bool = False) -> Iterator[None]:
        """All or nothing: a failed import leaves the store as it was.

        exclusive: one such transaction at a time, across processes, from its first
        statement (SQLite's BEGIN IMMEDIATE; PostgreSQL's transaction-level advisory
        lock): what it reads cannot change before it writes (an import checks that a
        session is not there yet, then inserts it; two imports of one session at once
        both found it absent, and the second insert failed on the key).
        """
        if self.postgres:
            with self._conn.transaction():
                if exclusive:
                    self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK,))
                yield
            return
        self._patiently("BEGIN IMMEDIATE" if exclusive else "BEGIN")
        try:
            yield
            self._patiently("COMMIT")
        except BaseException as exc:
            with suppress(sqlite3.Error):  # a stop that landed in COMMIT or BEGIN itself
                self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError):  # full, read-only, locked too long
                raise FsarenaError(
                    f"cannot write the store {self.url}: {exc}; it is as it was before this "
                    "write: make room there (or wait for its other writer), or give another "
                    "--store"
                ) from None
            raise

    def _patiently(self, statement: str) -> None:
        """A statement that waits for another writer's lock, up to BUSY_TIMEOUT_S.

        Waited here, in steps of at most BUSY_STEP_S, not in SQLite's own busy handler:
        a stop signal waited there until the whole timeout had passed (Python runs its
        handler between steps).
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._conn.execute(statement)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def version(self) -> int:
        rows = self.query("SELECT max(version) FROM schema_version")
        return int(rows[0][0] or 0)

    def migrate(self) -> int:
        """Apply every migration step after the store's version, each in its own transaction
        (exclusive: two processes opening a new store at once apply each step once); the
        store's version then, read inside them (a read outside waited only BUSY_STEP_S for
        another writer's commit, and failed "database is locked" behind a slow fsync)."""
        with self.transaction(exclusive=True):
            self.execute(CREATE_VERSION_TABLE)
            found = self.version()
        for number, steps in enumerate(MIGRATIONS, start=1):
            with self.transaction(exclusive=True):
                found = self.version()
                if found >= number:
                    continue
                for step in steps:
                    self.execute(step)
                self.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
                found = number
        return found


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def open_store(url: str, create: bool = True) -> Store:
    """Open (and create or migrate) the store at a path or a postgresql:// URL.

    create=False: a command that only reads refuses a path with no store, rather
    than leave an empty database where a mistyped --store pointed.
    """
    if not create and not is_postgres(url) and not Path(url).is_file():
        raise FsarenaError(
            f"no store at {url}; give the --store that `fsarena store import` or "
            "`fsarena run` wrote (default: results/fsarena.sqlite)"
        )
    made = not is_postgres(url) and not Path(url).exists()
    store = _connect_postgres(url) if is_postgres(url) else _connect_sqlite(url)
    try:
        found = store.migrate()
        if found > len(MIGRATIONS):
            raise FsarenaError(
                f"the store {url} has schema version {found}, newer than this "
                f"fsarena's {len(MIGRATIONS)}; upgrade fsarena to use it"
            )
    except sqlite3.DatabaseError as exc:
        _abandon(store, url, made)
        if isinstance(exc, sqlite3.OperationalError):  # full, read-only, locked
            raise FsarenaError(f"cannot use the store {url}: {exc}; give another --store") from None
        # "file is not a database": a session file, a report, anything but a store
        raise FsarenaError(f"{url} is not an fsarena store ({exc}); give another --store") from None
    except BaseException:  # a write Store.transaction refused in one line, a stop
        _abandon(store, url, made)
        raise
    return store


def _abandon(store: Store, url: str, made: bool) -> None:
    """Close a store this call could not finish opening; one it began, no file left of."""
    store._conn.close()
    if made:
        Path(url).unlink(missing_ok=True)
        Path(f"{url}-journal").unlink(missing_ok=True)


def _connect_sqlite(path: str) -> Store:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        # Autocommit mode: transactions are explicit (Store.transaction), for both engines.
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_STEP_S)
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        raise FsarenaError(f"cannot open the store {path}: {exc}; give another --store") from exc
    return Store(conn, path, postgres=False)


def _connect_postgres(url: str) -> Store:
    import psycopg

    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FsarenaError(
            f"cannot connect to the store {url}: {first}; check the URL and that the "
            "server is running"
        ) from exc
    return Store(conn, url, postgres=True)
