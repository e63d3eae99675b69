"""Aging inside a User-Mode Linux guest, at a tiny size: the host's file set, in the guest.

jfs@uml (and ext4@uml, its guest's reference, which every guest run adds) is
aged by fsarena's agent inside the guest, with the seed the host's ext4 is
aged with; the file set must be the same (one manifest digest), the guest's
device bytes read inside it, its image snapshotted on the host and restored
for the second aged repetition. jfs does not answer FIEMAP: no extent
figures, and the report says why.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.aging.profiles import resolve_age
from fsarena.aging.workload import AgingPlan, digest
from fsarena.filesystems.drivers import choose
from fsarena.session.file import Session, load
from tests.integration.conftest import fsarena, leftovers, new_workdir

pytestmark = pytest.mark.skipif(
    not choose("jfs@uml").available, reason="needs user-mode-linux (scripts/setup.sh)"
)

IMAGE = "320M"  # one size for all, so that the same seed plans the same file set
PROFILE = """
source = "integration test: a tiny churn inside a guest"
fullness = 0.1
written_factor = 0.2
mean_file_bytes = 65536
max_file_bytes = 4194304
tail_min_bytes = 262144.0
time_cap_s = 600.0  # a guard against a hang only: the bytes bound the work
"""
SUITE = """
name = "aging-guest-test"
filesystems = ["ext4"]
tasks = ["mkfs", "mount", "capacity_initial", "umount"]
"""
GUESTS = ("jfs@uml", "ext4@uml")


@pytest.fixture(scope="module")
def aged_run() -> Iterator[tuple[subprocess.CompletedProcess[str], Path, Path]]:
    work = new_workdir()
    (work / "tiny.toml").write_text(PROFILE)
    (work / "suite.toml").write_text(SUITE)
    out = work / "session.json"
    result = fsarena(
        "run", "--suite", str(work / "suite.toml"), "--age", str(work / "tiny.toml"),
        "--fs", "ext4,jfs@uml", "--image-size", IMAGE, "-n", "2", "--seed", "11",
        "--workdir", str(work / "w"), "--output", str(out), "--quiet",
        check=False,
    )  # fmt: skip
    yield result, out, work
    subprocess.run(["rm", "-rf", str(work)], check=False)


def _session(aged_run: tuple[subprocess.CompletedProcess[str], Path, Path]) -> Session:
    result, out, _ = aged_run
    assert result.returncode == 0, result.stderr
    return load(out)


def test_a_guest_ages_to_the_same_file_set_as_the_host(aged_run) -> None:  # type: ignore[no-untyped-def]
    session = _session(aged_run)
    assert set(session.aging) == {"ext4", *GUESTS}
    size = session.aging["ext4"].image_size_bytes
    plan = AgingPlan(resolve_age(str(aged_run[2] / "tiny.toml")), size, 11)
    expected = digest(plan.final(), 11)
    for fs, record in session.aging.items():
        assert record.image_size_bytes == size, fs
        assert record.manifest_digest == expected, fs
        assert record.on_disk_matches and record.stopped_by == "bytes", fs
        assert record.bytes_written >= 0.2 * size, fs
        # Read inside the guest, from its own disk's counters (the host sees a file).
        assert record.live_bytes and record.device_write_bytes >= record.live_bytes, fs
        assert record.snapshot_method in ("reflink", "sparse copy"), fs


def test_the_aged_guest_runs_its_tasks_on_the_restored_image(aged_run) -> None:  # type: ignore[no-untyped-def]
    session = _session(aged_run)
    for fs in GUESTS:
        for run in (r for r in session.runs if r.filesystem == f"{fs}+tiny"):
            if run.task == "mkfs":
                assert run.status == "skipped" and "aged" in run.error
            else:
                assert run.status == "ok", (fs, run.task, run.error)
        assert {r.repetition for r in session.runs if r.filesystem == f"{fs}+tiny"} == {1, 2}
    probes = [r for r in session.runs if r.task == "aged_layout"]
    layouts = [r for r in probes if r.filesystem == "ext4@uml+tiny"]
    # Both repetitions read the very image the aging left (restored from its snapshot).
    assert len(layouts) == 2 and layouts[0].values == layouts[1].values
    assert 0 < layouts[0].values["layout_score"] <= 1 and layouts[0].values["free_extents"] > 0
    jfs = next(r for r in probes if r.filesystem == "jfs@uml+tiny")
    assert "layout_score" not in jfs.values and "FIEMAP" in jfs.details["no_extents"]
    _, _, work = aged_run
    assert not list((work / "w" / "images").glob("*")), "snapshots and images are removed"
    assert not leftovers(work)


def test_the_report_shows_the_guest_aged_in_its_own_group(aged_run) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = aged_run
    text = fsarena("report", str(out)).stdout
    assert "Groups (ranked within a group only" in text
    assert "guest:uml: jfs@uml, ext4@uml" in text or "guest:uml: ext4@uml, jfs@uml" in text
    assert "jfs@uml: no extent figures nor layout score: the filesystem does not report" in text
    assert "jfs@uml: no free-space figures: fsarena knows no read-only free-space tool" in text
    assert "the same file set on every filesystem (one manifest digest)" in text
