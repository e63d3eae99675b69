"""The session's journal: saving a run in constant time, whatever the session's length.

The runner saves after every run so that a crash, a signal or a test watching the file
loses nothing. Rewriting the whole session each time cost more with every run (0.56 s
of saves in round 1 of the default run, 1.01 s in round 10; quadratic over a long
session). Instead, a run's save appends one line to a journal beside the session file,
NAME.json.journal: the runs, warm-up runs and ceiling samples added since the last line
(lists that only grow), and the rest of the session only when it changed (its plan,
status, timing, warnings: small, and rewritten at most once a round).

The session file itself is always a whole, valid, versioned JSON document: written
whole when the run starts and again when it ends, however it ends (completed, stopped
by a signal or an error: the runner's last save compacts the journal into it and
removes the journal). Only a kill -9 or a power cut leaves a journal behind; `load`
then merges it, so nothing measured is lost, and the next save of that session (a
resume) compacts it.

Each line says which session it belongs to (its created_at) and its sequence number;
the session file records the last number it holds (Session.journaled), so a journal
left by a compaction cut short is not applied twice, and a line cut short by the crash
(the last one) is passed over.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from fsarena.session.signals import stop_signals_held


class Saved(Protocol):
    """What the journal reads of a session (session.file.Session, which imports this module)."""

    created_at: str
    journaled: int

    def model_dump_json(self, *, exclude: set[str]) -> str: ...


Session = TypeVar("Session", bound=Saved)


SUFFIX = ".journal"
# Lists of the session that only ever grow: a line carries their new items, with the
# index of the first (a merge puts them there, so applying a line twice changes nothing).
GROWING = ("runs", "warmup", "ceilings")
# Never in the rest: the lists above, and the journal's own mark.
NOT_REST = {*GROWING, "journaled"}


def journal_of(path: Path) -> Path:
    """The journal beside a session file."""
    return path.with_name(path.name + SUFFIX)


class Journal(Generic[Session]):
    """Appends a session's changes to its journal; `compact` writes the session whole.

    write_whole: how the whole file is written (session.file.save, given by the caller:
    that module reads journals, so this one does not import it).
    """

    def __init__(self, path: Path, write_whole: Callable[[Session, Path], None]) -> None:
        self.path = path
        self.write_whole = write_whole
        self.journal = journal_of(path)
        self._counts: dict[str, int] | None = None  # None: not compacted by us yet
        self._rest = ""

    def save(self, session: Session) -> None:
        """Save what changed since the last save: a line appended, or the whole file at first."""
        if self._counts is None or self._counts_shrank(session):
            self.compact(session)
            return
        new = {name: getattr(session, name)[self._counts[name] :] for name in GROWING}
        rest = session.model_dump_json(exclude=NOT_REST)
        if not any(new.values()) and rest == self._rest:
            return
        seq = session.journaled + 1
        parts = [f'"seq":{seq}', f'"session":{json.dumps(session.created_at)}']
        for name, items in new.items():
            if items:
                dumped = ",".join(item.model_dump_json() for item in items)
                parts.append(f'"{name}":{{"at":{self._counts[name]},"items":[{dumped}]}}')
        if rest != self._rest:
            parts.append(f'"rest":{rest}')
        line = "{" + ",".join(parts) + "}\n"
        with stop_signals_held():
            fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode())
                os.fsync(fd)
            finally:
                os.close(fd)
        session.journaled = seq
        self._rest = rest
        for name, items in new.items():
            self._counts[name] += len(items)

    def compact(self, session: Session) -> None:
        """Write the session whole (it holds every line so far), then remove the journal."""
        self.write_whole(session, self.path)
        self.journal.unlink(missing_ok=True)
        self._counts = {name: len(getattr(session, name)) for name in GROWING}
        self._rest = session.model_dump_json(exclude=NOT_REST)

    def _counts_shrank(self, session: Session) -> bool:
        """A growing list that lost items (a caller replaced it): only a whole save says so."""
        assert self._counts is not None
        return any(len(getattr(session, name)) < self._counts[name] for name in GROWING)


def merge(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """A session file's JSON with its journal's lines applied (those it does not hold yet).

    Lines of another session (an earlier one replaced at this name), lines the file
    already holds, and a last line cut short by a crash are passed over; a gap (a line
    whose items would not follow the ones before) ends the merge there.
    """
    journal = journal_of(path)
    try:
        lines = journal.read_bytes().splitlines()
    except OSError:  # none (the usual case: the run ended and compacted it)
        return raw
    held = raw.get("journaled", 0)
    for text in lines:
        try:
            line = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            break  # cut short: the crash came while it was written
        if not isinstance(line, dict) or line.get("session") != raw.get("created_at"):
            continue
        seq = line.get("seq")
        if not isinstance(seq, int) or seq <= held:
            continue
        if not _apply(raw, line):
            break
        raw["journaled"] = held = seq
    return raw


def _apply(raw: dict[str, Any], line: dict[str, Any]) -> bool:
    for name in GROWING:
        if name not in line:
            continue
        part = line[name]
        have = raw.setdefault(name, [])
        at, items = part.get("at"), part.get("items")
        if not isinstance(at, int) or not isinstance(items, list) or at > len(have):
            return False
        have[at : at + len(items)] = items
    if isinstance(rest := line.get("rest"), dict):
        raw.update(rest)
    return True
