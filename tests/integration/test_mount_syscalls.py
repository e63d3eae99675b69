"""The untimed mount and umount made as syscalls (host/mounts.py) do what mount(8) does.

On a real loop device per filesystem of the default run: mounted by util-linux's mount(8), then by
the executor's own syscall, the mount table reads the same (source, type, mount
and superblock options); the executor's umount leaves nothing mounted; a busy
mount fails with "busy" in the message, as umount(8)'s does (the teardown's
retry reads it); options, or a type with a helper, still go to the binary.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES
from fsarena.host import mounts
from fsarena.host.executor import RealExecutor

MIB = 1 << 20


def _table_line(mountpoint: Path) -> list[str]:
    """The mountinfo line of mountpoint without its ids (they differ from mount to mount)."""
    target = os.path.realpath(mountpoint)
    lines = [
        line.split()
        for line in Path("/proc/self/mountinfo").read_text().splitlines()
        if line.split()[4] == target
    ]
    assert len(lines) == 1, lines
    fields = lines[0]
    return fields[4:]  # mountpoint, its options, optional fields, "-", type, source, super


@pytest.fixture(params=["ext2", "ext3", "ext4", "xfs", "btrfs"])
def device(request: pytest.FixtureRequest, workdir: Path) -> Iterator[tuple[str, str, Path]]:
    ex = RealExecutor()
    image = str(workdir / "test.img")
    ex.create_image(image, 512 * MIB)
    dev = ex.attach_loop(image)
    mnt = workdir / "mnt"
    mnt.mkdir()
    try:
        ex.call(PROFILES[request.param].mkfs_argv(dev))
        yield request.param, dev, mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False, capture_output=True)
        ex.detach_loop(dev)
        ex.remove_path(image)


def test_the_syscall_mounts_as_mount8_does(device: tuple[str, str, Path]) -> None:
    fstype, dev, mnt = device
    ex = RealExecutor()
    argv = PROFILES[fstype].mount_argv(dev, str(mnt))
    assert argv == ("mount", "-t", fstype, dev, str(mnt))  # the shape made in-process
    subprocess.run(argv, check=True)
    by_binary = _table_line(mnt)
    subprocess.run(["umount", str(mnt)], check=True)

    # In-process: the same call the cold cycle makes; the mount table reads the same.
    assert mounts.in_process(argv) is not None, "the plain mount must be made in-process"
    assert _table_line(mnt) == by_binary
    assert ex.is_mounted(str(mnt))
    ex.call(("umount", str(mnt)))
    assert not ex.is_mounted(str(mnt))
    assert not mounts.mounted_type(str(mnt))
    findmnt = subprocess.run(["findmnt", "--mountpoint", str(mnt)], check=False)
    assert findmnt.returncode != 0, "findmnt still sees a mount the in-process umount removed"

    ex.call(argv)
    assert _table_line(mnt) == by_binary
    # An open file keeps the mount busy.
    with open(mnt / "held", "w"), pytest.raises(FsarenaError, match="busy"):
        ex.call(("umount", str(mnt)))
    ex.call(("umount", str(mnt)))
    with pytest.raises(FsarenaError, match="not mounted"):  # umount(8)'s own words
        ex.call(("umount", str(mnt)))


def test_what_libmount_would_do_more_goes_to_the_binary(device: tuple[str, str, Path]) -> None:
    fstype, dev, mnt = device
    assert mounts.in_process(("mount", "-t", fstype, "-o", "noatime", dev, str(mnt))) is None
    assert mounts.in_process(("mount", dev, str(mnt))) is None  # no type: blkid probes it
    assert mounts.in_process(("mount", "-t", "fuse.sshfs", dev, str(mnt))) is None
    assert mounts.in_process(("umount", str(mnt))) is None  # nothing mounted there
    assert not any(Path(mnt).iterdir())
