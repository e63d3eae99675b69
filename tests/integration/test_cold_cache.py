"""Cold caches per filesystem (run/cold.py), on a real loop device and real filesystems.

After the remount and the device flush, reading the test files must cost device
reads of at least their size, and walking the tree must read its metadata from
the device again; the same reads with the caches left warm cost (almost)
nothing, so each assertion fails when the drop is left out. A copy of the mount
in another mount namespace keeps the superblock alive: the flush says so, and
the machine-wide drop is used instead.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.filesystems.profiles import PROFILES
from fsarena.host.executor import RealExecutor
from fsarena.measure.collect import Command
from fsarena.run.cold import make_cold
from fsarena.tasks import TaskContext

MIB = 1 << 20
BIG = 48 * MIB
SMALL, SMALL_FILES = 16 * 1024, 400


def _reads(ex: RealExecutor, ctx: TaskContext, script: str) -> int:
    """Bytes the device read while `sh -c script` ran (the executor's diskstats delta)."""
    timed = ex.measure([Command(("sh", "-c", script))], ctx.device, 120)
    assert timed.measurement.exit_code == 0, timed.stderr
    return timed.measurement.device_read_bytes


@pytest.fixture(params=["ext4", "xfs", "btrfs"])
def mounted(request: pytest.FixtureRequest, workdir: Path) -> Iterator[TaskContext]:
    ex = RealExecutor()
    profile = PROFILES[request.param]
    image, mnt = str(workdir / "test.img"), workdir / "mnt"
    ex.create_image(image, 1024 * MIB)
    device = ex.attach_loop(image)
    try:
        ex.call(profile.mkfs_argv(device))
        mnt.mkdir()
        ex.call(profile.mount_argv(device, str(mnt)))
        ctx = TaskContext(profile, device, str(mnt), str(workdir), {}, ex)
        tree = mnt / "tree"
        for d in range(20):
            (tree / f"d{d}").mkdir(parents=True)
            for f in range(SMALL_FILES // 20):
                (tree / f"d{d}" / f"f{f}").write_bytes(bytes([f % 251]) * SMALL)
        with open(mnt / "big", "wb") as out:
            out.write(b"\x5a" * BIG)
        ex.call(("sync", "-f", str(mnt)))
        yield ctx
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        ex.detach_loop(device)
        ex.remove_path(image)


def _warm(ex: RealExecutor, ctx: TaskContext, script: str, limit: int) -> None:
    """The control: with caches left warm the same reads cost (almost) nothing.

    Retried: other test runs on a shared machine drop every cache now and then.
    """
    reads = [_reads(ex, ctx, script) for _ in range(4)]
    assert min(reads) < limit, f"{reads} bytes read with warm caches: the control cannot tell"


def _read_all(ctx: TaskContext) -> str:
    """Every byte of the big file and of the tree's files."""
    files = f"find {ctx.mountpoint}/tree -type f -exec cat {{}} + > /dev/null"
    return f"cat {ctx.mountpoint}/big > /dev/null && {files}"


def test_after_the_per_filesystem_drop_reads_reach_the_device(mounted: TaskContext) -> None:
    ctx, ex = mounted, RealExecutor()
    _warm(ex, ctx, _read_all(ctx), MIB)
    make_cold(ex, ctx, mounted=True, per_fs=True)
    cold = _reads(ex, ctx, _read_all(ctx))
    assert cold >= BIG + SMALL * SMALL_FILES, f"only {cold} bytes read after the drop"
    # Metadata too: the walk alone (names and inodes, no data) reads the device again.
    walk = f"ls -lR {ctx.mountpoint}/tree > /dev/null"
    _warm(ex, ctx, walk, 64 * 1024)
    make_cold(ex, ctx, mounted=True, per_fs=True)
    assert _reads(ex, ctx, walk) > 64 * 1024


def test_a_mount_held_in_another_namespace_falls_back_to_the_machine_wide_drop(
    mounted: TaskContext,
) -> None:
    ctx, ex = mounted, RealExecutor()
    _reads(ex, ctx, _read_all(ctx))
    # A private copy of every mount: our umount then leaves the superblock alive there.
    holder = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sleep", "120"])
    try:
        for _ in range(50):  # until the namespace exists (its copy of the mount is made)
            if Path(f"/proc/{holder.pid}/ns/mnt").exists() and _ns(holder.pid) != _ns(0):
                break
            subprocess.run(["sleep", "0.1"], check=True)
        ex.call(("umount", ctx.mountpoint))
        assert ex.flush_device(ctx.device) is False  # still held: the flush says so
        ex.call(ctx.profile.mount_argv(ctx.device, ctx.mountpoint))  # the same superblock
        make_cold(ex, ctx, mounted=True, per_fs=True)
        assert _reads(ex, ctx, _read_all(ctx)) >= BIG + SMALL * SMALL_FILES
    finally:
        holder.kill()
        holder.wait()


def _ns(pid: int) -> str:
    return str(Path(f"/proc/{pid or 'self'}/ns/mnt").readlink())
