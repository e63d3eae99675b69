"""The class of device a filesystem was made on (NVMe, SATA SSD, virtual disk, zram, a loop
image on one of these), read from sysfs: part of every result's comparison key.

Two results are comparable only on the same class of device, so the class is
read from what the kernel says about the device, never guessed from its name
(a virtio disk is "vda", but so could be anything udev renames): the chain of
devices above it in /sys/devices and the subsystem each belongs to (virtio,
nvme, usb, mmc, scsi, and libata's ata_port under a SATA disk), its queue's
`rotational` flag, a loop device's backing file (whose own device is classed
the same way), zram's own attributes, and the devices under a device-mapper or
md device (`slaves/`). Nothing here names a device or reads its model or serial:
a class says what kind of storage it is, not which one.

A virtio disk reports rotational 1 whatever backs it (the host's file or disk is
unknown to the guest), so a virtual disk is a class of its own, never "HDD".
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SYS = Path("/sys")
# Subsystems of a device's ancestors that make its transport, the first found from the disk up.
# A virtual machine's paravirtual buses come first: a SCSI disk on virtio-scsi is a virtual disk.
TRANSPORTS = (
    ("virtio", "virtio"),
    ("xen", "xen"),
    ("vmbus", "vmbus"),  # Hyper-V
    ("nvme", "nvme"),
    ("mmc", "mmc"),
    ("usb", "usb"),
    ("scsi", "scsi"),
)
VIRTUAL_TRANSPORTS = frozenset({"virtio", "xen", "vmbus"})
# Devices made of others (slaves/): the directory that marks each kind.
STACKS = (("dm", "device-mapper"), ("md", "md RAID"))


@dataclass(frozen=True)
class DeviceClass:
    """What kind of storage: its words, and the sysfs facts they were read from."""

    label: str  # "NVMe SSD", "loop image on virtual disk (virtio)", "zram (compressed RAM)"
    kind: str  # "disk", "loop", "zram", "stacked", "memory", "none" (no block device), "unknown"
    transport: str = ""  # virtio, nvme, sata, usb, scsi, mmc, ... ("": none, or not known)
    rotational: bool | None = None  # the queue's flag (None: not read)

    def to_dict(self) -> dict[str, object]:
        return {
            "label": self.label,
            "kind": self.kind,
            "transport": self.transport,
            "rotational": self.rotational,
        }


UNKNOWN = DeviceClass("unknown", "unknown")


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _subsystems(node: Path) -> list[str]:
    """The subsystem of the device and of each device above it, nearest first."""
    found = []
    for ancestor in (node, *node.parents):
        if ancestor == ancestor.parent:
            break
        link = ancestor / "subsystem"
        if link.is_symlink():
            found.append(Path(os.readlink(link)).name)
        if (ancestor / "ata_port").is_dir():
            # libata's port (ataN): a transport container with no bus of its own
            found.append("ata")
    return found


def _transport(subsystems: list[str]) -> str:
    for name, transport in TRANSPORTS:
        if name in subsystems:
            if transport == "scsi" and "ata" in subsystems:
                return "sata"
            return transport
    return ""


def _spinning(rotational: bool | None) -> str:
    return "HDD" if rotational else "SSD" if rotational is False else "disk"


def _disk_label(transport: str, rotational: bool | None) -> str:
    if transport in VIRTUAL_TRANSPORTS:
        return f"virtual disk ({transport})"
    words = {"nvme": "NVMe", "sata": "SATA", "usb": "USB", "scsi": "SCSI/SAS", "mmc": "SD/eMMC"}
    if transport == "mmc":
        return words[transport]
    if transport in words:
        return f"{words[transport]} {_spinning(rotational)}"
    return f"block device, transport unknown ({_spinning(rotational)})"


def classify(node: Path, backing: Callable[[str], DeviceClass] | None = None) -> DeviceClass:
    """The class of the block device whose sysfs directory is `node` (a partition: its disk).

    backing: how a loop device's backing file is classed (for_path; tests give their own).
    """
    node = node.resolve()
    if (node / "partition").exists():
        node = node.parent
    rotational = {"0": False, "1": True}.get(_read(node / "queue" / "rotational"))
    if (node / "loop").is_dir():
        file = _read(node / "loop" / "backing_file")
        under = (backing or for_path)(file) if file else UNKNOWN
        return DeviceClass(
            f"loop image on {under.label}", "loop", under.transport, under.rotational
        )
    if (node / "mm_stat").exists() and (node / "comp_algorithm").exists():
        return DeviceClass("zram (compressed RAM)", "zram", "", rotational)
    slaves = sorted((node / "slaves").iterdir()) if (node / "slaves").is_dir() else []
    if slaves:
        what = next((w for d, w in STACKS if (node / d).is_dir()), "stacked device")
        labels = sorted({classify(s, backing).label for s in slaves})
        return DeviceClass(f"{what} on {' + '.join(labels)}", "stacked", "", rotational)
    transport = _transport(_subsystems(node))
    if not transport and "/virtual/" in str(node):
        return DeviceClass("RAM or virtual block device", "memory", "", rotational)
    return DeviceClass(_disk_label(transport, rotational), "disk", transport, rotational)


def for_block_device(device: str, sys_root: Path = SYS) -> DeviceClass:
    """The class of a block device node (/dev/...), found by its device number."""
    try:
        rdev = os.stat(device).st_rdev
    except OSError:
        return UNKNOWN
    node = sys_root / "dev" / "block" / f"{os.major(rdev)}:{os.minor(rdev)}"
    return classify(node) if node.exists() else UNKNOWN


def for_path(path: str) -> DeviceClass:
    """The class of the device holding a file or directory (where loop images are made)."""
    found = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE,FSTYPE", "-T", _existing(path)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    if len(found) < 2:
        return UNKNOWN
    source, fstype = found[0], found[1]
    if not source.startswith("/dev/"):  # in memory, an overlay, a network filesystem
        return DeviceClass(f"{fstype} (no block device)", "none")
    return for_block_device(source.split("[", 1)[0])  # btrfs: /dev/vda1[/subvolume]


def _existing(path: str) -> str:
    p = Path(path).absolute()
    while not p.exists():
        p = p.parent
    return str(p)


def for_target(device: str | None, workdir: str) -> DeviceClass:
    """Where a plan's filesystems are made: its --device, else loop images in the work directory."""
    if device is not None:
        return for_block_device(device)
    under = for_path(workdir)
    return DeviceClass(f"loop image on {under.label}", "loop", under.transport, under.rotational)
