"""Which helper calls host/mounts.py makes as a syscall, and which it leaves to the binary.

No syscall is made here: every case below is one the binary must run (the
in-process ones are proved against mount(8) as root, tests/integration/
test_mount_syscalls.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.host import mounts


def test_only_the_plain_shapes_are_taken() -> None:
    for argv in [
        ("mount", "-t", "ext4", "-o", "noatime", "/dev/loop9", "/mnt/x"),  # options: libmount's
        ("mount", "/dev/loop9", "/mnt/x"),  # no type: mount(8) probes it
        ("mount", "-t", "fuse.sshfs", "host:", "/mnt/x"),  # a subtype: a helper's
        ("mount", "-t", "no-such-fs", "/dev/loop9", "/mnt/x"),  # not the kernel's
        ("umount", "-l", "/mnt/x"),  # lazy: another flag
        ("mkfs.ext4", "/dev/loop9"),
    ]:
        assert mounts.in_process(argv) is None, argv


def test_a_type_with_a_helper_program_goes_to_the_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fstype = next(
        line.split()[-1]
        for line in Path("/proc/filesystems").read_text().splitlines()
        if line.split()[-1].isalnum()
    )
    monkeypatch.setattr(mounts, "HELPER_DIRS", (str(tmp_path),))
    assert mounts.plain_type(fstype, "mount")
    (tmp_path / f"mount.{fstype}").touch()  # as /sbin/mount.ntfs is ntfs-3g's
    assert not mounts.plain_type(fstype, "mount")
    assert mounts.plain_type(fstype, "umount")
    argv = ("mount", "-t", fstype, "/dev/loop9", str(tmp_path / "mnt"))
    assert mounts.in_process(argv) is None


def test_nothing_mounted_is_left_to_umount8_to_say(tmp_path: Path) -> None:
    assert mounts.mounted_type(str(tmp_path)) is None
    assert mounts.in_process(("umount", str(tmp_path))) is None


def test_the_mount_table_is_read_with_its_escapes() -> None:
    assert mounts.mounted_type("/proc") == "proc"
    assert mounts.unescape(rb"/mnt/a\040b\134c") == "/mnt/a b\\c"


def test_an_image_file_goes_to_the_binary(tmp_path: Path) -> None:
    image = tmp_path / "fs.img"
    image.write_bytes(b"\0" * 4096)  # mount(8) would attach a loop device for it
    (tmp_path / "mnt").mkdir()
    assert mounts.in_process(("mount", "-t", "ext4", str(image), str(tmp_path / "mnt"))) is None
    missing = str(tmp_path / "no-such-device")  # mount(8) says it is missing, in its words
    assert mounts.in_process(("mount", "-t", "ext4", missing, str(tmp_path / "mnt"))) is None
