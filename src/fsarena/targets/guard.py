"""The guard of real block devices: what is on a device, and whether fsarena may destroy it.

fio's users wiped partition tables and boot loaders by pointing it at the
wrong disk (fio #150); fsarena must not be talkable into that. Two kinds of
reasons stop it:

- Refusals, which no option overrides: the device (or a partition or holder of
  it) is mounted anywhere, under any name; it holds the root filesystem or
  belongs to the disk that does; it has holders (LVM, md, dm); it is active
  swap; the work directory or the results are on it; the kernel refuses an
  exclusive open (it is in use).
- Data that would be lost: filesystem, RAID or partition-table signatures
  (`wipefs -n -J`, `blkid -p`), or partitions on a whole disk. fsarena then
  needs the exact confirmation: the same device named twice
  (`--device D --destroy-data D`, compared after resolving symlinks). It asks
  for it for a device with no known signature too, because data that no probe
  recognises (a raw database, plain dm-crypt) is lost all the same.

Facts come from util-linux's JSON output (lsblk -J, findmnt -J, wipefs -J) and
from /proc/swaps, compared by major:minor number so that another path to the
same device (a symlink, /dev/disk/by-id, a copy of the node) cannot hide it.
Gathering (`inspect`) is kept apart from deciding (`refusals`, `losses`) so the
decisions are tested on recorded facts without touching a disk.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.host.ledger import json_items

LSBLK_COLUMNS = "NAME,PATH,TYPE,SIZE,MODEL,SERIAL,MOUNTPOINTS,MAJ:MIN"


@dataclass(frozen=True)
class Node:
    """One block device as lsblk shows it, with what sits on it (partitions, holders)."""

    name: str
    path: str
    kind: str  # lsblk TYPE: disk, part, loop, lvm, crypt, raid1, ...
    size_bytes: int
    majmin: str
    model: str = ""
    serial: str = ""
    mountpoints: tuple[str, ...] = ()
    children: tuple[Node, ...] = ()

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    @classmethod
    def from_lsblk(cls, raw: dict[str, Any]) -> Node:
        return cls(
            name=str(raw["name"]),
            path=str(raw.get("path") or f"/dev/{raw['name']}"),
            kind=str(raw.get("type") or ""),
            size_bytes=int(raw.get("size") or 0),
            majmin=str(raw.get("maj:min") or ""),
            model=str(raw.get("model") or "").strip(),
            serial=str(raw.get("serial") or "").strip(),
            mountpoints=tuple(str(m) for m in raw.get("mountpoints") or [] if m),
            children=tuple(cls.from_lsblk(c) for c in raw.get("children") or []),
        )


@dataclass(frozen=True)
class Signature:
    """A filesystem, RAID or partition-table signature found on the device."""

    type: str
    offset: str = ""
    label: str = ""
    uuid: str = ""

    def __str__(self) -> str:
        details = [f"label {self.label!r}"] if self.label else []
        details += [f"uuid {self.uuid}"] if self.uuid else []
        text = self.type + (f" at {self.offset}" if self.offset else "")
        return text + (f" ({', '.join(details)})" if details else "")


@dataclass(frozen=True)
class Facts:
    """Everything the guard decides on; gathered by `inspect`."""

    path: str  # canonical path of the device named
    node: Node
    mounts: tuple[tuple[str, str], ...] = ()  # (device path, mount point) on it or below it
    swaps: tuple[str, ...] = ()
    root_disks: tuple[str, ...] = ()  # the disks holding /, if this device is on one of them
    holds_root: bool = False
    kept_paths_on_it: tuple[str, ...] = ()  # work directory, results: must not be on it
    busy: str = ""  # why an exclusive open failed, if it did
    signatures: tuple[Signature, ...] = field(default=())

    @property
    def holders(self) -> tuple[Node, ...]:
        return tuple(n for n in self.node.walk() if n is not self.node and n.kind != "part")

    @property
    def partitions(self) -> tuple[Node, ...]:
        return tuple(n for n in self.node.children if n.kind == "part")

    def identity(self) -> str:
        """Which device this is: path, size, model, serial."""
        gib = self.node.size_bytes / 2**30
        return (
            f"{self.path}: {gib:.2f} GiB ({self.node.size_bytes} bytes), "
            f"model {self.node.model or '-'}, serial {self.node.serial or '-'}"
        )

    def describe(self) -> str:
        """What would be lost: size, model, serial, signatures, partitions."""
        sigs = ", ".join(str(s) for s in self.signatures) or "none found"
        parts = ", ".join(p.path for p in self.partitions)
        return f"{self.identity()}, signatures: {sigs}" + (
            f", partitions: {parts}" if parts else ""
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "block-device",
            "path": self.path,
            "size_bytes": self.node.size_bytes,
            "model": self.node.model,
            "serial": self.node.serial,
            "signatures_destroyed": [str(s) for s in self.signatures],
        }


def refusals(facts: Facts) -> list[str]:
    """Reasons no option overrides."""
    found = [f"it is mounted: {dev} on {mnt}" for dev, mnt in facts.mounts]
    if facts.holds_root:
        found.append("it holds the root filesystem")
    elif facts.root_disks:
        found.append(f"it is on the disk that holds the root filesystem ({facts.root_disks[0]})")
    if facts.holders:
        names = ", ".join(f"{h.path} ({h.kind})" for h in facts.holders)
        found.append(f"it has holders (LVM, md or dm devices built on it): {names}")
    if facts.swaps:
        found.append(f"it is active swap ({', '.join(facts.swaps)})")
    for path in facts.kept_paths_on_it:
        found.append(f"{path} is on it (choose a --workdir and --results-dir on another disk)")
    if facts.busy and not found:
        found.append(f"the kernel reports it in use ({facts.busy})")
    return found


def losses(facts: Facts) -> list[str]:
    """What would be destroyed: the reasons the exact confirmation is needed."""
    found = [f"it carries {s}" for s in facts.signatures]
    if facts.partitions:  # a disk, or a loop device with a partition table
        parts = ", ".join(p.path for p in facts.partitions)
        found.append(f"it is a whole disk with partitions ({parts})")
    if not found:
        found.append(
            "no signature was found, but data that no probe recognises would be lost as well"
        )
    return found


def canonical(device: str) -> str:
    return os.path.realpath(device)


def check(device: str, confirmation: str | None, kept_paths: Sequence[str]) -> Facts:
    """The facts of a device fsarena may destroy; FsarenaError naming why not otherwise."""
    facts = inspect(device, kept_paths)
    refused = refusals(facts)
    if refused:
        raise FsarenaError(
            f"refusing to use {device} ({facts.path}): {'; '.join(refused)}. "
            "No option overrides this; check that it is really the device you mean"
        )
    if confirmation is None or not _same_device(confirmation, facts.path):
        given = f"--destroy-data names {confirmation}, not this device; " if confirmation else ""
        raise FsarenaError(
            f"{device} would be destroyed ({facts.identity()}): {'; '.join(losses(facts))}. "
            f"{given}To destroy everything on it, name it twice: "
            f"--device {device} --destroy-data {device}"
        )
    return facts


def recheck(device: str, kept_paths: Sequence[str]) -> None:
    """Before each mkfs: the refusals again (a desktop may have automounted it meanwhile)."""
    refused = refusals(inspect(device, kept_paths, probe_signatures=False))
    if refused:
        raise FsarenaError(f"refusing to make a filesystem on {device}: {'; '.join(refused)}")


def _same_device(a: str, b: str) -> bool:
    return canonical(a) == canonical(b)


# ---------------------------------------------------------------- gathering the facts


def _majmin(path: str) -> str:
    """major:minor of a block device node, '' if the path is not one."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    if not stat.S_ISBLK(st.st_mode):
        return ""
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def _source_majmin(source: str, majmin: str) -> str:
    """The block device behind a mount: by its source path (btrfs reports 0:N numbers)."""
    path = source.split("[", 1)[0]  # btrfs subvolumes: /dev/sdb1[/@home]
    return _majmin(path) if path.startswith("/") else majmin


def _forest() -> list[Node]:
    return [
        Node.from_lsblk(d)
        for d in json_items(["lsblk", "-J", "-b", "-o", LSBLK_COLUMNS], "blockdevices")
    ]


def _find(forest: list[Node], majmin: str) -> Node | None:
    for top in forest:
        for node in top.walk():
            if node.majmin == majmin:
                return node
    return None


def _tops_holding(forest: list[Node], majmins: set[str]) -> list[Node]:
    """Top-level devices (disks) that have one of these devices on or below them."""
    return [t for t in forest if any(n.majmin in majmins for n in t.walk())]


def _mounted_majmins() -> list[tuple[str, str, str]]:
    """(majmin, source, target) of every mount on the machine."""
    found = []
    for fs in json_items(["findmnt", "-J", "--list", "-o", "SOURCE,TARGET,MAJ:MIN"], "filesystems"):
        source, target = str(fs.get("source") or ""), str(fs.get("target") or "")
        found.append((_source_majmin(source, str(fs.get("maj:min") or "")), source, target))
    return found


def _active_swaps() -> list[str]:
    try:
        lines = Path("/proc/swaps").read_text().splitlines()[1:]
    except OSError:
        return []
    # The kernel escapes spaces in names as \040.
    return [line.split()[0].encode().decode("unicode_escape") for line in lines if line.strip()]


def _signatures(path: str) -> tuple[Signature, ...]:
    """Signatures from wipefs -n -J (all of them), plus blkid -p's low-level probe."""
    found = [
        Signature(
            str(s.get("type") or "?"),
            str(s.get("offset") or ""),
            str(s.get("label") or ""),
            str(s.get("uuid") or ""),
        )
        for s in json_items(["wipefs", "--no-act", "-J", path], "signatures")
    ]
    try:
        probe = subprocess.run(
            ["blkid", "-p", "-o", "export", path], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise FsarenaError("blkid not found: apt-get install util-linux") from None
    fields = dict(line.split("=", 1) for line in probe.stdout.splitlines() if "=" in line)
    kind = fields.get("TYPE") or fields.get("PTTYPE")
    if kind and kind not in {s.type for s in found}:
        found.append(Signature(kind, "", fields.get("LABEL", ""), fields.get("UUID", "")))
    return tuple(found)


def _exclusive_open(path: str) -> str:
    """Why the kernel refuses an exclusive open ('' if it allows it or we may not ask)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        return f"exclusive open: {exc.strerror}" if exc.errno == errno.EBUSY else ""
    os.close(fd)
    return ""


def _backing_majmin(path: str) -> str:
    found = json_items(
        ["findmnt", "-J", "-o", "SOURCE,MAJ:MIN", "-T", _existing(path)], "filesystems"
    )
    fs = found[0] if found else {}
    return _source_majmin(str(fs.get("source") or ""), str(fs.get("maj:min") or ""))


def _existing(path: str) -> str:
    p = os.path.abspath(path)
    while not os.path.exists(p):
        p = os.path.dirname(p)
    return p


def inspect(device: str, kept_paths: Sequence[str], probe_signatures: bool = True) -> Facts:
    """Gather the facts about a device from util-linux and /proc."""
    path = canonical(device)
    majmin = _majmin(path)
    if not majmin:
        raise FsarenaError(f"{device} is not a block device; give a partition such as /dev/sdX1")
    if not os.access(path, os.R_OK):
        # Without reading it, no signature can be probed: "none found" would be a lie.
        raise FsarenaError(f"cannot read {device} to inspect it: run fsarena as root (sudo)")
    forest = _forest()
    node = _find(forest, majmin)
    if node is None:
        raise FsarenaError(f"lsblk does not list {device} ({majmin}); is it a block device?")
    family = {n.majmin for n in node.walk()}
    mounts = [(src, tgt) for mm, src, tgt in _mounted_majmins() if mm in family]
    # lsblk reads mountinfo by number too; a second source costs nothing.
    mounts += [
        (n.path, m) for n in node.walk() for m in n.mountpoints if m not in dict(mounts).values()
    ]
    swaps = [s for s in _active_swaps() if _majmin(os.path.realpath(s)) in family]
    root_majmin = _backing_majmin("/")
    root_tops = _tops_holding(forest, {root_majmin})
    on_root_disk = [t.path for t in root_tops if majmin in {n.majmin for n in t.walk()}]
    kept = [p for p in kept_paths if _backing_majmin(p) in family]
    return Facts(
        path=path,
        node=node,
        mounts=tuple(mounts),
        swaps=tuple(swaps),
        root_disks=tuple(on_root_disk),
        holds_root=root_majmin in family,
        kept_paths_on_it=tuple(kept),
        busy=_exclusive_open(path),
        signatures=_signatures(path) if probe_signatures else (),
    )
