"""A trace as the native replayer's program (native/replay.c): paths, tree, calls, their order.

Every path of the trace becomes a path under the replay's root (the trace's
"/a/b" is ROOT/a/b), and a symbolic link's target is made relative to its
link's directory, so that no name the replay resolves leaves the root. A call
that looked its path up relative to its working directory or a directory
descriptor (the trace says how many components it walked) is replayed from that
directory (a descriptor the replayer opens once), so the replay walks what the
service walked, not the whole path from the root. Each
call keeps its thread (one replayer thread per traced thread, in the traced
order), its open file by open id (the trace's oid is the replayer's slot), its
arguments, its traced result, start and duration.

Resource ordering (ROOT, "ARTC", SOSP '13): a call waits for the calls of other
threads on the same resource that had returned before it started in the trace.
A resource is a path: the one a call names, the one its file was opened by,
and, for calls that add or remove a name (create, mkdir, unlink, rename, link,
symlink), its directory's. Calls that overlapped in the trace were concurrent
and stay free to overlap. Per resource and thread only the latest such call is
needed: a thread's own order makes the earlier ones done by then.
"""

from __future__ import annotations

import posixpath
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsarena.capture.calls import POSITIONED, REPLAYED, VECTORS, WRITES
from fsarena.capture.trace import Trace

# native/replay.c's `enum kind`, in its order.
KINDS = (
    "open", "close", "read", "write", "pread", "pwrite", "readv", "writev", "preadv", "pwritev",
    "lseek", "fsync", "fdatasync", "sync_file_range", "syncfs", "sync", "rename", "unlink",
    "rmdir", "mkdir", "link", "symlink", "fallocate", "ftruncate", "truncate", "stat", "fstat",
    "getdents",
)  # fmt: skip
KIND_CODE = {name: i + 1 for i, name in enumerate(KINDS)}
O_CREAT = 0o100
VALID_OPEN_FLAGS = 0o37777777  # the kernel's VALID_OPEN_FLAGS: openat2 refuses any other bit
PROCESSES_ENDED = ("command ended", "exited")  # a trace header's `ended` when they ended it
NAMESPACE = frozenset({"mkdir", "unlink", "rmdir", "rename", "link", "symlink"})
KEPT_LATEST = 4  # per resource and thread, the latest calls kept to find a dependency


@dataclass
class Op:
    thread: int
    kind: str
    slot: int = -1
    p1: int = -1  # a path (relative to b1), or a symlink's target
    b1: int = -1  # the directory p1 is looked up from (a path's index; -1: the root)
    p2: int = -1
    b2: int = -1
    a: int = 0
    b: int = 0
    c: int = 0
    expect: int = 0
    start_ns: int = 0
    dur_ns: int = 0
    overhead_ns: int = 0  # the tracer's own time in the gap before it (not think time)
    deps: list[int] = field(default_factory=list)

    def line(self) -> str:
        head = (self.thread, KIND_CODE[self.kind], self.slot, self.p1, self.b1, self.p2,
                self.b2, self.a, self.b, self.c, self.expect, self.start_ns, self.dur_ns,
                self.overhead_ns, len(self.deps))  # fmt: skip
        return " ".join(map(str, (*head, *self.deps)))


def _overhead(event: list[Any]) -> int:
    """An event's overhead_ns, its last field (the tracer's time in the gap before it)."""
    last = event[-1]
    return last if isinstance(last, int) and last > 0 else 0


def _encode(path: str) -> str:
    return urllib.parse.quote(path, safe="/._-+,@~=")


def relative(path: str) -> str:
    """A trace's absolute path as a path under the replay's root."""
    rel = posixpath.normpath(path).lstrip("/")
    return rel or "."


def link_target(target: str, link: str) -> str:
    """A link's target relative to its directory, resolved in the trace's tree (never above /)."""
    where = posixpath.dirname(posixpath.normpath(link))
    absolute = posixpath.normpath(posixpath.join(where, target))  # normpath stops at /
    return posixpath.relpath(absolute, where)


class Compiler:
    """Builds the program (see the module docstring)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.paths: dict[str, int] = {}
        self.targets: dict[str, int] = {}
        self.threads: dict[int, int] = {}
        self.ops: list[Op] = []
        self.oid_path: dict[int, str] = {}
        # resource -> thread -> [(op index, traced end)], the latest few
        self.recent: dict[str, dict[int, list[tuple[int, int]]]] = {}

    def path(self, p: str) -> int:
        return self.paths.setdefault(relative(p), len(self.paths))

    def looked_up(self, p: str, walked: int) -> tuple[int, int]:
        """(the path as the call looked it up, from which directory): a call that walked the
        last `walked` components itself (relative to its cwd or a directory descriptor) is
        replayed from that directory, so the replay walks what the service walked."""
        parts = [c for c in p.split("/") if c]
        if walked < 0 or walked >= len(parts):
            return self.path(p), -1
        base = "/" + "/".join(parts[: len(parts) - walked])
        rel = "/".join(parts[len(parts) - walked :]) or "."
        return self.paths.setdefault(rel, len(self.paths)), self.path(base)

    def target(self, target: str, link: str) -> int:
        return self.targets.setdefault(link_target(target, link), len(self.targets))

    def compile(self) -> str:
        tree = [self._tree_line(e) for e in self.trace.tree]
        pre = [self._pre_line(e) for e in self.trace.preopened]
        carried: dict[int, int] = {}  # tid -> the tracer's time on its events not replayed
        for event in self.trace.events:
            op = self._op(event)
            if op is None:
                carried[event[3]] = carried.get(event[3], 0) + _overhead(event)
                continue
            op.overhead_ns += carried.pop(event[3], 0)
            self._order(op, event)
            self.ops.append(op)
        slots = max([-1, *self.oid_path]) + 1
        return "\n".join([
            "fsarena-replay-program 1",
            f"threads {max(1, len(self.threads))}",
            f"slots {slots}",
            f"paths {len(self.paths)}", *(_encode(p) for p in self.paths),
            f"targets {len(self.targets)}", *(_encode(t) for t in self.targets),
            f"tree {len(tree)}", *tree,
            f"pre {len(pre)}", *pre,
            f"ops {len(self.ops)}", *(o.line() for o in self.ops),
            f"tail_ns {self._tail_ns()}",
        ]) + "\n"  # fmt: skip

    def _tree_line(self, entry: list[Any]) -> str:
        kind, path = entry[0], entry[1]
        if kind == "f":
            return f"f {self.path(path)} {int(entry[2])}"
        if kind == "l":
            return f"l {self.path(path)} {self.target(entry[2], path)}"
        return f"d {self.path(path)}"

    def _pre_line(self, entry: list[Any]) -> str:
        _, oid, _pid, _fd, path, flags, pos = entry
        self.oid_path[oid] = path
        return f"{oid} {self.path(path)} {int(flags) & VALID_OPEN_FLAGS} {int(pos)}"

    def _tail_ns(self) -> int:
        """The service's time after its last replayed call: to the trace's end when the
        traced processes ended in it (their last exit; the capture noticed it up to a poll
        later), else to the capture's end (cut off by the duration or a signal)."""
        end = max((o.start_ns + o.dur_ns for o in self.ops), default=0)
        if self.trace.header.get("ended") in PROCESSES_ENDED:
            last = max((int(e[0]) * 1000 + int(e[1]) for e in self.trace.events), default=0)
            return max(0, last - end)
        duration = float(self.trace.header.get("duration_s", 0.0))
        return max(0, int(duration * 1e9) - end)

    def _op(self, e: list[Any]) -> Op | None:
        name = e[4]
        if name not in REPLAYED:
            return None
        if name == "close" and not e[8]:
            return None  # another descriptor still holds the file: nothing closes yet
        thread = self.threads.setdefault(e[3], len(self.threads))
        op = Op(thread, name, expect=int(e[5]), start_ns=int(e[0]) * 1000, dur_ns=int(e[1]),
                overhead_ns=int(e[-1]))  # fmt: skip
        return self._arguments(op, e[6:-1])

    def _arguments(self, op: Op, args: list[Any]) -> Op:
        name = op.kind
        if name == "open":
            oid, path, walked, flags, mode = args[:5]
            op.slot = oid if op.expect >= 0 else -1
            if op.expect >= 0:
                self.oid_path[oid] = path
            op.p1, op.b1 = self.looked_up(path, walked)
            op.a, op.b = int(flags) & VALID_OPEN_FLAGS, int(mode)
        elif name in ("sync",):
            pass
        elif name in ("rename", "link"):
            op.p1, op.b1 = self.looked_up(args[0], args[1])
            op.p2, op.b2 = self.looked_up(args[2], args[3])
            op.a = int(args[4]) if name == "rename" else 0
        elif name == "symlink":
            op.p1 = self.target(args[0], args[1])
            op.p2, op.b2 = self.looked_up(args[1], args[2])
        elif name in ("unlink", "rmdir", "mkdir", "stat", "truncate"):
            op.p1, op.b1 = self.looked_up(args[0], args[1])
            op.a = int(args[2]) if len(args) > 2 else 0
        else:
            self._fd_arguments(op, args)
        return op

    def _fd_arguments(self, op: Op, args: list[Any]) -> None:
        op.slot = int(args[1])
        rest = [int(v) for v in args[2:]]
        if op.kind == "close":
            op.c = rest[1] if len(rest) > 1 else 0  # 1: the kernel closed it (exit, exec)
        elif op.kind in POSITIONED or op.kind in ("read", "write", "readv", "writev"):
            offset, count = rest[0], rest[1]
            if op.kind in WRITES and op.expect >= 0:
                count = op.expect  # what the call wrote: its data, not the buffer's size
            op.a, op.b = count if op.kind not in VECTORS else max(0, op.expect), offset
        elif rest:
            op.a = rest[0]
            op.b = rest[1] if len(rest) > 1 else 0
            op.c = rest[2] if len(rest) > 2 else 0

    def _resources(self, op: Op, e: list[Any]) -> set[str]:
        names: set[str] = set()
        args = e[6:-1]
        if op.kind == "open":
            names.add(args[1])
            if args[3] & O_CREAT:
                names.add(posixpath.dirname(args[1]))
        elif op.kind == "symlink":
            names |= {args[1], posixpath.dirname(args[1])}
        elif op.kind in NAMESPACE or op.kind in ("stat", "truncate"):
            paths = [args[0], args[2]] if op.kind in ("rename", "link") else [args[0]]
            names |= set(paths)
            if op.kind in NAMESPACE:
                names |= {posixpath.dirname(p) for p in paths}
        elif op.slot >= 0 and op.slot in self.oid_path:
            names.add(self.oid_path[op.slot])
        return names

    def _order(self, op: Op, e: list[Any]) -> None:
        """The op's dependencies on other threads (module docstring), then it is recorded."""
        index, end = len(self.ops), op.start_ns + op.dur_ns
        deps: set[int] = set()
        for resource in self._resources(op, e):
            by_thread = self.recent.setdefault(resource, {})
            for thread, latest in by_thread.items():
                if thread == op.thread:
                    continue
                done = [i for i, finished in latest if finished <= op.start_ns]
                if done:
                    deps.add(max(done))
            kept = by_thread.setdefault(op.thread, [])
            kept.append((index, end))
            del kept[:-KEPT_LATEST]
        op.deps = sorted(deps)


def compile_program(trace: Trace, path: Path) -> Path:
    """Write the trace's program to path; path."""
    path.write_text(Compiler(trace).compile())
    return path
