"""--age with --device: a loop device stands in for a disk; aged again every repetition."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.session.file import load
from tests.integration.conftest import fsarena

PROFILE = """
source = "integration test: a tiny churn on a device"
fullness = 0.1
written_factor = 0.2
mean_file_bytes = 65536
max_file_bytes = 4194304
tail_min_bytes = 262144.0
time_cap_s = 120.0
"""
SUITE = """
name = "aging-device-test"
filesystems = ["ext4"]
tasks = ["mkfs", "mount", "aged_grep", "umount"]
"""


@pytest.fixture
def blank_device(workdir: Path) -> Iterator[str]:
    """A loop device over a blank 320 MiB image: a disk with nothing on it."""
    image = workdir / "disk.img"
    subprocess.run(["truncate", "-s", "320M", str(image)], check=True)
    device = subprocess.check_output(["losetup", "--find", "--show", str(image)], text=True)
    yield device.strip()
    subprocess.run(["losetup", "--detach", device.strip()], check=True)


def test_an_aged_run_on_a_device_ages_every_repetition_the_same_way(
    workdir: Path, blank_device: str
) -> None:
    (workdir / "tiny.toml").write_text(PROFILE)
    (workdir / "suite.toml").write_text(SUITE)
    out = workdir / "session.json"
    result = fsarena(
        "run", "--suite", str(workdir / "suite.toml"), "--age", str(workdir / "tiny.toml"),
        "--fs", "ext4", "--device", blank_device, "--destroy-data", blank_device,
        "-n", "2", "--seed", "5", "--scale", "0.01",
        "--workdir", str(workdir / "w"), "--output", str(out), "--quiet", check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    session = load(out)
    record = session.aging["ext4"]
    assert record.aged_times == 2 and record.same_as_before, record
    assert (record.snapshot_method or "").startswith("none (--device")
    assert record.on_disk_matches
    not_ok = {(r.filesystem, r.task) for r in session.runs if r.status != "ok"}
    assert not_ok == {("ext4+tiny", "mkfs")}  # an aged filesystem is never made
    assert not list((workdir / "w" / "images").glob("*.snapshot"))
