"""What fsarena may undo in a work directory: the one decision every cleanup path goes through.

fsarena runs as root on machines people care about, so "under the work
directory" is never proof that a mount is fsarena's: a user's tmpfs can be the
work directory itself, and another run's work directory can sit in a
subdirectory. `claims(workdir)` decides, from the work directory's ledger and
the machine as it is now, what is provably fsarena's:

- a mount, if the ledger recorded its mount point and the filesystem on top
  there is the one fsarena mounted (its source: the loop device or block
  device, or fsarena's own tmpfs name). A ledger written before sources were
  recorded proves a mount by its source being a loop device backed by an image
  the same ledger recorded;
- a loop device, if its backing file is an image the ledger recorded;
- an image or a directory tree, if the ledger recorded it and it is still there;
- mounts and loop devices inside a filesystem fsarena mounted (a task's own);
- processes that carry the run's marker in their environment (ledger.MARKER);
- every other kind (settings, cgroups, servers), by its own undo, which checks
  the machine before acting.

Every path the ledger records must lie inside the work directory. Everything
else found under the work directory is listed as not fsarena's, with what the
user can do about it, and never touched. `cleanup` undoes only the claims, and
only with the work directory's lock held by this process; it refuses system
directories and any directory holding (or inside) another live run's work
directory. The lock is a flock on WORKDIR/lock (run/launch.py); live ones are
found through the processes' open files and their fdinfo.

Standard library only, like the ledger.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.host.ledger import (
    MARKER,
    STATE_FILE,
    UNDO,
    Entry,
    Ledger,
    json_items,
    release_under,
    umount,
    wait_gone,
)

LOCK_FILE = "lock"  # WORKDIR/lock, flock'ed by the run (run/launch.py: workdir_lock)
TMPFS_PREFIX = "fsarena-"  # the source name of every tmpfs fsarena mounts ("fsarena-source")

# Never a work directory: cleaning one up could only reach what the system and its users own.
SYSTEM_DIRS = frozenset([
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
    "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr",
    "/usr/bin", "/usr/lib", "/usr/local", "/usr/share", "/var", "/var/cache", "/var/lib",
    "/var/log", "/var/mail", "/var/spool", "/var/tmp",
])  # fmt: skip


# ---------------------------------------------------------------- the machine as it is


@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo."""

    mount_id: int
    parent_id: int
    target: str
    fstype: str
    source: str

    def __str__(self) -> str:
        return f"mount {self.target} ({self.fstype} from {self.source})"


def _unescape(field: str) -> str:
    r"""mountinfo escapes space, tab, newline and backslash as \ooo (octal)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mount_table(mountinfo: str = "/proc/self/mountinfo") -> list[Mount]:
    """Every mount this process sees, in the kernel's order."""
    table = []
    with open(mountinfo) as f:
        for line in f:
            head, _, tail = line.partition(" - ")
            fields, rest = head.split(), tail.split()
            if len(fields) < 5 or len(rest) < 2:
                continue
            table.append(
                Mount(
                    int(fields[0]),
                    int(fields[1]),
                    _unescape(fields[4]),
                    rest[0],
                    _unescape(rest[1]),
                )
            )
    return table


def top_mount(target: str, table: list[Mount]) -> Mount | None:
    """The mount a path shows (mounts can stack: the top one is no other's parent there)."""
    here = [m for m in table if m.target == target]
    under = {m.parent_id for m in here}
    tops = [m for m in here if m.mount_id not in under]
    return tops[-1] if tops else None


@dataclass(frozen=True)
class Loop:
    device: str
    back_file: str  # without losetup's " (deleted)"


def loop_table() -> list[Loop]:
    return [
        Loop(str(d["name"]), str(d.get("back-file") or "").removesuffix(" (deleted)"))
        for d in json_items(["losetup", "-J", "-l"], "loopdevices")
    ]


def _flock_holder(fdinfo: Path) -> int | None:
    """The pid holding a flock on the file an fd refers to (fdinfo's `lock:` lines), if any.

    e.g. `lock:\t1: FLOCK  ADVISORY  WRITE 4242 fe:00:9977860 0 EOF`; a waiter's line has "->".
    """
    with contextlib.suppress(OSError, ValueError):
        for line in fdinfo.read_text().splitlines():
            parts = line.split()
            if parts[:1] == ["lock:"] and len(parts) > 5 and parts[2] == "FLOCK":
                return int(parts[5])
    return None


def live_runs() -> dict[str, int]:
    """Work directory -> the pid holding its lock, for every run alive on this machine.

    A run's lock is a flock on WORKDIR/lock: found through the processes' open files
    named `lock` whose fdinfo shows a flock on them (whoever holds it).
    """
    found: dict[str, int] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if os.path.basename(target) != LOCK_FILE:
                        continue
                    holder = _flock_holder(proc / "fdinfo" / fd.name)
                    if holder is not None:
                        found.setdefault(os.path.dirname(target), holder)
    return found


def marked_processes(workdir: str) -> list[int]:
    """Processes (other than this one) that a run in this work directory started."""
    wanted = f"{MARKER}={workdir}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if wanted in environ:
            found.append(int(proc.name))
    return found


# ---------------------------------------------------------------- the decision


def under(path: str, root: str) -> bool:
    """path is root or inside it (by name; both absolute)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _same_device(a: str, b: str) -> bool:
    if a == b:
        return True
    if not (a.startswith("/") and b.startswith("/")):
        return False
    return os.path.realpath(a) == os.path.realpath(b)


LIVE = "held by the live run in"
LIVE_ADVICE = "leave it: that run cleans up after itself"


@dataclass(frozen=True)
class Foreign:
    """Something found in the work directory that fsarena cannot prove it made: left alone."""

    what: str
    why: str
    advice: str = ""  # what the user can do about it ("" nothing to do)
    path: str = ""  # its mount point, or a loop device's backing file

    def __str__(self) -> str:
        return f"{self.what}: {self.why}" + (f"; {self.advice}" if self.advice else "")


@dataclass(frozen=True)
class Claims:
    """What fsarena may undo in one work directory, and what it must leave alone."""

    workdir: str
    ours: tuple[Entry, ...]  # ledger entries still present and proven, newest first
    gone: tuple[Entry, ...]  # ledger entries whose resource is no longer there
    foreign: tuple[Foreign, ...]  # never touched
    processes: tuple[int, ...]  # started by a run in this work directory, still running

    def __bool__(self) -> bool:
        return bool(self.ours or self.processes)

    def describe(self) -> str:
        return ", ".join([str(e) for e in self.ours] + [f"process {p}" for p in self.processes])


@dataclass(frozen=True)
class Machine:
    """The facts a decision is made from, read once: mounts, loop devices, live runs."""

    mounts: list[Mount]
    loops: list[Loop]
    live: dict[str, int]  # work directory -> a pid holding its lock

    @classmethod
    def now(cls) -> Machine:
        return cls(mount_table(), loop_table(), live_runs())


class _Decider:
    """One work directory's ledger against the machine."""

    def __init__(self, workdir: str, machine: Machine | None = None) -> None:
        machine = machine or Machine.now()
        self.workdir = os.path.abspath(workdir)
        self.roots = {self.workdir, os.path.realpath(self.workdir)}
        self.entries = Ledger(self.workdir).entries()
        self.table = machine.mounts
        self.loops = machine.loops
        self.live = machine.live
        recorded = {e.ident for e in self.entries if e.kind in ("loop", "image")}
        self.our_loops = {lo.device for lo in self.loops if lo.back_file in recorded}

    def inside(self, path: str) -> bool:
        return any(under(path, root) for root in self.roots)

    def mount_is_ours(self, entry: Entry, top: Mount) -> bool:
        if entry.source and _same_device(top.source, entry.source):
            return True
        # Drivers that name the mount themselves: the tmpfs "filesystem" (a tmpfs sized
        # by its device, named fsarena-tmpfs), a FUSE daemon that gives its own name.
        if top.fstype == "tmpfs":
            return top.source.startswith(TMPFS_PREFIX)
        if top.fstype.startswith("fuse") and not top.source.startswith("/"):
            return True
        # A ledger from before sources were recorded: a loop device backed by an
        # image this ledger recorded.
        return not entry.source and any(_same_device(top.source, d) for d in self.our_loops)

    def judge(self, entry: Entry) -> str | Foreign:
        """ "ours", "gone", or why it is not ours."""
        if entry.kind in ("mount", "loop", "image", "tree") and not self.inside(entry.ident):
            return Foreign(str(entry), f"recorded, but outside {self.workdir}", "check it yourself")
        if entry.kind == "mount":
            top = top_mount(entry.ident, self.table)
            if top is None:
                return "gone"
            if self.mount_is_ours(entry, top):
                return "ours"
            expected = f" (fsarena mounted {entry.source})" if entry.source else ""
            return Foreign(
                str(top),
                f"not the filesystem fsarena mounted there{expected}",
                f"unmount it yourself if it is not in use: umount {entry.ident}",
                entry.ident,
            )
        if entry.kind == "loop":
            return "ours" if any(lo.back_file == entry.ident for lo in self.loops) else "gone"
        if entry.kind == "image":
            return "ours" if os.path.lexists(entry.ident) else "gone"
        if entry.kind in ("tree", "cgroup"):
            return "ours" if os.path.isdir(entry.ident) else "gone"
        return "ours"  # settings, servers: their undo checks the machine before acting

    def decide(self) -> Claims:
        ours: list[Entry] = []
        gone: list[Entry] = []
        foreign: list[Foreign] = []
        for entry in reversed(self.entries):  # newest first: the order of undoing
            verdict = self.judge(entry)
            if isinstance(verdict, Foreign):
                foreign.append(verdict)
            else:
                (ours if verdict == "ours" else gone).append(entry)
        mounted = [e.ident for e in ours if e.kind == "mount"]
        seen = {f.what for f in foreign}
        foreign += [f for f in self.unrecorded(mounted) if f.what not in seen]
        processes = tuple(marked_processes(self.workdir))
        return Claims(self.workdir, tuple(ours), tuple(gone), tuple(foreign), processes)

    def unrecorded(self, mounted: list[str]) -> Iterable[Foreign]:
        """Mounts and loop devices in the work directory that no entry of its ledger proves."""
        recorded_mounts = {e.ident for e in self.entries if e.kind == "mount"}
        within_ours = mounted  # a task's own mounts and loops inside fsarena's filesystems
        live = self.live
        for m in self.table:
            if not self.inside(m.target) or m.target in recorded_mounts:
                continue
            if any(under(m.target, o) for o in within_ours):
                continue
            yield self._foreign_mount(m, live)
        recorded = {e.ident for e in self.entries if e.kind in ("loop", "image")}
        for lo in self.loops:
            if not self.inside(lo.back_file) or lo.back_file in recorded:
                continue
            if any(under(lo.back_file, o) for o in within_ours):
                continue
            yield self._foreign(
                f"loop device {lo.device} (backed by {lo.back_file})",
                lo.back_file,
                live,
                f"detach it yourself if it is not in use: losetup -d {lo.device}",
            )

    def _foreign_mount(self, m: Mount, live: dict[str, int]) -> Foreign:
        if m.target in self.roots:
            return Foreign(
                str(m), "the work directory's own filesystem, not mounted by fsarena", "", m.target
            )
        return self._foreign(
            str(m), m.target, live, f"unmount it yourself if it is not in use: umount {m.target}"
        )

    def _foreign(self, what: str, path: str, live: dict[str, int], undo: str) -> Foreign:
        """Not fsarena's: whose it is, and what to do (leave a live run's; else undo it)."""
        whose = self._whose(path, live)
        return Foreign(what, whose, LIVE_ADVICE if whose.startswith(LIVE) else undo, path)

    def _whose(self, path: str, live: dict[str, int]) -> str:
        """Not fsarena's: whether another run (live, or with its own ledger) has it."""
        for directory, pid in live.items():
            if under(path, directory) and directory not in self.roots:
                return f"{LIVE} {directory} (process {pid})"
        parent = os.path.dirname(path)
        while self.inside(parent) and parent not in self.roots:
            if any(e.ident == path for e in Ledger(parent).entries()):
                return f"recorded by the run in {parent}: `fsarena cleanup --workdir {parent}`"
            parent = os.path.dirname(parent)
        return "not fsarena's (no ledger records it)"


# What a run makes in its work directory: a foreign mount there would be mounted over,
# written into, or taken for the run's own.
RUN_PATHS = ("mnt", "source", "images", "scratch", "cache", "source.img", "guest-source.img")


def in_the_way(found: Claims) -> list[Foreign]:
    """Foreign mounts and loop devices on the paths a run in that work directory uses."""
    paths = [os.path.join(found.workdir, p) for p in RUN_PATHS]
    return [f for f in found.foreign if f.path and any(under(f.path, p) for p in paths)]


def claims(workdir: str, machine: Machine | None = None) -> Claims:
    """What fsarena may undo in a work directory (see the module docstring); reads only.

    `machine`: the facts to decide from (tests give them); by default read now.
    """
    return _Decider(workdir, machine).decide()


# ---------------------------------------------------------------- refusals


def refusal(workdir: str) -> str:
    """Why cleanup must not work in this directory ("" if it may), for the user to read."""
    workdir = os.path.abspath(workdir)
    for name in {workdir, os.path.realpath(workdir)}:
        if name in SYSTEM_DIRS:
            return (
                f"{name} is a system directory, never a work directory of fsarena; "
                "name the --workdir a run used (default /var/tmp/fsarena)"
            )
    roots = {workdir, os.path.realpath(workdir)}
    for directory, pid in sorted(live_runs().items()):
        if pid == os.getpid() and directory in roots:
            continue  # this process's own lock on the work directory
        if any(under(directory, r) for r in roots) and directory not in roots:
            return (
                f"{workdir} holds the work directory {directory} of a live run (process {pid}); "
                f"nothing was touched: wait for it to end, then clean up only the directory "
                f"a run used: `fsarena cleanup --workdir {directory}`"
            )
        if directory in roots:
            return (
                f"a run (process {pid}) is using {workdir}; it cleans up after itself "
                "(stop it with Ctrl-C)"
            )
        if any(under(r, directory) for r in roots):
            return (
                f"{workdir} is inside the work directory {directory} of a live run "
                f"(process {pid}); nothing was touched: it cleans up after itself"
            )
    return ""


def holds_lock(workdir: str) -> bool:
    """This process holds the work directory's lock."""
    workdir = os.path.abspath(workdir)
    held = live_runs()
    return any(held.get(d) == os.getpid() for d in {workdir, os.path.realpath(workdir)})


def has_record(workdir: str) -> bool:
    """A run ever used this directory (its lock or its ledger is there)."""
    return Path(workdir, LOCK_FILE).exists() or Path(workdir, STATE_FILE).exists()


# ---------------------------------------------------------------- undoing the claims


@dataclass(frozen=True)
class CleanupReport:
    done: tuple[str, ...]
    failed: tuple[str, ...]
    left_alone: tuple[Foreign, ...] = ()


def unmount_ours(entry: Entry, decider: _Decider) -> str:
    """Unmount while the filesystem on top at the mount point is fsarena's (mounts stack)."""
    done = ""
    released = False
    for _ in range(8):
        top = top_mount(entry.ident, mount_table())
        if top is None or not decider.mount_is_ours(entry, top):
            return done
        if umount(entry.ident):
            done = f"unmounted {entry.ident}"
            continue
        if not released:
            # A loop device backed by a file in it holds it busy; a lazy umount would
            # hide that file and leak the device (and a tmpfs's memory) for good.
            released = True
            release_under(entry.ident)
            continue
        umount(entry.ident, lazy=True)
        done = f"unmounted {entry.ident} (lazily: it was busy)"
    return done


def cleanup(workdir: str) -> CleanupReport:
    """Undo what fsarena's ledger proves is its own in a work directory, newest first.

    The caller holds the work directory's lock (checked: this is the only place
    that undoes a dead run's resources, and its rule must not be bypassed).
    """
    workdir = os.path.abspath(workdir)
    if why := refusal(workdir):
        raise FsarenaError(f"refusing to clean up: {why}")
    if not holds_lock(workdir):
        raise FsarenaError(f"fsarena bug: cleanup of {workdir} without holding its lock")
    ledger = Ledger(workdir)
    done: list[str] = []
    failed: list[str] = []
    killed = []
    for pid in marked_processes(workdir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            done.append(f"killed process {pid} left running by the run")
    wait_gone(killed, marked_processes, workdir)
    decider = _Decider(workdir)
    found = decider.decide()
    for entry in found.gone:
        ledger.untrack(entry.kind, entry.ident)
    for entry in found.ours:
        try:
            if entry.kind == "mount":
                what = unmount_ours(entry, decider)
            else:
                what = UNDO[entry.kind](entry.ident) if entry.kind in UNDO else ""
        except OSError as exc:
            failed.append(f"{entry}: {exc}")
            continue
        if what:
            done.append(what)
        ledger.untrack(entry.kind, entry.ident)
    return CleanupReport(tuple(done), tuple(failed), found.foreign)
