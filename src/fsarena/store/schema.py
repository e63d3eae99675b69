"""The store's schema: ordered migration steps, the same SQL for SQLite and PostgreSQL.

A store records its version in `schema_version`; opening it applies every later
step in order, in one transaction per step. Steps are never edited once
released: a change is a new step appended to MIGRATIONS. Types are chosen to
mean the same in both engines (TEXT, BIGINT, DOUBLE PRECISION; keys are text
digests, so no engine-specific autoincrement).
"""

from __future__ import annotations

# Version 1 (fsarena 0.1.0): sessions, hosts, devices, runs, values.
_V1 = (
    """CREATE TABLE hosts (
        host_id TEXT PRIMARY KEY,
        machine_id TEXT NOT NULL,
        hostname TEXT NOT NULL,
        kernel TEXT NOT NULL,
        kernel_build TEXT NOT NULL,
        arch TEXT NOT NULL,
        cpu_model TEXT NOT NULL,
        cpus BIGINT NOT NULL,
        mem_total_bytes BIGINT NOT NULL
    )""",
    """CREATE TABLE devices (
        device_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        model TEXT NOT NULL,
        serial TEXT NOT NULL,
        fstype TEXT NOT NULL,
        scheduler TEXT NOT NULL
    )""",
    """CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        source_path TEXT NOT NULL,
        schema_version BIGINT NOT NULL,
        tool_version TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        suite TEXT NOT NULL,
        seed BIGINT,
        scale DOUBLE PRECISION,
        repetitions BIGINT,
        filesystems TEXT NOT NULL,
        host_id TEXT NOT NULL REFERENCES hosts (host_id),
        device_id TEXT NOT NULL REFERENCES devices (device_id),
        plan_json TEXT NOT NULL
    )""",
    """CREATE TABLE runs (
        session_id TEXT NOT NULL REFERENCES sessions (session_id),
        run_index BIGINT NOT NULL,
        filesystem TEXT NOT NULL,
        task TEXT NOT NULL,
        repetition BIGINT NOT NULL,
        started_at TEXT NOT NULL,
        status TEXT NOT NULL,
        fault TEXT NOT NULL,
        error TEXT NOT NULL,
        PRIMARY KEY (session_id, run_index)
    )""",
    """CREATE TABLE "values" (
        session_id TEXT NOT NULL,
        run_index BIGINT NOT NULL,
        metric TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, run_index, metric),
        FOREIGN KEY (session_id, run_index) REFERENCES runs (session_id, run_index)
    )""",
    "CREATE INDEX runs_by_task ON runs (task, filesystem)",
)

# The ordered steps: MIGRATIONS[i] takes a store from version i to i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1,)

TABLES = ("sessions", "hosts", "devices", "runs", "values")

CREATE_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"
