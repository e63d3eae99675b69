"""The class of device an aged filesystem sat on: a loop image or a real device, spinning or not.

What aging can show depends on it (Conway et al.: a cold grep of an aged
tree 2x slower after a few hundred pulls on an HDD, FAST '17; 2-4x on SSDs,
HotStorage '19), so the aged report puts the measured change beside the
published ones for the class found here. Read from sysfs at aging time:
`queue/rotational` of the device (a partition: of its disk) and, for a loop
device, of the disk under its backing file (`loop/backing_file`, then
`findmnt -T`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

SYS_BLOCK = Path("/sys/class/block")


def rotational(device: str) -> bool | None:
    """Whether the block device (or a partition's disk) spins; None when sysfs does not say."""
    node = SYS_BLOCK / Path(device).name
    try:
        node = node.resolve()
        if (node / "partition").exists():
            node = node.parent
        return (node / "queue" / "rotational").read_text().strip() == "1"
    except OSError:
        return None


def virtual(device: str) -> bool:
    """A virtio disk: its rotational flag is the driver's default, not the host's storage."""
    node = SYS_BLOCK / Path(device).name
    try:
        node = node.resolve()
        if (node / "partition").exists():
            node = node.parent
        return (node / "device" / "driver").resolve().name.startswith("virtio")
    except OSError:
        return False


def _disk_under(path: str) -> str:
    out = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE", "-T", path], capture_output=True, text=True, check=False
    )
    return out.stdout.strip().split("[")[0]


def device_class(device: str) -> dict[str, Any]:
    """{"device", "loop", "rotational", "virtio"} or, for a loop device, its backing file and
    the disk under it ("backing_device", "backing_rotational", "backing_virtio")."""
    found: dict[str, Any] = {"device": device, "rotational": rotational(device)}
    backing = SYS_BLOCK / Path(device).name / "loop" / "backing_file"
    found["loop"] = backing.exists()
    if found["loop"]:
        try:
            file = backing.read_text().strip()
        except OSError:
            file = ""
        disk = _disk_under(file) if file else ""
        found.update(
            backing_file=file,
            backing_device=disk,
            backing_rotational=rotational(disk) if disk.startswith("/dev/") else None,
            backing_virtio=virtual(disk) if disk.startswith("/dev/") else False,
        )
    else:
        found["virtio"] = virtual(device)
    return found
