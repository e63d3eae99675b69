"""umount_dirty times the writeback of dirty data; umount times a clean unmount.

One ext4 run with both, two rounds: the dirty unmount's region wrote at least the
64 MiB left dirty (read from the device's counters) in one of them, the clean one
almost nothing in both, and the dirty one took longer.
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
    fsarena("run", "--suite", str(suite), "-n", "2", "--scale", "0.01", "--no-warmup",
            "--workdir", str(workdir / "w"), "--output", str(out))  # fmt: skip
    runs = load(out).runs
    assert all(r.status == "ok" for r in runs), {r.task: r.error for r in runs}
    dirty = [r.measurement for r in runs if r.task == "umount_dirty" and r.measurement]
    clean = [r.measurement for r in runs if r.task == "umount" and r.measurement]
    assert len(dirty) == 2 and len(clean) == 2
    assert all(m.device_write_bytes < DIRTY_BYTES // 8 for m in clean), clean
    # A sync(2) anywhere on the machine (another run's, before its timed task) may write the
    # data back before the region starts: one round of two must have timed the writeback.
    best = max(dirty, key=lambda m: m.device_write_bytes)
    assert best.device_write_bytes >= DIRTY_BYTES, [m.device_write_bytes for m in dirty]
    assert best.wall_s > max(m.wall_s for m in clean)
    assert best.extra["dirty_bytes"] == DIRTY_BYTES
