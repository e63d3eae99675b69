"""The class of device, read from sysfs: the layouts the kernel gives each kind of disk.

The trees below are the kernel's own layouts (drivers/base/core.c: a device's
directory under its parent's, its `subsystem` link to the bus or class), made in
a temporary directory: NVMe, SATA through libata, USB, virtio, a loop device, zram,
device-mapper. Each disk is named what another kind is usually called, so a
classification that read names would fail. tests/integration/test_share_real.py
reads this machine's real virtio disk, loop devices and a zram device.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fsarena.targets.device_class import DeviceClass, classify


def _device(root: Path, path: str, subsystem: str = "") -> Path:
    node = root / "devices" / path
    node.mkdir(parents=True, exist_ok=True)
    if subsystem:
        target = root / "bus" / subsystem
        target.mkdir(parents=True, exist_ok=True)
        os.symlink(target, node / "subsystem")
    return node


def _disk(node: Path, rotational: int | None) -> Path:
    (node / "queue").mkdir(parents=True)
    if rotational is not None:
        (node / "queue" / "rotational").write_text(f"{rotational}\n")
    return node


def _nvme(root: Path, name: str = "sda") -> Path:
    _device(root, "pci0000:00/0000:00:04.0", "pci")
    _device(root, "pci0000:00/0000:00:04.0/nvme/nvme0", "nvme")
    return _disk(_device(root, f"pci0000:00/0000:00:04.0/nvme/nvme0/{name}", "block"), 0)


def _sata(root: Path, rotational: int, name: str = "nvme0n1") -> Path:
    _device(root, "pci0000:00/0000:00:1f.2", "pci")
    port = _device(root, "pci0000:00/0000:00:1f.2/ata1")  # libata's port: no bus of its own
    (port / "ata_port" / "ata1").mkdir(parents=True)
    _device(root, "pci0000:00/0000:00:1f.2/ata1/host0", "scsi")
    _device(root, "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0", "scsi")
    disk = f"pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/{name}"
    return _disk(_device(root, disk, "block"), rotational)


def _virtio(root: Path, name: str = "sdb") -> Path:
    _device(root, "pci0000:00/0000:00:02.0", "pci")
    _device(root, "pci0000:00/0000:00:02.0/virtio1", "virtio")
    # a virtio disk says rotational 1 whatever backs it
    return _disk(_device(root, f"pci0000:00/0000:00:02.0/virtio1/block/{name}", "block"), 1)


def test_nvme_is_nvme_whatever_its_name(tmp_path: Path) -> None:
    assert classify(_nvme(tmp_path, name="sda")) == DeviceClass("NVMe SSD", "disk", "nvme", False)


@pytest.mark.parametrize(("rotational", "label"), [(0, "SATA SSD"), (1, "SATA HDD")])
def test_sata_is_told_by_libata_and_rotational(tmp_path: Path, rotational: int, label: str) -> None:
    found = classify(_sata(tmp_path, rotational))
    assert (found.label, found.transport) == (label, "sata")


def test_a_virtio_disk_is_a_virtual_disk_not_an_hdd(tmp_path: Path) -> None:
    found = classify(_virtio(tmp_path))
    assert found.label == "virtual disk (virtio)" and found.rotational is True


def test_a_usb_disk(tmp_path: Path) -> None:
    _device(tmp_path, "pci0000:00/0000:00:14.0", "pci")
    _device(tmp_path, "pci0000:00/0000:00:14.0/usb2/2-1", "usb")
    _device(tmp_path, "pci0000:00/0000:00:14.0/usb2/2-1/host6", "scsi")
    node = _disk(_device(tmp_path, "pci0000:00/0000:00:14.0/usb2/2-1/host6/block/sdc"), 1)
    assert classify(node).label == "USB HDD"


def test_a_partition_is_classed_as_its_disk(tmp_path: Path) -> None:
    disk = _nvme(tmp_path, name="nvme0n1")
    part = disk / "nvme0n1p1"
    part.mkdir()
    (part / "partition").write_text("1\n")
    assert classify(part).label == "NVMe SSD"


def test_a_loop_device_is_an_image_on_its_backing_files_device(tmp_path: Path) -> None:
    loop = _disk(_device(tmp_path, "virtual/block/loop3"), 0)
    (loop / "loop").mkdir()
    (loop / "loop" / "backing_file").write_text("/var/tmp/w/images/ext4-r1.img\n")
    asked = []

    def backing(path: str) -> DeviceClass:
        asked.append(path)
        return DeviceClass("NVMe SSD", "disk", "nvme", False)

    found = classify(loop, backing)
    assert asked == ["/var/tmp/w/images/ext4-r1.img"]
    assert found == DeviceClass("loop image on NVMe SSD", "loop", "nvme", False)


def test_zram_by_its_own_attributes(tmp_path: Path) -> None:
    node = _disk(_device(tmp_path, "virtual/block/vda"), 0)
    (node / "mm_stat").write_text("0 0 0 0 0 0 0 0 0\n")
    (node / "comp_algorithm").write_text("lzo [lzo-rle] zstd\n")
    assert classify(node).label == "zram (compressed RAM)"


def test_device_mapper_is_named_with_what_it_is_made_of(tmp_path: Path) -> None:
    disk = _nvme(tmp_path, name="nvme0n1")
    dm = _disk(_device(tmp_path, "virtual/block/dm-0"), 0)
    (dm / "dm").mkdir()
    (dm / "slaves").mkdir()
    os.symlink(disk, dm / "slaves" / "nvme0n1")
    assert classify(dm).label == "device-mapper on NVMe SSD"


def test_an_unknown_virtual_device_is_not_guessed(tmp_path: Path) -> None:
    node = _disk(_device(tmp_path, "virtual/block/ram0"), 0)
    assert classify(node).kind == "memory"
