"""A tiny initramfs for the qemu guest: static busybox, the modules to reach the host's root.

Debian's kernel has virtio and 9p as modules, so it needs an initramfs to
mount the host's root (9p over virtio, read-only) before it can run the same
init as every guest. The archive is the kernel's "newc" cpio format, written
here with the standard library.
"""

from __future__ import annotations

import stat
from pathlib import Path

# What mounting the host's root needs, in load order (dependencies first).
ROOT_MODULES = (
    "virtio_ring", "virtio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio_pci",
    "virtio_blk", "9pnet", "9pnet_virtio", "netfs", "fscache", "9p",
)  # fmt: skip

INIT = """#!/bin/busybox sh
B=/bin/busybox
$B mkdir -p /proc /sys /dev /newroot
$B mount -t devtmpfs dev /dev
for m in {modules}; do $B insmod /modules/$m.ko || echo "fsarena initramfs: cannot load $m"; done
$B mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /newroot || $B poweroff -f
$B mount --move /dev /newroot/dev
exec $B switch_root /newroot {init}
"""


def _entry(name: str, mode: int, data: bytes, ino: int) -> bytes:
    fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0)
    head = b"070701" + "".join(f"{x:08x}" for x in fields).encode() + name.encode() + b"\0"
    return _pad(head) + _pad(data)


def _pad(data: bytes, to: int = 4) -> bytes:
    return data + b"\0" * (-len(data) % to)


def module_paths(modules_dir: Path, names: tuple[str, ...]) -> list[Path]:
    """The .ko files of the named modules, from modules.dep."""
    paths = {}
    for line in (modules_dir / "modules.dep").read_text().splitlines():
        rel = line.partition(":")[0]
        paths[Path(rel).name.removesuffix(".ko").replace("-", "_")] = modules_dir / rel
    return [paths[n] for n in names if n in paths]


def write(path: Path, busybox: Path, modules_dir: Path, init: str) -> None:
    """An initramfs at path that mounts the host's root and hands over to init."""
    modules = module_paths(modules_dir, ROOT_MODULES)
    names = " ".join(p.name.removesuffix(".ko") for p in modules)
    entries = [
        ("bin", stat.S_IFDIR | 0o755, b""),
        ("modules", stat.S_IFDIR | 0o755, b""),
        ("bin/busybox", stat.S_IFREG | 0o755, busybox.read_bytes()),
        ("init", stat.S_IFREG | 0o755, INIT.format(modules=names, init=init).encode()),
        *((f"modules/{p.name}", stat.S_IFREG | 0o644, p.read_bytes()) for p in modules),
        ("TRAILER!!!", 0, b""),
    ]
    data = b"".join(_entry(n, m, d, i) for i, (n, m, d) in enumerate(entries, start=1))
    path.write_bytes(_pad(data, 512))
