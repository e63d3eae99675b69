"""fio's O_DIRECT probe is a real fio job checked on the device's write counter.

ext4 honours O_DIRECT: the probe's bytes are on the device when fio returns.
A probe that fails for another reason than O_DIRECT itself (ENOSPC) fails the
task instead of falling back to buffered I/O. (btrfs with compression buffers
O_DIRECT writes but writes the range back before returning, as O_DIRECT
promises: the bytes are on the device, so it counts as direct. A filesystem that
buffers without that, nilfs2, is not in this machine's kernel.)
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES
from fsarena.host.executor import RealExecutor
from fsarena.tasks import TaskContext
from fsarena.tasks.fio import PROBE_BYTES, direct_io_works

MIB = 1 << 20


@pytest.fixture
def mounted(workdir: Path, request: pytest.FixtureRequest) -> Iterator[TaskContext]:
    fs, options = request.param
    ex = RealExecutor()
    image, mnt = str(workdir / "test.img"), workdir / "mnt"
    ex.create_image(image, 512 * MIB)
    device = ex.attach_loop(image)
    profile = PROFILES[fs]
    try:
        ex.call(profile.mkfs_argv(device))
        mnt.mkdir()
        ex.call(("mount", "-t", profile.fstype, *options, device, str(mnt)))
        yield TaskContext(profile, device, str(mnt), str(workdir), {}, ex)
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        ex.detach_loop(device)


@pytest.mark.parametrize("mounted", [("ext4", ())], indirect=True)
def test_ext4_o_direct_reaches_the_device(mounted: TaskContext) -> None:
    assert direct_io_works(mounted) is True


@pytest.mark.parametrize("mounted", [("ext4", ())], indirect=True)
def test_a_probe_that_fails_for_lack_of_space_fails_the_task(mounted: TaskContext) -> None:
    # The old probe took any failure, ENOSPC included, for "no O_DIRECT here" and went
    # on buffered, ranked with the direct runs.
    fill = ("dd", "if=/dev/zero", f"of={mounted.path('filler')}", "bs=64k", "status=none")
    subprocess.run(fill, check=False)  # until ENOSPC
    free = os.statvfs(mounted.mountpoint)
    assert free.f_bavail * free.f_frsize < PROBE_BYTES
    with pytest.raises(FsarenaError, match="O_DIRECT probe failed"):
        direct_io_works(mounted)
