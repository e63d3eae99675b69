"""From the tracer's records to trace events: descriptors resolved to paths, and what was there.

The kernel prints calls with descriptors and paths as the process passed
them. The resolver follows each process as the kernel does: its descriptor
table (from /proc/PID/fd at the start, then every open, dup, close, fork and
exec), its working directory (/proc/PID/cwd, chdir, fchdir), and makes every
path absolute (relative to the working directory or to the directory
descriptor an *at call names), lexically normalised. Each open gets an open
id (`oid`): the file description, shared by dup and fork, closed for real when
its last descriptor closes; the trace's descriptor calls name it, so a replay
needs no descriptor bookkeeping of its own.

A call is kept when its path (or its descriptor's) is in the scope (Scope):
the service's data, not the dynamic loader reading /usr/lib. What is left out
is counted by reason, never dropped silently. The tracer's own time on a call
left out (its probes', overhead_ns) is not the service's think time: the
thread's next event carries it, so a paced replay leaves it out of the gap.

The initial tree is inferred from the calls' own evidence, first call per path
wins (Evidence): an open that did not create its file found it there, of the
size and type the kernel read at that open; an open that created it, a stat
or an open that failed with ENOENT, or a successful mkdir, found nothing; a
successful unlink, rename or truncate found something. A path only read or
stat'ed keeps its state to the end, so the capture stats it then
(capture/facts.py) for its size and type.
"""

from __future__ import annotations

import errno
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fsarena.capture.bpf import RawCall
from fsarena.capture.calls import (
    AT_EMPTY_PATH,
    AT_FDCWD,
    AT_REMOVEDIR,
    READS,
    REPLAYED,
    UNREPLAYABLE,
    VECTORS,
    WRITES,
)

O_ACCMODE, O_WRONLY, O_RDWR = 0o3, 0o1, 0o2
O_CREAT, O_TRUNC, O_DIRECTORY, O_CLOEXEC = 0o100, 0o1000, 0o200000, 0o2000000
S_IFMT, S_IFDIR, S_IFREG, S_IFLNK = 0o170000, 0o040000, 0o100000, 0o120000
PROT_WRITE, MAP_SHARED = 0x2, 0x1


def signed32(value: int) -> int:
    """A 32-bit argument the tracer printed as an unsigned 64-bit number (AT_FDCWD)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


@dataclass(frozen=True)
class Scope:
    """Which paths are the service's: under one of `under` (when given), never under
    `excluded`, never on a filesystem of `pseudo` types (fstype_of tells a path's)."""

    under: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def holds(self, path: str) -> bool:
        if self.under and not any(_below(path, u) for u in self.under):
            return False
        return not any(_below(path, e) for e in self.excluded)


def _below(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class Open:
    """A file description: the path it was opened by, its flags, how many descriptors hold it."""

    oid: int
    path: str
    flags: int
    refs: int = 1
    cloexec: set[tuple[int, int]] = field(default_factory=set)  # (pid, fd) closed at exec


@dataclass
class Evidence:
    """What the first call on a path says was there before the capture (see module doc)."""

    existed: bool | None = None  # None: the call said nothing either way
    kind: str = ""  # "f", "d", "l", or "" unknown
    size_bytes: int = -1  # -1: not known from the calls
    modified: bool = False  # a call changed it: its state at the end is not its start
    read_end: int = 0  # how far reads reached before any write (the size is at least that)
    written: bool = False


@dataclass
class Counts:
    """What was left out of the trace, by reason, and what could not be replayed."""

    out_of_scope: dict[str, int] = field(default_factory=dict)  # call -> calls
    out_of_scope_bytes: int = 0
    unknown_fd: int = 0  # calls on descriptors opened before the capture and gone since
    truncated_paths: int = 0
    lost: int = 0  # records the kernel dropped (the tracer's buffers were full)
    unreplayable: dict[str, int] = field(default_factory=dict)  # "mmap_calls", "..._bytes"


def _bump(table: dict[str, int], key: str, by: int = 1) -> None:
    table[key] = table.get(key, 0) + by


class Resolver:
    """Turns time-ordered raw calls into trace events (see the module docstring)."""

    def __init__(self, scope: Scope, start_ns: int, strlen: int = 200) -> None:
        self.scope = scope
        self.start_ns = start_ns
        self.strlen = strlen
        self.fds: dict[int, dict[int, Open]] = {}  # pid -> fd -> its open
        self.cwd: dict[int, str] = {}
        self.opens: list[Open] = []
        self.events: list[list[Any]] = []
        self.preopened: list[list[Any]] = []  # ["fd", oid, pid, fd, path, flags, pos]
        self.evidence: dict[str, Evidence] = {}
        self.counts = Counts()
        self.threads: dict[int, int] = {}  # tid -> pid
        # Tasks forked and not yet seen: a thread or a process? Their descriptors are held
        # for them until their first record says (sched_process_fork says neither).
        self.forked: set[int] = set()
        # Per thread, the tracer's time on its calls that wrote no event (outside the
        # scope, or none of a replay's): it lies in the gap before the thread's next event
        # and is the tracer's, not the service's, so that event carries it.
        self.carried: dict[int, int] = {}

    # ------------------------------------------------------------ processes at the start

    def process(self, pid: int, cwd: str, fds: Iterable[tuple[int, str, int, int]]) -> None:
        """A traced process as /proc shows it at the start: its cwd and (fd, path, flags, pos)."""
        self.cwd[pid] = cwd
        table = self.fds.setdefault(pid, {})
        for fd, path, flags, pos in fds:
            if not path.startswith("/"):
                continue  # a socket, a pipe, an anonymous inode: not a file
            held = self._new_open(path, flags)
            table[fd] = held
            if self.scope.holds(path):
                self.preopened.append(["fd", held.oid, pid, fd, path, flags, pos])
                self._saw(path, existed=True)

    def _new_open(self, path: str, flags: int) -> Open:
        held = Open(len(self.opens), path, flags)
        self.opens.append(held)
        return held

    # ------------------------------------------------------------ the calls

    def feed(self, call: RawCall) -> None:
        if call.tid in self.forked:
            self._settle_fork(call.pid, call.tid)
        self.threads.setdefault(call.tid, call.pid)
        if call.pid not in self.fds:
            self.fds[call.pid] = {}
        written = len(self.events)
        handler = getattr(self, f"_on_{call.name}", None)
        if handler is not None:
            handler(call)
        elif call.name in REPLAYED or call.name in UNREPLAYABLE:
            self._on_fd_call(call)
        if len(self.events) == written:
            self.carried[call.tid] = self.carried.get(call.tid, 0) + call.overhead_ns
        elif carried := self.carried.pop(call.tid, 0):
            self.events[written][-1] += carried

    def _row(self, call: RawCall, name: str, result: int, *args: Any) -> list[Any]:
        """An event: [t_us, duration_ns, pid, tid, call, result, *args, overhead_ns]."""
        t_us = max(0, (call.start_ns - self.start_ns) // 1000)
        return [t_us, call.duration_ns, call.pid, call.tid, name, result, *args, call.overhead_ns]

    def _walked(self, call: RawCall, index: int) -> int:
        """How many trailing components of its path the call looked up itself: all of an
        absolute path; a relative one's (from its cwd or directory descriptor), unless it
        climbs with '..' (then all: a replay looks it up from the root)."""
        raw = call.paths[index] if index < len(call.paths) else ""
        parts = [p for p in raw.split("/") if p not in ("", ".")]
        if raw.startswith("/") or ".." in parts:
            return -1  # all of them
        return len(parts)

    def _path(self, call: RawCall, index: int, dirfd: int) -> str:
        raw = call.paths[index] if index < len(call.paths) else ""
        if len(raw) >= self.strlen - 1:
            self.counts.truncated_paths += 1
        if raw.startswith("/"):
            return posixpath.normpath(raw)
        dirfd = signed32(dirfd)
        if dirfd == AT_FDCWD:
            base = self.cwd.get(call.pid, "/")
        else:
            held = self.fds[call.pid].get(dirfd)
            base = held.path if held is not None else "/"
        return posixpath.normpath(posixpath.join(base, raw)) if raw else base

    def _left_out(self, call: RawCall, moved: int = 0) -> None:
        _bump(self.counts.out_of_scope, call.name)
        self.counts.out_of_scope_bytes += max(0, moved)

    def _on_fork(self, call: RawCall) -> None:
        child = call.result
        if child in self.fds or child == call.pid:
            return
        # A process gets a copy of the table (each descriptor a reference more); a thread
        # shares its process's. Which it is shows in its first record (_settle_fork).
        self.fds[child] = dict(self.fds[call.pid])
        for held in self.fds[child].values():
            held.refs += 1
        self.cwd[child] = self.cwd.get(call.pid, "/")
        self.forked.add(child)
        self.events.append(self._row(call, "fork", child))

    def _settle_fork(self, pid: int, tid: int) -> None:
        """The forked task's first record: a process (pid == tid) keeps its copy; a thread
        gives the references back."""
        self.forked.discard(tid)
        if pid == tid:
            return
        for held in self.fds.pop(tid, {}).values():
            held.refs -= 1
        self.cwd.pop(tid, None)

    def _on_exec(self, call: RawCall) -> None:
        table = self.fds[call.pid]
        for fd, held in list(table.items()):
            if (call.pid, fd) in held.cloexec:
                self._drop(call, fd, held, record=False)

    def _on_exit(self, call: RawCall) -> None:
        if call.pid == call.tid:  # the process: its descriptors close
            for fd, held in list(self.fds.get(call.pid, {}).items()):
                self._drop(call, fd, held, record=False)
        self.events.append(self._row(call, "exit", 0))

    def _drop(self, call: RawCall, fd: int, held: Open, record: bool) -> None:
        """A descriptor closed: by close (record), or by exec, exit or dup2 onto it, where
        a close row of no duration is written when it was the description's last."""
        self.fds[call.pid].pop(fd, None)
        held.refs -= 1
        held.cloexec.discard((call.pid, fd))
        last = 1 if held.refs <= 0 else 0
        if not self.scope.holds(held.path) or not (record or last):
            return
        implicit = 0 if record else 1  # the kernel closed it: no call of the process's own
        row = self._row(call, "close", call.result if record else 0, fd, held.oid, last, implicit)
        if implicit:
            row[1] = 0
        self.events.append(row)

    def _on_open(self, call: RawCall) -> None:
        dirfd, flags, mode, created, size, imode = call.ints
        path = self._path(call, 0, dirfd)
        flags &= 0xFFFFFFFF
        held = self._new_open(path, flags) if call.result >= 0 else None
        if held is not None:
            if flags & O_CLOEXEC:
                held.cloexec.add((call.pid, call.result))
            self._replace(call, call.result, held)
        if not self.scope.holds(path):
            return self._left_out(call)
        self._open_evidence(path, call.result, flags, created, size, imode)
        oid = held.oid if held is not None else -1
        walked = self._walked(call, 0)
        row = self._row(call, "open", call.result, oid, path, walked, flags, mode & 0o7777)
        self.events.append(row)
        return None

    def _replace(self, call: RawCall, fd: int, held: Open) -> None:
        """fd now names held; whatever it named before is closed (dup2 onto it, fd reuse)."""
        old = self.fds[call.pid].get(fd)
        if old is not None:
            self._drop(call, fd, old, record=False)
        self.fds[call.pid][fd] = held

    def _open_evidence(
        self, path: str, result: int, flags: int, created: int, size: int, imode: int
    ) -> None:
        writes = (flags & O_ACCMODE) in (O_WRONLY, O_RDWR) or bool(flags & O_TRUNC)
        if result >= 0 and created < 0:  # the tracer cannot tell (strace): O_CREAT made it
            existed = not flags & O_CREAT
            self._saw(path, existed=existed, kind=_kind(imode & 0xFFFF), modified=writes)
        elif result >= 0 and created:
            self._saw(path, existed=False, modified=True)
        elif result >= 0:
            kind = _kind(imode & 0xFFFF)
            known = 0 if flags & O_TRUNC else size  # a truncating open read the size after
            self._saw(path, existed=True, kind=kind, size=known, modified=writes)
        elif result == -errno.ENOENT:
            self._saw(path, existed=False, modified=writes)
        elif result in (-errno.EEXIST, -errno.EISDIR):
            self._saw(path, existed=True, kind="d" if result == -errno.EISDIR else "")

    def _saw(
        self,
        path: str,
        existed: bool | None,
        kind: str = "",
        size: int = -1,
        modified: bool = False,
    ) -> None:
        ev = self.evidence.get(path)
        if ev is None:
            ev = self.evidence[path] = Evidence(existed, kind, size)
        elif ev.existed is None and existed is not None and not ev.modified:
            # A call that said nothing (a rename's target) but changed the path ends what
            # later calls can tell of the start: they see what it made, not what was there.
            ev.existed, ev.kind, ev.size_bytes = existed, kind, size
        if not ev.kind and kind and ev.existed:
            ev.kind = kind
        ev.modified = ev.modified or modified

    def _held(self, call: RawCall, fd: int) -> Open | None:
        held = self.fds[call.pid].get(fd)
        if held is None:
            self.counts.unknown_fd += 1
        return held

    def _on_close(self, call: RawCall) -> None:
        fd = call.ints[0]
        held = self.fds[call.pid].get(fd)
        if held is not None:
            self._drop(call, fd, held, record=True)

    def _on_dup(self, call: RawCall) -> None:
        held = self._held(call, call.ints[0])
        if held is None or call.result < 0:
            return
        held.refs += 1
        self._replace(call, call.result, held)

    def _on_chdir(self, call: RawCall) -> None:
        if call.result == 0:
            self.cwd[call.pid] = self._path(call, 0, AT_FDCWD)

    def _on_fchdir(self, call: RawCall) -> None:
        held = self._held(call, call.ints[0])
        if held is not None and call.result == 0:
            self.cwd[call.pid] = held.path

    def _on_fd_call(self, call: RawCall) -> None:
        """A call on a descriptor: read, write, fsync, lseek, getdents, mmap, ..."""
        fd = call.ints[0]
        if call.name in ("sendfile", "copy_file_range", "splice"):
            return self._unreplayable_copy(call)
        if call.name == "io_uring_enter":
            _bump(self.counts.unreplayable, "io_uring_enter_calls")
            _bump(self.counts.unreplayable, "io_uring_submissions", max(0, call.ints[1]))
            return None
        if call.name == "msync":
            _bump(self.counts.unreplayable, "msync_calls")
            _bump(self.counts.unreplayable, "msync_bytes", max(0, call.ints[0]))
            return None
        if call.name == "sync":
            self.events.append(self._row(call, "sync", call.result))
            return None
        held = self._held(call, fd)
        if held is None:
            return None
        if not self.scope.holds(held.path):
            moved = call.result if call.name in READS | WRITES else 0
            return self._left_out(call, moved)
        if call.name == "mmap":
            return self._mmap(call, held)
        self._fd_evidence(call, held)
        args = _fd_args(call)
        self.events.append(self._row(call, call.name, call.result, fd, held.oid, *args))
        return None

    def _fd_evidence(self, call: RawCall, held: Open) -> None:
        ev = self.evidence.setdefault(held.path, Evidence(existed=True))
        if call.name in WRITES or call.name in ("fallocate", "ftruncate"):
            ev.modified = ev.written = True
        elif call.name in READS and not ev.written and call.result > 0:
            ev.read_end = max(ev.read_end, _offset(call) + call.result)
        elif call.name == "getdents" and not ev.kind:
            ev.kind = "d"

    def _mmap(self, call: RawCall, held: Open) -> None:
        _fd, length, prot, flags, _off = call.ints[:5]
        shared_writable = bool(prot & PROT_WRITE) and bool(flags & MAP_SHARED)
        key = "mmap_shared_writable_bytes" if shared_writable else "mmap_other_bytes"
        _bump(self.counts.unreplayable, "mmap_calls")
        _bump(self.counts.unreplayable, key, max(0, length))
        self.evidence.setdefault(held.path, Evidence(existed=True)).modified |= shared_writable

    def _unreplayable_copy(self, call: RawCall) -> None:
        a, b = call.ints[0], call.ints[1]
        files = [h for fd in (a, b) if (h := self.fds[call.pid].get(signed32(fd))) is not None]
        if not any(self.scope.holds(h.path) for h in files):
            return
        _bump(self.counts.unreplayable, f"{call.name}_calls")
        _bump(self.counts.unreplayable, f"{call.name}_bytes", max(0, call.result))

    # ------------------------------------------------------------ calls on paths

    def _on_stat(self, call: RawCall) -> None:
        dirfd, flags = call.ints[0], call.ints[1]
        raw = call.paths[0] if call.paths else ""
        if not raw and flags & AT_EMPTY_PATH:  # fstat through statx/fstatat
            held = self._held(call, signed32(dirfd))
            if held is not None and self.scope.holds(held.path):
                fd = signed32(dirfd)
                self.events.append(self._row(call, "fstat", call.result, fd, held.oid))
            return
        path = self._path(call, 0, dirfd)
        if not self.scope.holds(path):
            return self._left_out(call)
        self._result_evidence(path, call.result)
        walked = self._walked(call, 0)
        self.events.append(self._row(call, "stat", call.result, path, walked, flags & 0xFFFF))
        return None

    def _result_evidence(self, path: str, result: int, kind: str = "") -> None:
        if result == 0:
            self._saw(path, existed=True, kind=kind)
        elif result == -errno.ENOENT:
            self._saw(path, existed=False)

    def _on_unlink(self, call: RawCall) -> None:
        dirfd, flag = call.ints[0], call.ints[1]
        path = self._path(call, 0, dirfd)
        rmdir = bool(flag & AT_REMOVEDIR)
        if not self.scope.holds(path):
            return self._left_out(call)
        self._result_evidence(path, call.result, "d" if rmdir else "")
        self._saw(path, existed=None, modified=True)
        name, walked = "rmdir" if rmdir else "unlink", self._walked(call, 0)
        self.events.append(self._row(call, name, call.result, path, walked))
        return None

    def _on_mkdir(self, call: RawCall) -> None:
        path = self._path(call, 0, call.ints[0])
        if not self.scope.holds(path):
            return self._left_out(call)
        if call.result == 0:
            self._saw(path, existed=False, modified=True)
        elif call.result == -errno.EEXIST:
            self._saw(path, existed=True, kind="d")
        walked, mode = self._walked(call, 0), call.ints[1] & 0o7777
        self.events.append(self._row(call, "mkdir", call.result, path, walked, mode))
        return None

    def _two_paths(self, call: RawCall) -> tuple[str, str] | None:
        old = self._path(call, 0, call.ints[0])
        new = self._path(call, 1, call.ints[1])
        if not (self.scope.holds(old) and self.scope.holds(new)):
            self._left_out(call)
            return None
        return old, new

    def _on_rename(self, call: RawCall) -> None:
        paths = self._two_paths(call)
        if paths is None:
            return
        old, new = paths
        self._result_evidence(old, call.result)
        self._saw(old, existed=None, modified=True)
        self._saw(new, existed=None, modified=True)
        walked = (self._walked(call, 0), self._walked(call, 1))
        row = self._row(call, "rename", call.result, old, walked[0], new, walked[1], call.ints[2])
        self.events.append(row)

    def _on_link(self, call: RawCall) -> None:
        paths = self._two_paths(call)
        if paths is None:
            return
        old, new = paths
        self._result_evidence(old, call.result)
        if call.result == 0:
            self._saw(new, existed=False, modified=True)
        walked = (self._walked(call, 0), self._walked(call, 1))
        self.events.append(self._row(call, "link", call.result, old, walked[0], new, walked[1]))

    def _on_symlink(self, call: RawCall) -> None:
        target = call.paths[0] if call.paths else ""
        path = self._path(call, 1, call.ints[0])
        if not self.scope.holds(path):
            return self._left_out(call)
        if call.result == 0:
            self._saw(path, existed=False, modified=True)
        walked = self._walked(call, 1)
        self.events.append(self._row(call, "symlink", call.result, target, path, walked))
        return None

    def _on_truncate(self, call: RawCall) -> None:
        path = self._path(call, 0, call.ints[0])
        if not self.scope.holds(path):
            return self._left_out(call)
        self._result_evidence(path, call.result, "f")
        self._saw(path, existed=None, modified=True)
        walked = self._walked(call, 0)
        self.events.append(self._row(call, "truncate", call.result, path, walked, call.ints[1]))
        return None


def _kind(imode: int) -> str:
    kind = imode & S_IFMT
    return {S_IFDIR: "d", S_IFREG: "f", S_IFLNK: "l"}.get(kind, "")


def _offset(call: RawCall) -> int:
    """Where a read or write began: its position argument, or the file's position then."""
    ints = call.ints
    if call.name in ("read", "write", "readv", "writev"):
        return ints[2]  # the position the tracer read at entry
    if len(ints) > 4 and ints[2] in (-1, (1 << 64) - 1) and ints[4]:
        return ints[4]  # preadv2/pwritev2 at the current position
    return ints[2]


def _fd_args(call: RawCall) -> tuple[int, ...]:
    """A descriptor call's arguments as the trace keeps them (after fd and oid)."""
    ints = call.ints
    if call.name in VECTORS:
        return (_offset(call), max(0, call.result))  # offset, bytes (the iovecs are not read)
    if call.name in READS | WRITES:
        return (_offset(call), ints[1])  # offset, count
    if call.name == "lseek":
        return (ints[1], ints[2])
    if call.name == "sync_file_range":
        return (ints[1], ints[2], ints[3])
    if call.name == "fallocate":
        return (ints[1], ints[2], ints[3])
    if call.name in ("ftruncate", "getdents"):
        return (ints[1],)
    return ()
