"""Import session files into a store, idempotently: a session is keyed by its content digest.

The digest is taken over the session's canonical JSON (sorted keys, no
whitespace), so the same session imported twice, or from two copies at
different paths, is one session in the store. Hosts and devices are keyed by a
digest of their facts, so many sessions share one host row.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.measure.collect import Measurement
from fsarena.session.file import Run, Session, load
from fsarena.session.records import HostFacts
from fsarena.store.db import Store

DIGEST_CHARS = 16  # 64 bits of sha256: a short key people can type, collisions negligible


@dataclass(frozen=True)
class Imported:
    path: Path
    session_id: str
    added: bool
    runs: int


def content_digest(path: Path) -> str:
    """The session's identity: sha256 of its canonical JSON."""
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise FsarenaError(f"{path} is not a readable session file: {exc}") from exc
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


def import_session(store: Store, path: Path) -> Imported:
    """Add one session file to the store; nothing is added if it is already there."""
    digest = content_digest(path)
    session = load(path)
    if store.query("SELECT 1 FROM sessions WHERE session_id = ?", (digest,)):
        return Imported(path, digest, False, len(session.runs))
    with store.transaction():
        _insert(store, session, digest, path)
    return Imported(path, digest, True, len(session.runs))


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
        json.dumps(plan.model_dump(mode="json"), sort_keys=True),
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
