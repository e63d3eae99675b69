"""umount_dirty times the writeback of dirty data; umount times a clean unmount.

One ext4 run with both: the dirty unmount's region wrote at least the 64 MiB left
dirty (read from the device's counters), the clean one almost nothing, and the dirty
one took longer.
"""

from __future__ import annotations

from pathlib import Path

from fsarena.session.file import load
from fsarena.tasks.lifecycle import DIRTY_BYTES
from tests.integration.conftest import fsarena

SUITE = """name = "umounts"
filesystems = ["ext4"]
tasks = ["mkfs", "mount", "umount_dirty", "umount"]
"""


def test_a_dirty_unmount_times_its_writeback_and_a_clean_one_does_not(workdir: Path) -> None:
    suite = workdir / "umounts.toml"
    suite.write_text(SUITE)
    out = workdir / "session.json"
    fsarena("run", "--suite", str(suite), "-n", "1", "--scale", "0.01", "--no-warmup",
            "--workdir", str(workdir / "w"), "--output", str(out))  # fmt: skip
    runs = {r.task: r for r in load(out).runs}
    assert all(r.status == "ok" for r in runs.values()), {t: r.error for t, r in runs.items()}
    dirty, clean = runs["umount_dirty"].measurement, runs["umount"].measurement
    assert dirty is not None and clean is not None
    assert dirty.device_write_bytes >= DIRTY_BYTES, dirty.device_write_bytes
    assert clean.device_write_bytes < DIRTY_BYTES // 8, clean.device_write_bytes
    assert dirty.wall_s > clean.wall_s
    assert dirty.extra["dirty_bytes"] == DIRTY_BYTES
