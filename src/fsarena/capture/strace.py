"""The stated fallback: a command traced with `strace -f`, its lines read as the tracer's records.

Where bpftrace cannot run (no BTF, no tracepoints, no bpftrace), `fsarena
capture --tracer strace -- COMMAND` runs the command under strace with the same
calls (capture/calls.py), raw numbers (`-X raw`), paths of descriptors (`-y`),
epoch times and durations (`-ttt -T`), and no data (`-s 0`), and turns each line
into the record the bpftrace program would have printed, so the resolver, the
tree and the trace are the same. What strace cannot tell, and the trace then
lacks: whether an open that may create its file did (such files count as made by
the calls, never as there before), the size the kernel saw at an open (the
size at the end stands for an unchanged file), and a read's or write's offset on
the file's position (recorded as 0). strace stops the command at every traced
call, which costs far more than the kernel's probes: the capture measures that
cost on this machine before it starts (calibrate) and prints it.
"""

from __future__ import annotations

import errno
import re
from dataclasses import dataclass, field
from pathlib import Path

from fsarena.capture.bpf import INTS, RawCall
from fsarena.capture.calls import CALLS

# Each traced syscall's arguments in the kernel's order (its tracepoint's fields).
ARGS: dict[str, tuple[str, ...]] = {
    "open": ("filename", "flags", "mode"), "openat": ("dfd", "filename", "flags", "mode"),
    "creat": ("pathname", "mode"), "close": ("fd",), "read": ("fd", "buf", "count"),
    "write": ("fd", "buf", "count"), "pread64": ("fd", "buf", "count", "pos"),
    "pwrite64": ("fd", "buf", "count", "pos"), "readv": ("fd", "vec", "vlen"),
    "writev": ("fd", "vec", "vlen"), "preadv": ("fd", "vec", "vlen", "pos_l", "pos_h"),
    "pwritev": ("fd", "vec", "vlen", "pos_l", "pos_h"),
    "preadv2": ("fd", "vec", "vlen", "pos_l", "pos_h", "flags"),
    "pwritev2": ("fd", "vec", "vlen", "pos_l", "pos_h", "flags"),
    "lseek": ("fd", "offset", "whence"), "fsync": ("fd",), "fdatasync": ("fd",),
    "sync_file_range": ("fd", "offset", "nbytes", "flags"), "syncfs": ("fd",), "sync": (),
    "rename": ("oldname", "newname"), "renameat": ("olddfd", "oldname", "newdfd", "newname"),
    "renameat2": ("olddfd", "oldname", "newdfd", "newname", "flags"),
    "unlink": ("pathname",), "unlinkat": ("dfd", "pathname", "flag"),
    "mkdir": ("pathname", "mode"), "mkdirat": ("dfd", "pathname", "mode"),
    "rmdir": ("pathname",), "link": ("oldname", "newname"),
    "linkat": ("olddfd", "oldname", "newdfd", "newname", "flags"),
    "symlink": ("oldname", "newname"), "symlinkat": ("oldname", "newdfd", "newname"),
    "fallocate": ("fd", "mode", "offset", "len"), "ftruncate": ("fd", "length"),
    "truncate": ("path", "length"), "newstat": ("filename", "statbuf"),
    "newlstat": ("filename", "statbuf"), "newfstatat": ("dfd", "filename", "statbuf", "flag"),
    "statx": ("dfd", "filename", "flags", "mask", "buffer"), "newfstat": ("fd", "statbuf"),
    "getdents64": ("fd", "dirent", "count"), "dup": ("fildes",), "dup2": ("oldfd", "newfd"),
    "dup3": ("oldfd", "newfd", "flags"), "fcntl": ("fd", "cmd", "arg"), "chdir": ("filename",),
    "fchdir": ("fd",), "mmap": ("addr", "len", "prot", "flags", "fd", "off"),
    "msync": ("start", "len", "flags"),
    "io_uring_enter": ("fd", "to_submit", "min_complete", "flags", "argp", "argsz"),
    "sendfile64": ("out_fd", "in_fd", "offset", "count"),
    "copy_file_range": ("fd_in", "off_in", "fd_out", "off_out", "len", "flags"),
    "splice": ("fd_in", "off_in", "fd_out", "off_out", "len", "flags"),
}  # fmt: skip
# strace's name for a syscall whose tracepoint is named otherwise.
STRACE_NAME = {"newstat": "stat", "newlstat": "lstat", "newfstat": "fstat",
               "sendfile64": "sendfile"}  # fmt: skip
BY_STRACE = {STRACE_NAME.get(c.syscall, c.syscall): c for c in CALLS}
PROCESS_CALLS = ("clone", "clone3", "fork", "vfork", "execve", "exit_group")
CLONE_THREAD = 0x10000
_LINE = re.compile(r"^(\d+)\s+(\d+)\.(\d+) (.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\)\s+= (.+?)(?: <(\d+)\.(\d+)>)?$")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")


def argv(output: Path, command: tuple[str, ...]) -> list[str]:
    """strace's command line for the calls of capture/calls.py."""
    names = sorted({*BY_STRACE, *PROCESS_CALLS})
    return ["strace", "-f", "-q", "-ttt", "-T", "-y", "-s", "0", "-X", "raw",
            "-e", f"trace={','.join(names)}", "-o", str(output), "--", *command]  # fmt: skip


def _ns(seconds: str, fraction: str) -> int:
    return int(seconds) * 1_000_000_000 + int(fraction.ljust(9, "0")[:9])


def split_args(text: str) -> list[str]:
    """The top-level arguments of a call as strace printed them (quotes and nesting kept)."""
    out, depth, start, quoted, escaped = [], 0, 0, False, False
    for i, ch in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return [*out, tail] if tail or out else out


def unquote(value: str) -> str:
    """A string argument's text (strace's C escapes undone)."""
    body = value.strip()
    body = body[1 : body.rindex('"')] if body.startswith('"') else body
    raw = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1").decode("utf-8", "surrogateescape")


def number(value: str) -> int:
    """An integer argument: decimal, 0x hex, 0-led octal, NULL, a|b, "3</path>" (its 3)."""
    value = value.strip().split("<", 1)[0].strip()
    if value in ("NULL", "", "?"):
        return 0
    if "|" in value:
        total = 0
        for part in value.split("|"):
            total |= number(part)
        return total
    if "=" in value:
        value = value.split("=", 1)[1]
    if value.startswith(("0x", "-0x")):
        return int(value, 16)
    if len(value) > 1 and value.startswith("0") and value.isdigit():
        return int(value, 8)
    try:
        return int(value)
    except ValueError:
        return 0


def result(text: str) -> int:
    """A call's result: its value, or -errno for a failure ("-1 ENOENT (No such file...)")."""
    parts = text.split()
    if len(parts) >= 2 and parts[0] == "-1" and parts[1].startswith("E"):
        return -getattr(errno, parts[1], errno.EIO)
    return number(parts[0]) if parts else 0


@dataclass
class Parser:
    """strace's lines into records (see the module docstring); `first` is the command's pid."""

    first: int = 0
    tgid: dict[int, int] = field(default_factory=dict)
    unfinished: dict[int, tuple[int, str]] = field(default_factory=dict)
    calls: int = 0  # every call strace stopped the command at (traced ones)

    def feed(self, line: str) -> list[RawCall]:
        match = _LINE.match(line.rstrip("\n"))
        if not match:
            return []
        tid, start, rest = int(match[1]), _ns(match[2], match[3]), match[4]
        self.first = self.first or tid
        self.tgid.setdefault(tid, tid)
        if rest.startswith("+++ exited") or rest.startswith("+++ killed"):
            return [RawCall("exit", start, 0, self.tgid[tid], tid, 0, (0,) * INTS)]
        if rest.endswith("<unfinished ...>"):
            self.unfinished[tid] = (start, rest[: -len("<unfinished ...>")].rstrip())
            return []
        resumed = _RESUMED.match(rest)
        if resumed and tid in self.unfinished:
            start, head = self.unfinished.pop(tid)
            rest = head + resumed[2]
        return self._call(tid, start, rest)

    def _call(self, tid: int, start: int, text: str) -> list[RawCall]:
        match = _CALL.match(text)
        if not match:
            return []
        name, args, res = match[1], split_args(match[2]), result(match[3])
        duration = _ns(match[4], match[5]) if match[4] is not None else 0
        self.calls += 1
        pid = self.tgid[tid]
        if name in ("clone", "clone3", "fork", "vfork"):
            return self._fork(tid, start, name, args, res)
        if name == "execve":
            return [RawCall("exec", start, 0, pid, tid, 0, (0,) * INTS)] if res == 0 else []
        call = BY_STRACE.get(name)
        if call is None:
            return []
        named = dict(zip(ARGS[call.syscall], args, strict=False))
        ints = [number(named.get(a, a)) if not a.lstrip("-").isdigit() else int(a)
                for a in call.ints]  # fmt: skip
        if call.pos:
            ints.append(0)  # the file's position: strace does not say
        if call.opens:
            ints += [-1, -1, 0]  # created?, size, mode: unknown to strace
        ints += [0] * (INTS - len(ints))
        paths = tuple(unquote(named.get(s, '""')) for s in call.strings)
        return [RawCall(call.name, start, duration, pid, tid, res, tuple(ints[:INTS]), paths)]

    def _fork(self, tid: int, start: int, name: str, args: list[str], res: int) -> list[RawCall]:
        if res <= 0:
            return []
        flags = 0
        for a in args:
            for part in re.findall(r"flags=([0-9a-fx|]+)", a):
                flags |= number(part)
            if a.startswith("flags="):
                flags |= number(a)
        thread = bool(flags & CLONE_THREAD) and name in ("clone", "clone3")
        self.tgid[res] = self.tgid[tid] if thread else res
        return [RawCall("fork", start, 0, self.tgid[tid], tid, res, (0,) * INTS)]
