"""Import session files into a store, idempotently: one row per session, its latest version.

A session's identity is where and when it started with which plan: (host, start
time, plan). The same file imported twice, or two copies of it, is one session;
the same session imported while `running` and again once finished is one session
too: its later version replaces the earlier (more runs, or finished), so `store
history` never counts one measurement twice, and an earlier version never replaces
a later one. Rows are keyed by a digest of the content (`session_id`, what users
type). Hosts and devices are keyed by a digest of their facts, so many sessions
share one host row.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from fsarena.measure.collect import Measurement
from fsarena.session.file import Run, Session, load, read_json
from fsarena.session.records import HostFacts
from fsarena.store.db import Store

DIGEST_CHARS = 16  # 64 bits of sha256: a short key people can type, collisions negligible


@dataclass(frozen=True)
class Imported:
    path: Path
    session_id: str
    added: bool
    runs: int
    state: str  # what the import did, in words


def content_digest(path: Path) -> str:
    """The row's key: sha256 of a session's canonical JSON, its journal merged (load it
    first: it checks)."""
    raw = read_json(path)
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:DIGEST_CHARS]


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:DIGEST_CHARS]


def host_row(host: HostFacts) -> tuple[Any, ...]:
    facts = (
        host.machine_id,
        host.hostname,
        host.kernel,
        host.kernel_build,
        host.machine,
        host.cpu_model,
        host.cpus,
        host.mem_total_bytes,
    )
    return (_key(*facts), *facts)


def device_row(session: Session) -> tuple[Any, ...]:
    """The device measured on: the --device target, or the backing of the loop images."""
    if session.target:
        t = session.target
        facts = ("device", t.path, t.model, t.serial, "", "")
    else:
        b = session.host.workdir_backing
        facts = ("loop-backing", b.device, b.model, "", b.fstype, b.scheduler)
    strs = tuple(str(f or "") for f in facts)
    return (_key(*strs), *strs)


_RAW_FIELDS = tuple(
    f.name for f in fields(Measurement) if f.name not in ("extra", "timed_out", "exit_code")
)


def raw_values(run: Run) -> dict[str, float]:
    """Every raw figure of a run (no derived metric), except those its version stored wrongly."""
    found: dict[str, float] = {}
    m = run.measurement
    if m is not None:
        for name in _RAW_FIELDS:
            value = getattr(m, name)
            if isinstance(value, int | float) and name not in run.unavailable:
                found[name] = float(value)
        found.update({k: float(v) for k, v in m.extra.items()})
    found.update({k: float(v) for k, v in run.values.items()})
    return {k: v for k, v in found.items() if math.isfinite(v)}


_SAME_SESSION = """
SELECT s.session_id, s.status, s.finished_at,
       (SELECT count(*) FROM runs r WHERE r.session_id = s.session_id)
FROM sessions s WHERE s.host_id = ? AND s.created_at = ? AND s.plan_json = ?
ORDER BY s.session_id
"""


def _progress(status: str, finished_at: str | None, runs: int) -> tuple[int, bool, str]:
    """How far a version of a session got: more runs, then finished, then finished later."""
    return (runs, status != "running", finished_at or "")


def import_session(store: Store, path: Path) -> Imported:
    """Add one session file to the store, or replace an earlier version of the same session.

    The check (is it there, is a later version there) and the insert are one exclusive
    transaction: concurrent imports of one session add it once.
    """
    session = load(path)
    digest = content_digest(path)
    runs = len(session.runs)
    identity = (host_row(session.host)[0], session.created_at, _plan(session))
    with store.transaction(exclusive=True):
        found = store.query(_SAME_SESSION, identity)
        # By content too: a row an older fsarena wrote may hold the plan in another form.
        if store.query("SELECT 1 FROM sessions WHERE session_id = ?", (digest,)):
            return Imported(path, digest, False, runs, "already in the store")
        mine = _progress(session.status, session.finished_at, runs)
        later = [f for f in found if _progress(f[1], f[2], int(f[3])) > mine]
        if later:
            sid, status, _, n = later[0]
            return Imported(
                path, digest, False, runs,
                f"not added: a later version of this session is in the store ({sid}: "
                f"{status}, {n} runs)",
            )  # fmt: skip
        for sid, *_ in found:
            _delete(store, sid)
        _insert(store, session, digest, path)
    if not found:
        return Imported(path, digest, True, runs, f"added ({runs} runs)")
    earlier = ", ".join(f"{sid} ({status}, {n} runs)" for sid, status, _, n in found)
    return Imported(path, digest, True, runs, f"added ({runs} runs), replacing {earlier}")


def _plan(session: Session) -> str:
    return json.dumps(session.plan.model_dump(mode="json"), sort_keys=True)


def _delete(store: Store, session_id: str) -> None:
    """An earlier version of a session, with its runs and values (the same measurements)."""
    for table in ('"values"', "runs", "sessions"):
        store.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))


def _insert(store: Store, session: Session, digest: str, path: Path) -> None:
    host = host_row(session.host)
    device = device_row(session)
    store.execute(f"INSERT INTO hosts VALUES ({_marks(host)}) ON CONFLICT DO NOTHING", host)
    store.execute(f"INSERT INTO devices VALUES ({_marks(device)}) ON CONFLICT DO NOTHING", device)
    plan = session.plan
    row = (
        digest, str(path.resolve()), session.schema_version, session.tool_version,
        session.created_at, session.finished_at, session.status, plan.suite,
        plan.seed, plan.scale, plan.repetitions,
        ",".join(session.filesystems()), host[0], device[0],
        _plan(session),
    )  # fmt: skip
    store.execute(f"INSERT INTO sessions VALUES ({_marks(row)})", row)
    runs, values = [], []
    for i, run in enumerate(session.runs):
        runs.append(
            (digest, i, run.filesystem, run.task, run.repetition, run.started_at,
             run.status, run.fault, run.error)
        )  # fmt: skip
        values += [(digest, i, k, v) for k, v in sorted(raw_values(run).items())]
    store.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", runs)
    store.executemany('INSERT INTO "values" VALUES (?, ?, ?, ?)', values)


def _marks(row: tuple[Any, ...]) -> str:
    return ", ".join("?" for _ in row)
