"""The resource ledger: everything fsarena creates on the machine, in a state file, until undone.

Every mount point, loop device, image, tmpfs or cgroup a run creates, every
server or tracer it starts, and
every shared kernel setting it changes (host/sysctls.py: a throttle rule on
the root blkio cgroup, vm.dirty_bytes), is written to WORKDIR/state.json
*before* it is created (an intent), and removed from it once undone. A mount
is recorded with its source (the device or tmpfs name it is mounted from), so
that a mount someone else made at the same place is never taken for it. A run
killed with SIGKILL, or a power cut, leaves the file behind; `fsarena cleanup`
reads it and undoes each entry that is still provably fsarena's, newest first:
host/cleanup.py decides that, and every cleanup goes through it.

Undo actions are data, not closures, so that a fresh process can perform them:
each kind of resource has one idempotent undo function in UNDO that checks the
machine before acting (a loop device is found by its backing file, never by a
number that may since belong to someone else). A mount's undo is cleanup.py's
(it needs the proof of ownership). To register a new kind of resource (a zram
device, a FUSE daemon), add one function to UNDO and call `track(kind, ident)`
before creating it and `untrack(kind, ident)` after undoing it.

The state file lives in the work directory, which can fill or turn read-only under
a run (another process's writes, a remount). Recording a resource that cannot be
written stops the run before the resource exists (WorkdirUnwritable); forgetting one
that was undone keeps the truth in memory (the file then still names a resource that
is gone, which cleanup finds gone) and writes it again once there is room.

Child processes of a run carry FSARENA_WORKDIR in their environment, so that
cleanup can find a task's processes that outlived a killed run (they hold
mounts busy) without recording each process inside a timed region.

This module uses the standard library only (and util-linux's JSON output).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.host import servers, sysctls

STATE_FILE = "state.json"
MARKER = "FSARENA_WORKDIR"  # environment variable inherited by every child of a run


# What a full or read-only work directory answers a write with.
UNWRITABLE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)
ROOM_FLOOR_BYTES = 1 << 20  # less free than this (for root) is a full work directory


class WorkdirUnwritable(BaseException):
    """The work directory's filesystem refused a write the run needs (full, read-only).

    A BaseException, as KeyboardInterrupt is: nothing further can be made there, so
    the run stops the way Ctrl-C stops it, through every teardown, and no task's error
    handler takes it for that task's own failure. `why` says the work directory's state
    ("the work directory W is full (12 KiB free)"), `error` the write that failed.
    """

    def __init__(self, workdir: str, why: str, error: OSError | None = None) -> None:
        failed = ""
        if error is not None:
            where = f" ({error.filename})" if error.filename else ""
            failed = f": {error.strerror or error}{where}"
        super().__init__(f"{why}{failed}")
        self.workdir = workdir
        self.why = why
        self.error = error


def workdir_trouble(workdir: str) -> str:
    """Why the work directory's filesystem cannot take a write now ("" when it can):
    "read-only", or "full (N KiB free)" with less than ROOM_FLOOR_BYTES left for root."""
    try:
        st = os.statvfs(_existing(workdir))
    except OSError:
        return ""
    if st.f_flag & os.ST_RDONLY:
        return f"the work directory {workdir} is on a read-only filesystem"
    free = st.f_bfree * st.f_frsize
    if free < ROOM_FLOOR_BYTES:
        return f"the work directory {workdir} is full ({free >> 10} KiB free)"
    return ""


def unwritable(exc: OSError, workdir: str) -> WorkdirUnwritable | None:
    """The stop a failed write means, when it failed because the work directory is full
    or read-only (a full test filesystem, inside an image, is the task's own fault)."""
    if exc.errno not in UNWRITABLE_ERRNOS:
        return None
    why = workdir_trouble(workdir)
    return WorkdirUnwritable(workdir, why, exc) if why else None


def _existing(path: str) -> str:
    while not os.path.exists(path) and path not in ("", "/"):
        path = os.path.dirname(path)
    return path or "/"


@dataclass(frozen=True)
class Entry:
    """One resource: its kind ("mount" or a key of UNDO), what identifies it (a path), its source.

    `source` is the proof a mount is fsarena's: the device (or tmpfs name) it was
    mounted from; "" for other kinds, and in ledgers written before it was recorded.
    """

    kind: str
    ident: str
    source: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.ident}"


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )


def json_items(argv: Sequence[str], key: str) -> list[dict[str, Any]]:
    """The list under `key` in a util-linux tool's JSON output (-J); [] when it prints nothing."""
    try:
        out = _run(argv)
    except FileNotFoundError:
        raise FsarenaError(f"{argv[0]} not found: apt-get install util-linux mount") from None
    if out.returncode != 0 or not out.stdout.strip():
        return []
    data = json.loads(out.stdout)
    items = data.get(key) if isinstance(data, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def mounts_at(mountpoint: str) -> int:
    """How many filesystems are mounted exactly at a path (mounts can stack)."""
    return len(
        json_items(
            ["findmnt", "-J", "--list", "-o", "TARGET", "--mountpoint", mountpoint], "filesystems"
        )
    )


def umount(mountpoint: str, lazy: bool = False) -> bool:
    """One umount of the filesystem on top at a path; a failed lazy one raises OSError."""
    out = _run(["umount", "-l", mountpoint] if lazy else ["umount", mountpoint])
    if out.returncode != 0 and lazy:
        raise OSError(f"cannot unmount {mountpoint}: {out.stderr.strip()}")
    return out.returncode == 0


def _undo_mount(mountpoint: str) -> str:
    """Unmount everything stacked at the path; lazily if a process still holds it.

    Only for mounts inside a filesystem fsarena proved its own (release_under):
    a recorded mount point is unmounted by ours.unmount_ours, which checks its source.
    """
    done = ""
    released = False
    for _ in range(8):
        if not mounts_at(mountpoint):
            return done
        if _run(["umount", mountpoint]).returncode == 0:
            done = f"unmounted {mountpoint}"
            continue
        if not released:
            # A loop device backed by a file in it holds it busy; a lazy umount would
            # hide that file and leak the device (and a tmpfs's memory) for good.
            released = True
            release_under(mountpoint)
            continue
        lazy = _run(["umount", "-l", mountpoint])
        if lazy.returncode != 0:
            raise OSError(f"cannot unmount {mountpoint}: {lazy.stderr.strip()}")
        done = f"unmounted {mountpoint} (lazily: it was busy)"
    return done


def loops_backed_by(image: str) -> list[str]:
    """Loop devices whose backing file is this image (matched by inode, as losetup -j does)."""
    if not os.path.exists(image):
        # A deleted backing file keeps its loop device; find it by the recorded name.
        return [
            str(d["name"])
            for d in json_items(["losetup", "-J", "-l"], "loopdevices")
            if str(d.get("back-file") or "").removesuffix(" (deleted)") == image
        ]
    found = json_items(["losetup", "-J", "-l", "-j", image], "loopdevices")
    return [str(d["name"]) for d in found]


def _undo_loop(image: str) -> str:
    devices = loops_backed_by(image)
    for device in devices:
        out = _run(["losetup", "--detach", device])
        if out.returncode != 0:
            raise OSError(f"cannot detach {device}: {out.stderr.strip()}")
    return f"detached {', '.join(devices)} (backed by {image})" if devices else ""


def _undo_file(path: str) -> str:
    attached = loops_backed_by(path) if os.path.exists(path) else []
    if attached:  # another run's loop device (the ledger's would have been detached first)
        raise OSError(f"still attached to {', '.join(attached)}; left in place")
    try:
        os.unlink(path)
    except FileNotFoundError:
        return ""
    return f"deleted {path}"


def _undo_tree(path: str) -> str:
    """A directory fsarena wrote outside the test filesystem (git replay's host copy)."""
    if not os.path.isdir(path):
        return ""
    shutil.rmtree(path)
    return f"deleted {path}"


def _undo_cgroup(path: str) -> str:
    """Kill what is left in a cgroup fsarena made, then remove it."""
    group = Path(path)
    if not group.is_dir():
        return ""
    for _ in range(50):
        procs = (group / "cgroup.procs").read_text().split()
        for pid in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        try:
            group.rmdir()
            return f"removed cgroup {path}"
        except OSError:
            time.sleep(0.1)
    raise OSError(f"cannot remove cgroup {path}: processes remain in it")


# How to undo each kind of resource, from its identifier alone. Idempotent:
# each returns what it did ("" if there was nothing left to undo). "mount" is
# not here: unmounting needs the proof that the mount is fsarena's (cleanup.py).
UNDO: dict[str, Callable[[str], str]] = {
    "loop": _undo_loop,  # the backing image of a loop device
    "image": _undo_file,  # an image file
    "tree": _undo_tree,  # a directory of files (in the work directory's scratch)
    "cgroup": _undo_cgroup,  # a cgroup directory
    "setting": sysctls.undo,  # a value in a shared file, restored to what it was before
    "postgres": servers.stop_postgres,  # a PostgreSQL server, by its data directory
    "tracer": servers.stop_tracer,  # a capture's bpftrace or strace, by its pid file
}


class Ledger:
    """The state file of one work directory; written atomically on every change."""

    def __init__(self, workdir: str) -> None:
        self.workdir = os.path.abspath(workdir)
        self.path = Path(self.workdir, STATE_FILE)
        self._lock = threading.Lock()
        # The truth when the file could not be written (the work directory full or
        # read-only): the file then lists resources already undone. None: the file is it.
        self._unwritten: list[Entry] | None = None

    def entries(self) -> list[Entry]:
        if self._unwritten is not None:
            return list(self._unwritten)
        return self._read()

    @property
    def behind(self) -> bool:
        """The file still names resources this process has undone (it could not be written)."""
        return self._unwritten is not None

    def _read(self) -> list[Entry]:
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            # A state file that cannot be read is treated as empty; the scan of
            # the work directory still finds its mounts and loop devices.
            return []
        items = raw.get("resources", []) if isinstance(raw, dict) else []
        return [
            Entry(str(i["kind"]), str(i["ident"]), str(i.get("source") or ""))
            for i in items
            if isinstance(i, dict)
        ]

    def track(self, kind: str, ident: str, source: str = "") -> None:
        """Record a resource before creating it (a mount with the device it mounts).

        A work directory that cannot take the record stops the run (WorkdirUnwritable)
        before the resource exists: nothing is ever made that the ledger does not name.
        """
        if kind != "mount" and kind not in UNDO:  # a mount: a mount point and its source
            raise ValueError(f"no undo registered for resource kind {kind!r}")
        with self._lock:
            entries = self.entries()
            same = [e for e in entries if (e.kind, e.ident) == (kind, ident)]
            if same != [Entry(kind, ident, source)]:
                others = [e for e in entries if (e.kind, e.ident) != (kind, ident)]
                try:
                    self._write([*others, Entry(kind, ident, source)])
                except OSError as exc:
                    why = workdir_trouble(self.workdir) or f"cannot write {self.path}"
                    raise WorkdirUnwritable(self.workdir, why, exc) from exc
                self._unwritten = None

    def untrack(self, kind: str, ident: str) -> None:
        """Forget a resource once it is undone.

        When the file cannot be written, the truth stays here (entries(), what the
        run's teardown reports) and the file names a resource that is gone, which
        cleanup finds gone and forgets; `flush()` writes it once there is room.
        """
        with self._lock:
            entries = self.entries()
            kept = [e for e in entries if (e.kind, e.ident) != (kind, ident)]
            if kept != entries:
                self._write_or_keep(kept)

    def flush(self) -> OSError | None:
        """Write the truth kept in memory, if a write failed; the error if it fails again."""
        with self._lock:
            if self._unwritten is None:
                return None
            return self._write_or_keep(self._unwritten)

    def _write_or_keep(self, entries: list[Entry]) -> OSError | None:
        try:
            self._write(entries)
        except OSError as exc:
            self._unwritten = entries
            return exc
        self._unwritten = None
        return None

    def _write(self, entries: list[Entry]) -> None:
        if not entries:
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"resources": [_as_dict(e) for e in entries]}
        fd, tmp = tempfile.mkstemp(prefix=".state.", dir=self.workdir)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1)
                f.flush()
                os.fsync(f.fileno())  # survives a power cut, not only a kill
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)  # a full disk left one empty file per try
            raise

    def mark_children(self) -> None:
        """Make every child process of this run findable by `cleanup` (see module doc)."""
        os.environ[MARKER] = self.workdir


def _as_dict(entry: Entry) -> dict[str, str]:
    found = {"kind": entry.kind, "ident": entry.ident}
    return found | {"source": entry.source} if entry.source else found


def _under(path: str, workdir: str) -> bool:
    return path == workdir or path.startswith(workdir.rstrip("/") + "/")


def _scan(workdir: str) -> list[Entry]:
    """Mounts below root and loop devices backed by files under it, deepest mounts first."""
    found: list[Entry] = []
    for m in json_items(["findmnt", "-J", "--list", "-o", "TARGET"], "filesystems"):
        if _under(str(m["target"]), workdir):
            found.append(Entry("mount", str(m["target"])))
    for d in json_items(["losetup", "-J", "-l"], "loopdevices"):
        back = str(d.get("back-file") or "").removesuffix(" (deleted)")
        if _under(back, workdir):
            found.append(Entry("loop", back))
    # Deepest mounts first, so stacked and nested mounts come off in order.
    return sorted(found, key=lambda e: (e.kind != "mount", -len(e.ident)))


def release_under(root: str) -> list[str]:
    """Undo every mount below root and every loop device backed by a file under it.

    Found on the machine, not in a ledger: an interrupt can land after a
    command attached a loop device but before its name reached us. Root's own
    mount (a private tmpfs, say) is left for the caller, which can now unmount
    it without "target is busy". Returns what was done.
    """
    root = os.path.abspath(root)
    done = []
    for entry in _scan(root):
        if entry.kind == "mount" and entry.ident == root:
            continue
        what = _undo_mount(entry.ident) if entry.kind == "mount" else UNDO[entry.kind](entry.ident)
        if what:
            done.append(what)
    return done


def exited(pid: int) -> bool:
    """The process is gone, or a zombie: either way it holds no file any more (the kernel
    closes its files before it becomes a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])


def wait_gone(
    killed: Sequence[int],
    find: Callable[[str], list[int]],
    workdir: str,
    timeout_s: float = 5.0,
) -> None:
    """Killed processes release their files only once they have exited.

    Each killed pid is watched itself, not only through find: a process killed with
    I/O in flight (fio's 16 requests on a throttled loop device) waits for it in its
    exit, its memory already gone, so its environment (where find reads the run's
    marker) no longer reads while it still holds the device open. Cleanup then detached
    a busy loop device and left its image in place (test_machine_real's kill -9 test,
    2 failures in 4 runs).
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if all(exited(pid) for pid in killed) and not find(workdir):
            return
        time.sleep(0.05)
