"""Time to durable (TaskContext.durable): one device flush ends every writing task, counted.

The flush count a measurement records comes from /sys/block/X/stat; it is checked
here against the kernel's other view of the same device (/proc/diskstats, read
around the same region), against a known sequence (an fsync of the block device
must complete at least one flush request), and on real filesystems: whatever
the filesystem's syncfs issued (ext2's own driver none; ext2 served by ext4's
driver, CONFIG_EXT4_USE_FOR_EXT2 as on this machine's kernel, one), the device
flush adds one more, so every writing region ends flushed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.filesystems.profiles import PROFILES
from fsarena.host.executor import RealExecutor
from fsarena.measure.collect import Command
from fsarena.tasks import TaskContext

MIB = 1 << 20


def _diskstats_flushes(device: str) -> int:
    """Flush requests completed, as /proc/diskstats (not the sysfs stat file) counts them."""
    name = Path(os.path.realpath(device)).name
    for line in Path("/proc/diskstats").read_text().splitlines():
        parts = line.split()
        if parts[2] == name:
            return int(parts[18])  # major, minor, name, then the stat fields: flushes is 16th
    raise AssertionError(f"{name} not in /proc/diskstats")


@pytest.fixture
def device(workdir: Path) -> Iterator[str]:
    ex = RealExecutor()
    image = str(workdir / "test.img")
    ex.create_image(image, 256 * MIB)
    dev = ex.attach_loop(image)
    try:
        yield dev
    finally:
        ex.detach_loop(dev)


def test_an_fsync_of_the_block_device_is_counted_as_a_flush(device: str) -> None:
    ex = RealExecutor()
    before = _diskstats_flushes(device)
    timed = ex.measure([Command(("sync", device))], device, 60)
    after = _diskstats_flushes(device)
    m = timed.measurement
    assert m.exit_code == 0, timed.stderr
    assert m.device_flushes is not None and m.device_flushes >= 1
    # Nothing else uses this device: both of the kernel's views agree exactly.
    assert m.device_flushes == after - before
    assert m.device_flush_ms is not None and m.device_flush_ms >= 0


def test_a_region_without_a_flush_counts_none(device: str) -> None:
    timed = RealExecutor().measure([Command(("true",))], device, 60)
    assert timed.measurement.device_flushes == 0


@pytest.mark.parametrize("fs", ["ext2", "ext4"])
def test_every_writing_region_ends_with_a_device_flush(device: str, workdir: Path, fs: str) -> None:
    ex = RealExecutor()
    profile = PROFILES[fs]
    mnt = workdir / "mnt"
    mnt.mkdir()
    ex.call(profile.mkfs_argv(device))
    ex.call(profile.mount_argv(device, str(mnt)))
    try:
        ctx = TaskContext(profile, device, str(mnt), str(workdir), {}, ex)
        durable = ctx.durable()
        assert [c.argv for c in durable] == [("sync", "-f", str(mnt)), ("sync", device)]
        write = Command(("dd", "if=/dev/zero", f"of={mnt}/f", "bs=1M", "count=8"))
        syncfs_only = ex.measure([write, durable[0]], device, 60).measurement
        os.unlink(mnt / "f")
        ctx.sync()
        with_flush = ex.measure([write, *durable], device, 60).measurement
        assert syncfs_only.exit_code == 0 and with_flush.exit_code == 0
        assert syncfs_only.device_flushes is not None and with_flush.device_flushes is not None
        # The device flush adds one flush to whatever the filesystem's sync issued.
        assert with_flush.device_flushes >= 1
        assert with_flush.device_flushes >= syncfs_only.device_flushes + 1
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
