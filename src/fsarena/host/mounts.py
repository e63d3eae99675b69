"""mount(8) and umount(8) without their processes, where each would make one syscall, no more.

The cold-cache cycle (run/cold.py) unmounts and mounts the filesystem under test
before every timed task, and the lifecycle tasks put the untimed opposite between
their samples: 30 to 40 helpers a sequence, each a process start (fork, exec,
libmount reading the mount table) around a syscall. util-linux's mount(8), given a
type, a device and a mountpoint and no option, makes exactly one syscall,
mount(DEVICE, MOUNTPOINT, TYPE, 0, NULL), with both paths canonicalised; umount(8)
of a mountpoint makes umount2(MOUNTPOINT, 0) (strace of util-linux 2.38.1, this
machine's; tests/integration/test_mount_syscalls.py reads back the same mount
table either way). The untimed helper calls make that syscall themselves instead.
Timed mounts and unmounts (the lifecycle tasks' samples) still run the binaries.

Anything libmount would do more goes to the binary, as before: options (libmount
turns them into flags and data, and may keep some in its utab), a type that is not
the kernel's own or that has a helper (mount.ntfs, mount.fuse, umount.nilfs2 in
/sbin), a mount listed in libmount's utab, anything but the exact argv shapes.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path

# Where libmount looks for mount.TYPE and umount.TYPE helpers (FS_SEARCH_PATH), and the
# /usr directories a merged-/usr system links /sbin to.
HELPER_DIRS = ("/sbin", "/sbin/fs.d", "/sbin/fs", "/usr/sbin", "/usr/local/sbin")
UTAB = "/run/mount/utab"  # libmount's userspace options of the mounts it made


def in_process(argv: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
    """Do what argv would do with its one syscall, as the binary's result; None: run argv."""
    if len(argv) == 5 and tuple(argv[:2]) == ("mount", "-t") and plain_type(argv[2], "mount"):
        _, _, fstype, device, mountpoint = argv
        source = os.path.realpath(device) if device.startswith("/") else device
        if device.startswith("/") and not _block_device(source):
            return None  # a regular file: mount(8) would set up a loop device for it
        target = os.path.realpath(mountpoint)
        return _syscall(argv, target, "mount", source.encode(), target.encode(),
                        fstype.encode(), ctypes.c_ulong(0), None)  # fmt: skip
    if len(argv) == 2 and argv[0] == "umount":
        target = os.path.realpath(argv[1])
        mounted = mounted_type(target)
        if mounted is None or not plain_type(mounted, "umount") or _in_utab(target):
            return None  # not mounted (umount(8) says so), or more than one syscall
        return _syscall(argv, target, "umount2", target.encode(), ctypes.c_int(0))
    return None


def _block_device(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False  # mount(8) says what is missing, in its own words


def mounted_type(mountpoint: str) -> str | None:
    """The type of what is mounted on mountpoint (the top of a stack), None if nothing is.

    Read from /proc/self/mountinfo, as findmnt(8) reads it; the path canonicalised, as
    findmnt canonicalises it.
    """
    target = os.path.realpath(mountpoint)
    found = None
    for fields in _mountinfo():
        if fields[0] == target:
            found = fields[1]
    return found


def _mountinfo() -> list[tuple[str, str]]:
    """(mountpoint, type) of each line of /proc/self/mountinfo, in order."""
    entries = []
    for line in Path("/proc/self/mountinfo").read_bytes().split(b"\n"):
        if not line:
            continue
        fields = line.split(b" ")
        after = fields.index(b"-")  # optional fields end at the separator
        entries.append((unescape(fields[4]), fields[after + 1].decode(errors="surrogateescape")))
    return entries


def unescape(field: bytes) -> str:
    """mountinfo's octal escapes (\\040 for a space) back to the path's bytes."""
    raw = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), field)
    return raw.decode(errors="surrogateescape")


def plain_type(fstype: str, helper: str) -> bool:
    """A type the kernel mounts itself (in /proc/filesystems) with no helper.TYPE program."""
    if not re.fullmatch(r"[a-z0-9_]+", fstype):  # fuse.sshfs, a subtype: a helper's
        return False
    try:
        known = {line.split()[-1] for line in Path("/proc/filesystems").read_text().splitlines()}
    except OSError:
        return False
    if fstype not in known:
        return False
    return not any(os.path.exists(f"{d}/{helper}.{fstype}") for d in HELPER_DIRS)


def _in_utab(target: str) -> bool:
    """Whether libmount keeps userspace options of this mount (then umount(8) reads them)."""
    try:
        text = Path(UTAB).read_text(errors="surrogateescape")
    except OSError:
        return False
    return any(f"TARGET={target}" in line.split() for line in text.splitlines())


def _syscall(
    argv: Sequence[str], target: str, name: str, *args: object
) -> subprocess.CompletedProcess[str]:
    function = getattr(_libc(), name)
    code = 0 if function(*args) == 0 else ctypes.get_errno()
    # The message mount(8) and umount(8) start with; callers read "busy" in it.
    stderr = f"{argv[0]}: {target}: {os.strerror(code)}\n" if code else ""
    return subprocess.CompletedProcess(list(argv), 32 if code else 0, "", stderr)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)
