"""A real, non-loop block device end to end: a zram device made for the test (tests/zram.py),
run on with --device/--destroy-data, and the guard's refusals on it."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.session.file import load
from tests import zram
from tests.integration.conftest import fsarena, leftovers, measured

MIB = 1 << 20
SIZE = 512 * MIB

pytestmark = pytest.mark.skipif(not zram.available(), reason="the kernel has no zram-control")


@pytest.fixture
def zram_device() -> Iterator[str]:
    with zram.zram_device(SIZE) as device:
        yield device


def _run(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    w, res = str(workdir / "w"), str(workdir / "results")
    return fsarena("run", "--fs", "ext4", "--scale", "0.01", "-n", "1", "--workdir", w,
                   "--results-dir", res, *args, check=False)  # fmt: skip


def _sectors_written(device: str) -> int:
    """The device's own count of 512-byte sectors written (field 7 of /sys/block/DEV/stat)."""
    return int(Path(f"/sys/block/{Path(device).name}/stat").read_text().split()[6])


def _mounts_of(device: str) -> list[str]:
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET", "-S", device],
                         capture_output=True, text=True, check=False)  # fmt: skip
    return out.stdout.split()


def _sha256(device: str) -> str:
    digest = hashlib.sha256()
    with open(device, "rb") as f:
        while chunk := f.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


def test_a_run_on_a_zram_device_measures_it_end_to_end(workdir: Path, zram_device: str) -> None:
    out = workdir / "session.json"
    before = _sectors_written(zram_device)
    result = _run(workdir, "--device", zram_device, "--destroy-data", zram_device,
                  "--output", str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"destroying all data on {zram_device}" in result.stderr
    session = load(out)
    assert session.status == "complete"
    assert session.target.kind == "block-device" and session.target.path == zram_device
    assert session.target.size_bytes == SIZE
    assert session.runs and all(measured(r) for r in session.runs), [
        (r.task, r.error) for r in session.runs if r.status != "ok"
    ]
    capacity = [r.values["device_bytes"] for r in session.runs if r.task == "capacity_initial"]
    assert capacity == [SIZE], "mkfs made the filesystem on the whole zram device"
    # The device's counters, per copy: at least the bytes copied reached the device (synced),
    # and not wildly more (metadata and journal add a little, not a second copy).
    sizes = {name: d.total_bytes for name, d in session.datasets.items()}
    runs = {r.task: r.measurement for r in session.runs if r.measurement is not None}
    for task, dataset in (("iso_copy_in", "iso"), ("tree_copy_in", "tree"),
                          ("iso_copy_within", "iso"), ("tree_copy_within", "tree")):  # fmt: skip
        written = runs[task].device_write_bytes
        assert sizes[dataset] <= written <= 1.25 * sizes[dataset] + 4 * MIB, (task, written)
    # A copy within the device reads its source from the device (caches were dropped).
    assert runs["iso_copy_within"].device_read_bytes >= sizes["iso"]
    # What the runs counted, the device itself counted too (and more: the ceiling, mkfs).
    written = sum(m.device_write_bytes for m in runs.values())
    assert (_sectors_written(zram_device) - before) * 512 >= written
    # Teardown: nothing mounted from it, nothing holding it, nothing left in the work directory.
    assert _mounts_of(zram_device) == []
    assert not list(Path(f"/sys/block/{Path(zram_device).name}/holders").iterdir())
    assert not leftovers(workdir)


def test_the_guard_refuses_a_zram_device_unconfirmed_or_mounted(
    workdir: Path, zram_device: str
) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "precious", zram_device], check=True)
    before = _sha256(zram_device)
    refused = _run(workdir, "--device", zram_device)
    assert refused.returncode == 2
    assert "carries ext4" in refused.stderr and "label 'precious'" in refused.stderr
    assert f"--destroy-data {zram_device}" in refused.stderr

    mnt = workdir / "theirs"
    mnt.mkdir()
    subprocess.run(["mount", "-o", "ro,noload", zram_device, str(mnt)], check=True)
    try:
        mounted = _run(workdir, "--device", zram_device, "--destroy-data", zram_device)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    assert mounted.returncode == 2, mounted.stderr
    assert f"it is mounted: {zram_device} on {mnt}" in mounted.stderr
    assert _sha256(zram_device) == before, "not one byte changed"
    assert not (workdir / "results").exists()
