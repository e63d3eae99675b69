"""The bundle: one session's results, anonymised by construction, sealed by a content digest.

A bundle is built field by field from an allow-list, never by deleting what is
known to be identifying from a copy of the session: a field fsarena adds to
sessions later stays out of bundles until it is added here. What it holds:

- the results: every run (warm-up included) with every figure it measured
  (the numbers of its measurement and of each repeat, its probed values), its
  status, its fault's code, its checks' names and outcome, and when it started
  (seconds after the session started); the device ceilings fio measured;
- what they mean: each result's comparison key (session/key.py), each task's
  kind and table columns, each dataset's kind and size, the plan's numbers
  (scale, seed, rounds, weights), the order the filesystems ran in, the codes
  of the session's warnings;
- the host's kind: kernel major.minor, architecture, CPU model and count,
  memory, the class of device (sysfs: never its name, model or serial);
- two pseudonyms (share/identity.py): the host's and the session's, keyed by
  a salt that stays on this machine.

What it never holds: the host name, machine id, user names, any path (the work
directory, datasets, images, the session file), device names, models and
serials, IP addresses, the full kernel release and build, commands' argv (they
hold paths), error messages and check details (they quote paths), dataset
descriptions and origins, warnings' texts. Every string a bundle carries is a
name fsarena or its user chose (tasks, filesystems, metrics, a suite), a code,
a digest or a version; before writing, the bundle's text is searched for this
session's host name, machine id, paths, device names, serials and the user's
name, and refused if any is found.

The seal is the sha256 of the bundle as canonical JSON (keys sorted, no
spaces, ASCII, no NaN): anyone can check that the figures were not changed
since (fsarena share --verify). It is a digest, not a signature: it proves the
contents are whole, not who made them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import getpass
import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError, not_text
from fsarena.measure.collect import Measurement
from fsarena.session.file import Run, Session
from fsarena.session.key import parts, series
from fsarena.share.identity import pseudonym

FORMAT = "fsarena-bundle-1"
SUFFIX = ".bundle.json"
DIGEST_PREFIX = "sha256:"
# Names kept as they are (metrics, codes): anything else is not a name and is left out.
_WORD = re.compile(r"^[A-Za-z0-9_.+@-]{1,80}$")


def _number(value: object) -> int | float | bool | None:
    """A figure as JSON can hold it: finite numbers and booleans; anything else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def _figures(values: dict[str, Any]) -> dict[str, Any]:
    """Named figures: only names that are words, only values that are numbers."""
    return {
        k: n for k, v in sorted(values.items()) if _WORD.match(k) and (n := _number(v)) is not None
    }


def _measurement(m: Measurement, unavailable: frozenset[str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for field in dataclasses.fields(m):
        value = getattr(m, field.name)
        if field.name == "extra":
            found["extra"] = _figures(value)
        elif isinstance(value, int | float | bool) or value is None:
            found[field.name] = None if field.name in unavailable else _number(value)
    return found


def _seconds_after(start: str, at: str) -> float | None:
    try:
        return round(
            (dt.datetime.fromisoformat(at) - dt.datetime.fromisoformat(start)).total_seconds(), 3
        )
    except (TypeError, ValueError):
        return None


def _run(run: Run, start: str) -> dict[str, Any]:
    return {
        "filesystem": run.filesystem,
        "task": run.task,
        "repetition": run.repetition,
        "status": run.status,
        "fault": run.fault if _WORD.match(run.fault) else ("other" if run.fault else ""),
        "started_after_s": _seconds_after(start, run.started_at),
        "measurement": _measurement(run.measurement, run.unavailable) if run.measurement else None,
        "repeats": [_measurement(m, run.unavailable) for m in run.repeats],
        "values": _figures(run.values),
        "checks": [{"name": c.name, "ok": c.ok} for c in run.checks],
    }


def _identity(session: Session) -> str:
    """What makes a host itself: its machine id; its name where none was recorded."""
    return session.host.machine_id or session.host.hostname or "unknown host"


def _host(session: Session, key: bytes) -> dict[str, Any]:
    h, device = session.host, session.comparison.device
    return {
        "id": pseudonym(key, "host", _identity(session)),
        "kernel": series(h.kernel),
        "arch": h.machine,
        "cpu_model": h.cpu_model,
        "cpus": h.cpus,
        "mem_total_bytes": h.mem_total_bytes,
        "device": {
            "label": device.label,
            "kind": device.kind,
            "transport": device.transport,
            "rotational": device.rotational,
        }
        if device
        else None,
    }


def _session(session: Session, key: bytes) -> dict[str, Any]:
    p = session.plan
    return {
        "id": pseudonym(key, "session", _identity(session), session.created_at),
        "month": session.created_at[:7],
        "fsarena": session.tool_version,
        "schema_version": session.schema_version,
        "status": session.status,
        "stop": session.stop.code if session.stop else None,
        "suite": p.suite,
        "scale": _number(p.scale),
        "seed": p.seed,
        "repetitions": p.repetitions,
        "warmup_rounds": p.warmup_rounds,
        "decisive": p.decisive,
        "weights": _figures(p.weights),
        "filesystems": session.filesystems(),
        "tasks": session.tasks(),
        "order": session.order,
        "warnings": sorted({w.code for w in session.warnings if _WORD.match(w.code)}),
    }


def _task(session: Session, task: str) -> dict[str, Any]:
    info = session.plan.info(task)
    return {
        "kind": info.kind,
        "timed": info.timed,
        "writes": info.writes,
        "payload": info.payload,
        "columns": list(info.columns),
        "datasets": list(info.datasets),
    }


def build(session: Session, key: bytes) -> dict[str, Any]:
    """The bundle's contents, field by field (see the module docstring)."""
    start = session.created_at
    return {
        "format": FORMAT,
        "host": _host(session, key),
        "session": _session(session, key),
        "key": parts(session).to_dict(),
        "tasks": {t: _task(session, t) for t in session.tasks()},
        "datasets": {
            name: {
                "kind": d.spec.kind,
                "files": d.files,
                "directories": d.directories,
                "total_bytes": d.total_bytes,
            }
            for name, d in sorted(session.datasets.items())
        },
        "runs": [_run(r, start) for r in session.runs],
        "warmup": [_run(r, start) for r in session.warmup],
        "ceilings": [
            {
                "repetition": c.repetition,
                "direction": c.direction,
                "kind": c.kind,
                "bytes_per_s": _number(c.bytes_per_s),
                "size_bytes": c.size_bytes,
            }
            for c in session.ceilings
        ],
    }


# ---------------------------------------------------------------- the seal


def canonical(value: Any) -> bytes:
    """The one byte form a digest is taken of: keys sorted, no spaces, ASCII, no NaN."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return text.encode()


def seal(body: dict[str, Any]) -> dict[str, Any]:
    return {"digest": DIGEST_PREFIX + hashlib.sha256(canonical(body)).hexdigest(), "bundle": body}


def dumps(sealed: dict[str, Any]) -> str:
    """The bundle file's text: indented for a reader and a git diff, sorted, ASCII."""
    return json.dumps(sealed, indent=1, sort_keys=True, ensure_ascii=True, allow_nan=False) + "\n"


def make(session: Session, key: bytes) -> str:
    """A session's bundle as the text of its file, refused if it would carry an original."""
    text = dumps(seal(build(session, key)))
    found = leaks(text, session)
    if found:
        raise FsarenaError(
            f"refusing to share: the bundle would carry {found[0]}; rename what holds it "
            "(a filesystem variant, task or suite named after the host), then share again"
        )
    return text


def write(path: Path, text: str, force: bool) -> None:
    """Write the bundle file: a new name only (never another file), or replace it with force;
    either way whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "x") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if force:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if the name exists: never another file replaced
    except FileExistsError:
        from fsarena.session.file import refusal

        raise FsarenaError(refusal(path, "bundle")) from None
    except OSError as exc:
        raise FsarenaError(f"cannot write {path}: {exc.strerror}; give another --output") from None
    finally:
        tmp.unlink(missing_ok=True)


def verify(data: object, where: str) -> dict[str, Any]:
    """The bundle's contents if its digest matches them; FsarenaError saying what is wrong."""
    if not isinstance(data, dict) or set(data) != {"digest", "bundle"}:
        raise FsarenaError(f"{where} is not an fsarena bundle (no digest and bundle)")
    body = data["bundle"]
    try:
        actual = DIGEST_PREFIX + hashlib.sha256(canonical(body)).hexdigest()
    except ValueError:  # NaN or infinity: no bundle fsarena wrote holds one
        actual = ""
    if actual != data["digest"]:
        raise FsarenaError(
            f"{where} does not verify: its contents do not match its digest (changed or damaged "
            "after it was made); use the original its sender made"
        )
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        found = body.get("format") if isinstance(body, dict) else None
        raise FsarenaError(
            f"{where} is a bundle of format {found!r}, not {FORMAT}: read it with the fsarena "
            "that made it, or ask its sender to share it again"
        )
    return body


def read(path: Path) -> dict[str, Any]:
    """A bundle file, verified: its contents."""
    try:
        data = json.loads(path.read_bytes().decode())
    except FileNotFoundError:
        raise FsarenaError(f"no bundle at {path}; give a file `fsarena share` wrote") from None
    except UnicodeDecodeError as exc:
        raise FsarenaError(f"{path} is not a bundle: {not_text(exc)}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise FsarenaError(f"{path} is not a readable bundle: {exc}") from None
    return verify(data, str(path))


# ---------------------------------------------------------------- what must never leave


def originals(session: Session) -> list[tuple[str, str]]:
    """What a bundle of this session must not hold: (what it is, the string), long enough
    to search for without matching by chance."""
    h, t, b = session.host, session.target, session.host.workdir_backing
    found = [
        ("this host's name", h.hostname),
        ("this host's machine id", h.machine_id),
        ("the work directory", h.workdir),
        ("the work directory", session.plan.workdir),
        ("the work directory's device", b.device),
        ("the work directory's mount point", b.mountpoint if b.mountpoint != "/" else ""),
        ("a device model", b.model),
        ("the device", t.path),
        ("a device serial", t.serial),
        ("a device model", t.model),
        ("the full kernel release", h.kernel if series(h.kernel) != h.kernel else ""),
        ("the kernel build", h.kernel_build),
        *(("your user name", u) for u in _users()),
    ]
    return [(what, s) for what, s in found if s and len(s) >= 3]


def _users() -> list[str]:
    """The user's name, and the one sudo was run by; root (every run's) is no one's name."""
    names = {os.environ.get("SUDO_USER", "")}
    with contextlib.suppress(KeyError, OSError):  # no name for this uid
        names.add(getpass.getuser())
    return sorted(n for n in names if n and n != "root")


def leaks(text: str, session: Session) -> list[str]:
    """What of originals() the text holds, as words ("this host's name 'web01'")."""
    found = []
    for what, value in originals(session):
        pattern = re.escape(value)
        if value.replace("-", "").replace("_", "").isalnum():  # a name: as a word
            pattern = rf"(?<![A-Za-z0-9]){pattern}(?![A-Za-z0-9])"
        if re.search(pattern, text, re.IGNORECASE):
            found.append(f"{what} ({value!r})")
    return found
