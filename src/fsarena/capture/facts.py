"""What a capture reads off the machine: filesystems, devices, sizes, compressibility, counters.

- Which filesystem a path is on: the longest mount point of the traced process's
  own mount table (/proc/PID/mountinfo, so a container's paths are its own),
  with its fstype and its device's class (a loop device; rotational or not, from
  the disk's queue/rotational; "virtual" with no block device).
- A path's size and type at the end (lstat through /proc/PID/root): for paths the
  calls never changed, their state at the start.
- Compressibility: a few 64 KiB blocks of the files the service read or wrote,
  compressed with zlib (level 6) here and now; the ratio (compressed over
  original) is kept, never a byte of the data.
- /proc/PID/io: what the kernel counted for the traced processes (rchar and wchar:
  bytes through read/write-like calls, pipes and sockets included; read_bytes and
  write_bytes: bytes the storage layer fetched or pages they dirtied, mmap'd writes
  included), to set beside what the trace holds.
"""

from __future__ import annotations

import contextlib
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

BLOCK_BYTES = 64 << 10
BLOCKS_PER_FILE = 4
SAMPLED_FILES = 32
# Filesystems whose files are not a disk's: calls on them stay out of a trace's scope.
PSEUDO_FSTYPES = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs",
    "securityfs", "pstore", "bpf", "mqueue", "hugetlbfs", "configfs", "fusectl",
    "binfmt_misc", "autofs", "efivarfs", "tmpfs", "ramfs", "nsfs", "rpc_pipefs",
})  # fmt: skip
# The system's own files: what a program's loader and libraries read, never its data.
SYSTEM_DIRS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/boot")


@dataclass(frozen=True)
class MountPoint:
    target: str
    fstype: str
    device: str  # "MAJOR:MINOR"


def mounts(pid: int | None = None) -> list[MountPoint]:
    """The mount table a process sees (this one's for None, or once it is gone), longest
    mount point first."""
    where = (
        f"/proc/{pid}/mountinfo"
        if pid and os.path.exists(f"/proc/{pid}/mountinfo")
        else ("/proc/self/mountinfo")
    )
    found = []
    with contextlib.suppress(OSError), open(where) as f:
        for line in f:
            head, _, tail = line.partition(" - ")
            fields, rest = head.split(), tail.split()
            if len(fields) >= 5 and rest:
                target = fields[4].replace("\\040", " ")
                found.append(MountPoint(target, rest[0], fields[2]))
    return sorted(found, key=lambda m: -len(m.target))


def mount_of(path: str, table: list[MountPoint]) -> MountPoint | None:
    for m in table:
        if path == m.target or path.startswith(m.target.rstrip("/") + "/"):
            return m
    return None


def device_class(device: str) -> str:
    """A block device's class from sysfs: "loop", "rotational", "non-rotational", "virtual"."""
    node = Path("/sys/dev/block", device)
    if not node.exists():
        return "virtual"
    real = node.resolve()
    if real.name.startswith("loop"):
        return "loop"
    for queue in (real / "queue", real.parent / "queue"):  # a partition's disk holds it
        with contextlib.suppress(OSError):
            return (
                "rotational"
                if queue.joinpath("rotational").read_text().strip() == "1"
                else ("non-rotational")
            )
    return "virtual"


@dataclass(frozen=True)
class Found:
    """A path's type and size as lstat finds it now (kind "" : not there)."""

    kind: str
    size_bytes: int = 0
    target: str = ""  # a symbolic link's


def look(path: str, root: str = "") -> Found:
    """lstat of a path as the traced process sees it (root: /proc/PID/root)."""
    real = root + path
    try:
        st = os.lstat(real)
    except OSError:
        return Found("")
    if stat.S_ISDIR(st.st_mode):
        return Found("d")
    if stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            return Found("l", 0, os.readlink(real))
        return Found("l")
    if stat.S_ISREG(st.st_mode):
        return Found("f", st.st_size)
    return Found("")  # a device node, a FIFO, a socket: nothing a replay makes


@dataclass(frozen=True)
class Compressibility:
    ratio: float | None  # compressed / original; None: nothing could be sampled
    sampled_bytes: int
    files: int

    def record(self) -> dict[str, object]:
        return {
            "ratio": None if self.ratio is None else round(self.ratio, 4),
            "sampled_bytes": self.sampled_bytes,
            "files": self.files,
            "method": f"zlib level 6 on up to {BLOCKS_PER_FILE} blocks of {BLOCK_BYTES >> 10} "
            f"KiB of up to {SAMPLED_FILES} files read or written",
        }


def compressibility(paths: list[str], root: str = "") -> Compressibility:
    """Sampled blocks of the largest of these files, compressed here; no data is kept."""
    sized = sorted(
        ((found.size_bytes, p) for p in set(paths) if (found := look(p, root)).kind == "f"),
        reverse=True,
    )
    raw = packed = files = 0
    for size, path in sized[:SAMPLED_FILES]:
        if size <= 0:
            continue
        step = max(BLOCK_BYTES, size // BLOCKS_PER_FILE)
        with contextlib.suppress(OSError), open(root + path, "rb") as f:
            for offset in range(0, size, step)[:BLOCKS_PER_FILE]:
                f.seek(offset)
                block = f.read(BLOCK_BYTES)
                raw += len(block)
                packed += len(zlib.compress(block, 6))
            files += 1
    return Compressibility(packed / raw if raw else None, raw, files)


IO_FIELDS = ("rchar", "wchar", "read_bytes", "write_bytes")


def proc_io(pid: int) -> dict[str, int] | None:
    """A process's /proc/PID/io counters (its reaped children's included); None if gone."""
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in IO_FIELDS:
            values[key] = int(value)
    return values


def descriptors(pid: int) -> list[tuple[int, str, int, int]]:
    """A process's open descriptors now: (fd, path, flags, position) from /proc/PID/fd{,info}."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError, ValueError):
                target = os.readlink(entry.path)
                info = dict(
                    line.split(":", 1)
                    for line in Path(f"/proc/{pid}/fdinfo/{entry.name}").read_text().splitlines()
                    if ":" in line
                )
                flags = int(info.get("flags", "0").strip(), 8)
                pos = int(info.get("pos", "0").strip())
                found.append((int(entry.name), target, flags, pos))
    return sorted(found)


def cwd_of(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return "/"
