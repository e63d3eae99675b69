"""Aging on real loop devices, at a tiny size: the same file set everywhere, snapshots restored."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.aging.profiles import resolve_age
from fsarena.aging.workload import AgingPlan, digest
from fsarena.session.file import Session, load
from tests.integration.conftest import fsarena, leftovers, new_workdir

FILESYSTEMS = ("ext4", "xfs")  # btrfs too in the acceptance run; each costs ~40 s here
IMAGE = "320M"  # xfs's smallest; a 32 MB aged tree and ~64 MB of churn: seconds
PROFILE = """
source = "integration test: a tiny churn"
fullness = 0.1
written_factor = 0.2
mean_file_bytes = 65536
max_file_bytes = 4194304
tail_min_bytes = 262144.0
time_cap_s = 600.0  # a guard against a hang only: the bytes bound the work
"""
SUITE = """
name = "aging-test"
filesystems = ["ext4"]
tasks = ["mkfs", "mount", "capacity_initial", "umount"]
"""


@pytest.fixture(scope="module")
def aged_run() -> Iterator[tuple[subprocess.CompletedProcess[str], Path, Path]]:
    work = new_workdir()
    (work / "tiny.toml").write_text(PROFILE)
    (work / "suite.toml").write_text(SUITE)
    out = work / "session.json"
    result = fsarena(
        "run", "--suite", str(work / "suite.toml"), "--age", str(work / "tiny.toml"),
        "--fs", ",".join(FILESYSTEMS), "--image-size", IMAGE, "-n", "2", "--seed", "5",
        "--workdir", str(work / "w"), "--output", str(out), "--quiet",
        check=False,
    )  # fmt: skip
    yield result, out, work
    subprocess.run(["rm", "-rf", str(work)], check=False)


def _session(aged_run: tuple[subprocess.CompletedProcess[str], Path, Path]) -> Session:
    result, out, _ = aged_run
    assert result.returncode == 0, result.stderr
    return load(out)


def test_every_filesystem_runs_fresh_and_aged_and_mkfs_is_skipped_aged(aged_run) -> None:  # type: ignore[no-untyped-def]
    session = _session(aged_run)
    assert session.status == "complete"
    names = {r.filesystem for r in session.runs}
    assert names == {*FILESYSTEMS, *(f"{fs}+tiny" for fs in FILESYSTEMS)}
    for run in session.runs:
        if run.filesystem.endswith("+tiny") and run.task == "mkfs":
            assert run.status == "skipped" and "aged" in run.error
        else:
            assert run.status == "ok", (run.filesystem, run.task, run.error)


def test_the_same_seed_gives_the_same_file_set_on_every_filesystem(aged_run) -> None:  # type: ignore[no-untyped-def]
    session = _session(aged_run)
    assert set(session.aging) == set(FILESYSTEMS)
    size = session.aging["ext4"].image_size_bytes
    expected = digest(AgingPlan(resolve_age(str(aged_run[2] / "tiny.toml")), size, 5).final(), 5)
    for fs, record in session.aging.items():
        assert record.manifest_digest == expected, fs
        assert record.on_disk_matches, fs
        assert record.stopped_by == "bytes", fs
        assert record.bytes_written >= 0.2 * size
        assert record.device_write_bytes > 0


def test_aged_repetitions_restore_one_snapshot_and_fresh_ones_differ(aged_run) -> None:  # type: ignore[no-untyped-def]
    session = _session(aged_run)
    for fs in FILESYSTEMS:
        layouts = [
            r.values
            for r in session.runs
            if r.task == "aged_layout" and r.filesystem == f"{fs}+tiny"
        ]
        assert len(layouts) == 2
        # Both repetitions measured the very image the aging left (restored from its snapshot).
        assert layouts[0]["extents_per_file"] == layouts[1]["extents_per_file"], fs
        assert layouts[0]["layout_score"] == layouts[1]["layout_score"], fs
        assert 0 < layouts[0]["layout_score"] <= 1
    _, _, work = aged_run
    assert not list((work / "w" / "images").glob("*")), "snapshots and images are removed"
    assert not leftovers(work)


def test_the_report_shows_aged_beside_fresh(aged_run) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = aged_run
    text = fsarena("report", str(out)).stdout
    assert "Aged (tiny) beside fresh: time per task" in text
    assert "aged_grep" in text and "Ranking with age" in text
    assert "Layout on loop images" in text
    assert "the same file set on every filesystem" in text
