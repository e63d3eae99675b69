"""The system calls a capture records, as data: what each passes, and what a replay does with it.

One table (CALLS) serves the bpftrace program (capture/bpf.py), the strace
fallback (capture/strace.py) and the resolver (capture/resolve.py). Each row
names the syscall's tracepoint, the call type written in the trace, the
integer arguments kept (up to five, in the order the trace keeps them), the
path strings, and the file descriptor whose file must be a regular file or a
directory for the call to be kept: a read on a socket or a pipe is not
file-system I/O, and leaving it out in the kernel keeps a network service's
trace (and the tracer's cost) small.

What each call type is to a replay:
- REPLAYED: the replayer repeats it on the test filesystem.
- UNREPLAYABLE: file I/O the trace sees but cannot repeat faithfully (mmap'd
  files, io_uring submissions, in-kernel copies); measured and said, never dropped
  silently.
- BOOKKEEPING: calls that only keep the resolver's view right (dup, chdir, fcntl's
  F_DUPFD); not timed, not replayed.
"""

from __future__ import annotations

from dataclasses import dataclass

AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
AT_REMOVEDIR = 0x200
AT_EMPTY_PATH = 0x1000
O_CREAT_WRONLY_TRUNC = 0o1101  # what creat(2) opens with
F_DUPFD = 0
F_DUPFD_CLOEXEC = 1030
DUPFD = f"args->cmd == {F_DUPFD} || args->cmd == {F_DUPFD_CLOEXEC}"  # fcntl's that dup


@dataclass(frozen=True)
class Call:
    """One traced system call (see the module docstring)."""

    syscall: str  # the tracepoint is syscalls:sys_enter_<syscall> / sys_exit_<syscall>
    name: str  # the call type in the trace
    ints: tuple[str, ...] = ()  # argument names (or literal numbers) kept, at most five
    strings: tuple[str, ...] = ()  # path arguments, at most two
    fd: str = ""  # kept only when this descriptor is a regular file or a directory
    pos: bool = False  # the file's position at entry is kept as the last integer (offset)
    when: str = ""  # a further condition on the arguments (bpftrace syntax)

    @property
    def opens(self) -> bool:
        """Its result is a new file descriptor whose file the tracer describes at exit."""
        return self.name == "open"


CALLS: tuple[Call, ...] = (
    Call("open", "open", (str(AT_FDCWD), "flags", "mode"), ("filename",)),
    Call("openat", "open", ("dfd", "flags", "mode"), ("filename",)),
    Call("creat", "open", (str(AT_FDCWD), str(O_CREAT_WRONLY_TRUNC), "mode"), ("pathname",)),
    Call("close", "close", ("fd",), fd="fd"),
    Call("read", "read", ("fd", "count"), fd="fd", pos=True),
    Call("write", "write", ("fd", "count"), fd="fd", pos=True),
    Call("pread64", "pread", ("fd", "count", "pos"), fd="fd"),
    Call("pwrite64", "pwrite", ("fd", "count", "pos"), fd="fd"),
    # The vector forms: their byte count is their result (the iovecs are not read).
    Call("readv", "readv", ("fd", "vlen"), fd="fd", pos=True),
    Call("writev", "writev", ("fd", "vlen"), fd="fd", pos=True),
    Call("preadv", "preadv", ("fd", "vlen", "pos_l"), fd="fd"),
    Call("pwritev", "pwritev", ("fd", "vlen", "pos_l"), fd="fd"),
    # pos_l -1: at the file's position; the position is kept after the flags for that.
    Call("preadv2", "preadv", ("fd", "vlen", "pos_l", "flags"), fd="fd", pos=True),
    Call("pwritev2", "pwritev", ("fd", "vlen", "pos_l", "flags"), fd="fd", pos=True),
    Call("lseek", "lseek", ("fd", "offset", "whence"), fd="fd"),
    Call("fsync", "fsync", ("fd",), fd="fd"),
    Call("fdatasync", "fdatasync", ("fd",), fd="fd"),
    Call("sync_file_range", "sync_file_range", ("fd", "offset", "nbytes", "flags"), fd="fd"),
    Call("syncfs", "syncfs", ("fd",), fd="fd"),
    Call("sync", "sync"),
    Call("rename", "rename", (str(AT_FDCWD), str(AT_FDCWD), "0"), ("oldname", "newname")),
    Call("renameat", "rename", ("olddfd", "newdfd", "0"), ("oldname", "newname")),
    Call("renameat2", "rename", ("olddfd", "newdfd", "flags"), ("oldname", "newname")),
    Call("unlink", "unlink", (str(AT_FDCWD), "0"), ("pathname",)),
    Call("unlinkat", "unlink", ("dfd", "flag"), ("pathname",)),
    Call("mkdir", "mkdir", (str(AT_FDCWD), "mode"), ("pathname",)),
    Call("mkdirat", "mkdir", ("dfd", "mode"), ("pathname",)),
    Call("rmdir", "unlink", (str(AT_FDCWD), str(AT_REMOVEDIR)), ("pathname",)),
    Call("link", "link", (str(AT_FDCWD), str(AT_FDCWD), "0"), ("oldname", "newname")),
    Call("linkat", "link", ("olddfd", "newdfd", "flags"), ("oldname", "newname")),
    Call("symlink", "symlink", (str(AT_FDCWD),), ("oldname", "newname")),
    Call("symlinkat", "symlink", ("newdfd",), ("oldname", "newname")),
    Call("fallocate", "fallocate", ("fd", "mode", "offset", "len"), fd="fd"),
    Call("ftruncate", "ftruncate", ("fd", "length"), fd="fd"),
    Call("truncate", "truncate", (str(AT_FDCWD), "length"), ("path",)),
    Call("newstat", "stat", (str(AT_FDCWD), "0"), ("filename",)),
    Call("newlstat", "stat", (str(AT_FDCWD), str(AT_SYMLINK_NOFOLLOW)), ("filename",)),
    Call("newfstatat", "stat", ("dfd", "flag"), ("filename",)),
    Call("statx", "stat", ("dfd", "flags"), ("filename",)),
    Call("newfstat", "fstat", ("fd",), fd="fd"),
    Call("getdents64", "getdents", ("fd", "count"), fd="fd"),
    # Bookkeeping: where a descriptor or a relative path leads.
    Call("dup", "dup", ("fildes",), fd="fildes"),
    Call("dup2", "dup", ("oldfd", "newfd"), fd="oldfd"),
    Call("dup3", "dup", ("oldfd", "newfd", "flags"), fd="oldfd"),
    Call("fcntl", "dup", ("fd", "cmd"), fd="fd", when=DUPFD),
    Call("chdir", "chdir", (), ("filename",)),
    Call("fchdir", "fchdir", ("fd",), fd="fd"),
    # Unreplayable: measured and said.
    Call("mmap", "mmap", ("fd", "len", "prot", "flags", "off"), fd="fd"),
    Call("msync", "msync", ("len", "flags")),
    Call("io_uring_enter", "io_uring_enter", ("fd", "to_submit", "flags")),
    Call("sendfile64", "sendfile", ("out_fd", "in_fd", "count")),
    Call("copy_file_range", "copy_file_range", ("fd_in", "fd_out", "len")),
    Call("splice", "splice", ("fd_in", "fd_out", "len")),
)

REPLAYED = frozenset({
    "open", "close", "read", "write", "pread", "pwrite", "readv", "writev", "preadv",
    "pwritev", "lseek", "fsync", "fdatasync",
    "sync_file_range", "syncfs", "sync", "rename", "unlink", "rmdir", "mkdir", "link",
    "symlink", "fallocate", "ftruncate", "truncate", "stat", "fstat", "getdents",
})  # fmt: skip
UNREPLAYABLE = frozenset(
    {"mmap", "msync", "io_uring_enter", "sendfile", "copy_file_range", "splice"}
)
BOOKKEEPING = frozenset({"dup", "chdir", "fchdir"})
# The calls whose bytes a trace counts as moved: reads and writes (their results).
READS = frozenset({"read", "pread", "readv", "preadv"})
WRITES = frozenset({"write", "pwrite", "writev", "pwritev"})
VECTORS = frozenset({"readv", "preadv", "writev", "pwritev"})
# Calls at an explicit offset; the others move the file's position.
POSITIONED = frozenset({"pread", "pwrite", "preadv", "pwritev"})
