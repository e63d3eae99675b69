"""What a workload's promises guarantee at each point of its run: the oracle of the power-loss test.

The model replays the script on an abstract filesystem (paths -> inodes ->
contents) and records each durability promise when the operation that makes
it returns:
- fsync/fdatasync of a file: its content, and the name it was synced under;
- fsync of a directory: its entries as they are (names present, names gone);
- sync (and the final umount): everything.
A crash state is judged at its cut: operations 0..k had returned (their
markers precede the cut), operation k+1 may have been under way. A promise
holds unless an operation issued after it (up to k+1) legitimately changed
what it covers: a later write or truncate (each 512-byte sector of the
promised range must then hold the promised or a later version), a rename or
unlink (the inode may then be found under its later names, or be gone).
What was never promised is not judged: for watched paths its fate is
classified (intact, old, empty, zeros, partial, missing, unreadable).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.powerloss.workload import Op, Workload

SECTOR = 512
ROOT = "."


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ROOT


@dataclass(frozen=True)
class Snapshot:
    """The model after some operations; promises are keyed by the snapshot that made them."""

    names: dict[str, int] = field(default_factory=dict)  # path -> inode
    dirs: frozenset[int] = frozenset()
    contents: dict[int, bytes] = field(default_factory=dict)  # file inode -> bytes
    data_promise: dict[int, int] = field(default_factory=dict)  # inode -> snapshot index
    name_promise: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (snap, ino)
    absent_promise: dict[str, int] = field(default_factory=dict)  # path -> snapshot index
    seen: frozenset[str] = frozenset()  # every path that ever existed

    def names_of(self, ino: int) -> set[str]:
        return self._by_inode.get(ino, set())

    @cached_property
    def _by_inode(self) -> dict[int, set[str]]:
        # Only read once the snapshot is complete (names never change after that).
        found: dict[int, set[str]] = {}
        for path, ino in self.names.items():
            found.setdefault(ino, set()).add(path)
        return found


@dataclass(frozen=True)
class Violation:
    path: str
    kind: str  # "lost": promised data or name gone or wrong; "resurrected": deletion undone
    detail: str


@dataclass(frozen=True)
class Verdict:
    violations: tuple[Violation, ...]
    unsynced: dict[str, str]  # watched path -> outcome


class Model:
    """Snapshots of the workload's effect: index t = t operations returned (the last = umount)."""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        snaps = [Snapshot()]
        for index, op in enumerate(workload.ops):
            where = f"workload {workload.name}, operation {index} ({op})"
            snaps.append(_step(snaps[-1], op, workload.data(index), len(snaps), where))
        snaps.append(_promise_all(snaps[-1], len(snaps)))  # umount: everything on disk
        self.snaps = snaps

    @property
    def final(self) -> int:
        """The snapshot index after umount."""
        return len(self.snaps) - 1

    def completed(self, mark: str) -> int | None:
        """Snapshot index a marker stands for ("op N" -> N+1, "umount" -> final), or None."""
        if mark == "umount":
            return self.final
        if mark.startswith("op ") and mark[3:].isdigit():
            return int(mark[3:]) + 1
        return None

    def judge(self, root: Path, t: int) -> Verdict:
        """Check the crash state mounted at root, cut when t operations had returned."""
        snap = self.snaps[t]
        found: dict[str, Violation] = {}
        for violation in (*self._data_checks(root, t), *self._name_checks(root, t)):
            found.setdefault(violation.path, violation)
        return Verdict(tuple(found[p] for p in sorted(found)), self._unsynced(root, t, snap))

    def _window(self, since: int, t: int) -> list[Snapshot]:
        """Snapshots of the operations after a promise made at `since`, up to the one in flight."""
        return self.snaps[since + 1 : min(t + 1, self.final) + 1]

    def _data_checks(self, root: Path, t: int) -> Iterable[Violation]:
        snap = self.snaps[t]
        for ino, since in sorted(snap.data_promise.items()):
            if ino not in snap.contents:
                continue
            window = self._window(since, t)
            durable = self.snaps[since].contents[ino]
            later = [w.contents[ino] for w in window if ino in w.contents and w.names_of(ino)]
            pinned = _pinned_names(snap, ino, window)
            if pinned:
                for path in sorted(pinned):
                    problem = _content_problem(root / path, durable, later)
                    if problem:
                        yield Violation(path, "lost", problem)
                continue
            candidates = {p for p, (_, i) in snap.name_promise.items() if i == ino}
            for w in [self.snaps[since], *window]:
                candidates |= w.names_of(ino)
            if any(not _content_problem(root / p, durable, later) for p in candidates):
                continue
            if any(not w.names_of(ino) for w in window) or not candidates:
                continue  # unlinked or replaced after the promise: may be gone
            path = sorted(candidates)[0]
            yield Violation(path, "lost", _content_problem(root / path, durable, later))

    def _name_checks(self, root: Path, t: int) -> Iterable[Violation]:
        snap = self.snaps[t]
        for path, (since, ino) in sorted(snap.name_promise.items()):
            if any(w.names.get(path) != ino for w in self._window(since, t)):
                continue
            want_dir = ino in snap.dirs
            if not os.path.lexists(root / path):
                yield Violation(path, "lost", "missing")
            elif want_dir != (root / path).is_dir():
                yield Violation(path, "lost", "a directory" if not want_dir else "not a directory")
        for path, since in sorted(snap.absent_promise.items()):
            if any(path in w.names for w in self._window(since, t)):
                continue
            if os.path.lexists(root / path):
                yield Violation(path, "resurrected", "deleted, and the deletion was made durable")

    def _unsynced(self, root: Path, t: int, snap: Snapshot) -> dict[str, str]:
        outcomes = {}
        for path in self.workload.watch:
            ino = snap.names.get(path)
            if ino is None or ino not in snap.contents:
                continue
            if snap.data_promise.get(ino) is not None and _promised_current(self, snap, ino):
                continue
            nearby = self.snaps[t : min(t + 1, self.final) + 1]
            current = [s.contents[s.names[path]] for s in nearby if path in s.names]
            older = [s.contents[s.names[path]] for s in self.snaps[1:t] if path in s.names]
            outcomes[path] = classify(root / path, current, older)
        return outcomes


def _promised_current(model: Model, snap: Snapshot, ino: int) -> bool:
    since = snap.data_promise[ino]
    return model.snaps[since].contents.get(ino) == snap.contents[ino]


def _pinned_names(snap: Snapshot, ino: int, window: list[Snapshot]) -> set[str]:
    """Promised names of the inode that no operation after the promise changed."""
    return {
        p
        for p, (_, i) in snap.name_promise.items()
        if i == ino and all(w.names.get(p) == ino for w in window)
    }


def read_file(path: Path) -> bytes | str:
    """The file's bytes, or why they cannot be read ("missing", "not a file", an error)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable: {os.strerror(exc.errno or errno.EIO)}"
    try:
        if not os.path.isfile(f"/proc/self/fd/{fd}"):
            return "not a file"
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        return f"unreadable: {os.strerror(exc.errno or errno.EIO)}"
    finally:
        os.close(fd)


def matches(actual: bytes, durable: bytes, later: list[bytes]) -> bool:
    """Whether a file holds its promised content, allowing what later operations may have done.

    Only the range every version shares is promised (a later truncate may shorten
    it); in it, each sector must be the promised or a later version's.
    """
    if actual == durable or actual in later:
        return True
    promised = min([len(durable), *(len(v) for v in later)])
    if len(actual) < promised:
        return False
    for start in range(0, promised, SECTOR):
        end = min(start + SECTOR, promised)
        sector = actual[start:end]
        if sector != durable[start:end] and all(sector != v[start:end] for v in later):
            return False
    return True


def _content_problem(path: Path, durable: bytes, later: list[bytes]) -> str:
    """Empty when the file holds its promised content, else what is wrong."""
    actual = read_file(path)
    if isinstance(actual, str):
        return actual
    if matches(actual, durable, later):
        return ""
    return f"wrong content: {len(actual)} bytes, {_describe(actual)}; promised {len(durable)}"


def _describe(data: bytes) -> str:
    if not data:
        return "empty"
    if data.count(0) == len(data):
        return "all zeros"
    return "other data"


def classify(path: Path, current: list[bytes], older: list[bytes]) -> str:
    """The fate of unsynced data: intact, old, empty, zeros, partial, missing, unreadable."""
    actual = read_file(path)
    if isinstance(actual, str):
        return "missing" if actual == "missing" else "unreadable"
    if actual in current:
        return "intact"
    if actual in older:
        return "old"
    if not actual:
        return "empty"
    if actual.count(0) == len(actual):
        return "zeros"
    return "partial"


# ---------------------------------------------------------------- simulation


def _step(prev: Snapshot, op: Op, data: bytes, index: int, where: str) -> Snapshot:
    names, contents = dict(prev.names), dict(prev.contents)
    snap = replace(
        prev,
        names=names,
        contents=contents,
        data_promise=dict(prev.data_promise),
        name_promise=dict(prev.name_promise),
        absent_promise=dict(prev.absent_promise),
    )
    if op.verb in ("fsync", "fdatasync", "sync"):
        return _promise(snap, op, index, where)
    if op.verb in ("mkdir", "write") and op.path not in names:
        _need_dir(snap, parent(op.path), where)
        ino = 1 + max([0, *prev.names.values(), *prev.contents])
        names[op.path] = ino
        if op.verb == "mkdir":
            return replace(snap, dirs=snap.dirs | {ino}, seen=snap.seen | {op.path})
        contents[ino] = b""
    elif op.verb == "mkdir":
        raise FsarenaError(f"{where}: {op.path} exists already")
    ino = _file(snap, op.path, where)
    if op.verb == "write":
        contents[ino] = data
    elif op.verb == "append":
        contents[ino] += data
    elif op.verb == "overwrite":
        old = contents[ino].ljust(op.offset, b"\0")
        contents[ino] = old[: op.offset] + data + old[op.offset + len(data) :]
    elif op.verb == "truncate":
        contents[ino] = contents[ino][: op.size].ljust(op.size, b"\0")
    elif op.verb in ("rename", "link"):
        _need_dir(snap, parent(op.dest), where)
        if op.verb == "link" and op.dest in names:
            raise FsarenaError(f"{where}: {op.dest} exists already")
        if op.dest in names and names[op.dest] in snap.dirs:
            raise FsarenaError(f"{where}: {op.dest} is a directory")
        if op.verb == "rename":
            del names[op.path]
        names[op.dest] = ino
    elif op.verb == "unlink":
        del names[op.path]
    return replace(snap, seen=snap.seen | set(names))


def _need_dir(snap: Snapshot, path: str, where: str) -> None:
    if path != ROOT and snap.names.get(path) not in snap.dirs:
        raise FsarenaError(f"{where}: directory {path} does not exist")


def _file(snap: Snapshot, path: str, where: str) -> int:
    ino = snap.names.get(path)
    if ino is None or ino in snap.dirs:
        raise FsarenaError(f"{where}: {path} is not an existing file")
    return ino


def _promise(snap: Snapshot, op: Op, index: int, where: str) -> Snapshot:
    if op.verb == "sync":
        return _promise_all(snap, index)
    if op.path == ROOT or snap.names.get(op.path) in snap.dirs:
        _need_dir(snap, op.path, where)
        _promise_entries(snap, op.path, index)
        return snap
    ino = _file(snap, op.path, where)
    snap.data_promise[ino] = index
    snap.name_promise[op.path] = (index, ino)
    snap.absent_promise.pop(op.path, None)
    return snap


def _promise_entries(snap: Snapshot, directory: str, index: int) -> None:
    """fsync of a directory: its present entries and its removals become durable."""
    for path in snap.seen:
        if parent(path) != directory:
            continue
        if path in snap.names:
            snap.name_promise[path] = (index, snap.names[path])
            snap.absent_promise.pop(path, None)
        else:
            snap.absent_promise[path] = index
            snap.name_promise.pop(path, None)


def _promise_all(prev: Snapshot, index: int) -> Snapshot:
    snap = replace(
        prev,
        data_promise=dict(prev.data_promise),
        name_promise=dict(prev.name_promise),
        absent_promise=dict(prev.absent_promise),
    )
    for ino in prev.contents:
        if prev.names_of(ino):
            snap.data_promise[ino] = index
    for directory in {ROOT, *(p for p, i in prev.names.items() if i in prev.dirs)}:
        _promise_entries(snap, directory, index)
    return snap
