"""A loop image whose filesystem is still mounted is never zeroed for reuse.

`losetup --detach` of a busy device only sets autoclear and exits 0, so a teardown
whose umount failed (seen once: a SIGTERM'd fleet host left its xfs mounted) went on to
retire the image: `fallocate --zero-range` under a mounted filesystem. Real loop device,
real ext4, real mount.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fsarena.host.executor import SPARE_IMAGE, RealExecutor
from fsarena.host.ledger import Ledger


def test_a_mounted_image_is_deleted_never_zeroed(tmp_path: Path) -> None:
    ex = RealExecutor(ledger=Ledger(str(tmp_path)))
    image = tmp_path / "images" / "ext4-r1.img"
    ex.create_image(str(image), 64 << 20)
    device = ex.attach_loop(str(image))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mkfs.ext4", "-q", device], check=True)
        subprocess.run(["mount", device, str(mnt)], check=True)
        (mnt / "kept").write_bytes(b"x" * 4096)
        os.sync()
        ex.detach_loop(device)  # busy: autoclear set, still attached
        ex.retire_image(str(image))
        assert not (image.parent / SPARE_IMAGE).exists()  # not kept for reuse
        assert ex.spare is None
        # The mounted filesystem still reads what it held: nothing zeroed under it.
        subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], check=True)
        assert (mnt / "kept").read_bytes() == b"x" * 4096
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", device], check=False, capture_output=True)


def test_a_detach_waits_until_the_kernel_lets_go_of_the_image(tmp_path: Path) -> None:
    """A device another process has open (udev's probe, here a reader) is detached only at
    its last close; until then its image's blocks stay allocated, even deleted. The detach
    returns once the kernel let go, so the next image of the run finds the room."""
    import time

    ex = RealExecutor(ledger=Ledger(str(tmp_path)))
    image = tmp_path / "images" / "ext4-r1.img"
    ex.create_image(str(image), 16 << 20)
    device = ex.attach_loop(str(image))
    backing = Path(f"/sys/class/block/{Path(device).name}/loop/backing_file")
    holder = subprocess.Popen(["sh", "-c", "sleep 0.6"], stdin=open(device, "rb"))  # noqa: SIM115
    try:
        started = time.monotonic()
        ex.detach_loop(device)
        took = time.monotonic() - started
        assert not backing.exists() or backing.read_text().strip() != str(image)
        assert took >= 0.3, f"returned after {took:.2f} s, while the reader still held it"
    finally:
        holder.wait()
        subprocess.run(["losetup", "-d", device], check=False, capture_output=True)
        ex.remove_path(str(image))
