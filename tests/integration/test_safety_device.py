"""Real block devices, guarded: loop devices over images stand in for disks (acceptance of #5)."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.session.file import load
from tests.integration.conftest import fsarena

MIB = 1 << 20


def _sha256(device: str) -> str:
    digest = hashlib.sha256()
    with open(device, "rb") as f:
        while chunk := f.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


@pytest.fixture
def ext4_device(workdir: Path) -> Iterator[str]:
    """A loop device carrying someone's ext4 filesystem (320 MiB: enough for xfs too)."""
    image = workdir / "disk.img"
    subprocess.run(["truncate", "-s", "320M", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "precious", str(image)], check=True)
    device = subprocess.check_output(["losetup", "--find", "--show", str(image)], text=True)
    yield device.strip()
    subprocess.run(["umount", str(workdir / "theirs")], capture_output=True, check=False)
    subprocess.run(["losetup", "--detach", device.strip()], check=True)


def _run(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    w, res = str(workdir / "w"), str(workdir / "results")
    return fsarena("run", "--fs", "ext4", "--scale", "0.01", "-n", "1", "--workdir", w,
                   "--results-dir", res, *args, check=False)  # fmt: skip


def test_signature_needs_the_exact_confirmation_and_mounted_is_never_used(
    workdir: Path, ext4_device: str
) -> None:
    before = _sha256(ext4_device)
    alias = workdir / "by-id-link"
    alias.symlink_to(ext4_device)

    refused = _run(workdir, "--device", ext4_device)
    assert refused.returncode == 2
    assert "carries ext4" in refused.stderr and "label 'precious'" in refused.stderr
    assert f"--destroy-data {ext4_device}" in refused.stderr
    wrong = _run(workdir, "--device", ext4_device, "--destroy-data", "/dev/loop-nope")
    assert wrong.returncode == 2 and "not this device" in wrong.stderr

    mnt = workdir / "theirs"
    mnt.mkdir()
    # Read-only without journal replay: mounting it writes nothing, so the checksum holds.
    subprocess.run(["mount", "-o", "ro,noload", ext4_device, str(mnt)], check=True)
    for device, confirm in ((ext4_device, ext4_device), (str(alias), ext4_device)):
        mounted = _run(workdir, "--device", device, "--destroy-data", confirm)
        assert mounted.returncode == 2, mounted.stderr
        assert f"it is mounted: {ext4_device} on {mnt}" in mounted.stderr
        assert "No option overrides this" in mounted.stderr
    subprocess.run(["umount", str(mnt)], check=True)

    assert _sha256(ext4_device) == before, "not one byte changed"
    assert not (workdir / "results").exists()


def test_a_mounted_partition_protects_its_whole_disk(workdir: Path) -> None:
    image = workdir / "parted.img"
    subprocess.run(["truncate", "-s", "64M", str(image)], check=True)
    subprocess.run(["sfdisk", "-q", str(image)], input="label: dos\n,32M\n,\n", text=True,
                   check=True)  # fmt: skip
    disk = subprocess.check_output(["losetup", "--find", "--show", str(image)], text=True)
    disk = disk.strip()
    mnt = workdir / "p1"
    try:
        # partx, not losetup -P: this kernel scans no partition tables itself.
        subprocess.run(["partx", "-a", disk], check=True)
        subprocess.run(["mkfs.ext4", "-q", f"{disk}p1"], check=True)
        before = _sha256(disk)
        mnt.mkdir()
        subprocess.run(["mount", "-o", "ro,noload", f"{disk}p1", str(mnt)], check=True)
        result = _run(workdir, "--device", disk, "--destroy-data", disk)
        assert result.returncode == 2
        assert f"it is mounted: {disk}p1 on {mnt}" in result.stderr
        subprocess.run(["umount", str(mnt)], check=True)
        unconfirmed = _run(workdir, "--device", disk)
        assert "whole disk with partitions" in unconfirmed.stderr and "dos" in unconfirmed.stderr
        assert _sha256(disk) == before
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, check=False)
        subprocess.run(["partx", "-d", disk], capture_output=True, check=False)
        subprocess.run(["losetup", "--detach", disk], check=True)


def test_confirmed_device_is_used_and_reported(workdir: Path, ext4_device: str) -> None:
    suite = workdir / "lifecycle.toml"
    suite.write_text(
        'name = "lifecycle"\nfilesystems = ["ext4", "xfs"]\n'
        'tasks = ["mkfs", "mount", "capacity_initial", "umount"]\nrepetitions = 1\n'
    )
    out = workdir / "session.json"
    before = _sha256(ext4_device)
    dry = _run(workdir, "--suite", str(suite), "--fs", "ext4,xfs", "--device", ext4_device,
               "--destroy-data", ext4_device, "--dry-run")  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert "ALL DATA DESTROYED" in dry.stdout and "label 'precious'" in dry.stdout
    assert f"mkfs.xfs -f -q {ext4_device}" in dry.stdout
    assert _sha256(ext4_device) == before, "a dry run touches nothing"
    result = _run(workdir, "--suite", str(suite), "--fs", "ext4,xfs", "--device", ext4_device,
                  "--destroy-data", ext4_device, "--output", str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "destroying all data on" in result.stderr and "precious" in result.stderr
    session = load(out)
    assert session.target.path == ext4_device
    assert session.target.size_bytes == 320 * MIB
    assert all(r.status == "ok" for r in session.runs) and len(session.runs) == 8
    capacity = [r.values["device_bytes"] for r in session.runs if r.task == "capacity_initial"]
    assert capacity == [320 * MIB, 320 * MIB], "the filesystems were made on the device"
    assert f"block device {ext4_device}" in result.stdout
