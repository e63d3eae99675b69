"""Faults become data: a target too small for the dataset is an ENOSPC run, and the run goes on."""

from __future__ import annotations

from pathlib import Path

from fsarena.results import load
from tests.integration.conftest import fsarena, leftovers


def test_enospc_is_a_failed_run_with_its_reason(workdir: Path) -> None:
    suite = workdir / "iso.toml"
    suite.write_text(
        'name = "iso-only"\nfilesystems = ["ext4", "xfs"]\nrepetitions = 1\n'
        'tasks = ["mkfs", "mount", "iso_copy_in", "iso_copy_within", "iso_delete", "umount"]\n'
    )
    out = workdir / "session.json"
    # A 70 MiB ISO: it cannot fit a 64 MiB ext4; xfs's image is raised to its 300 MiB minimum.
    result = fsarena("run", "--suite", str(suite), "--scale", "0.1", "--image-size", "64M",
                     "--workdir", str(workdir / "w"), "--output", str(out),
                     check=False)  # fmt: skip
    assert result.returncode == 1, result.stderr  # failures, not a crash
    session = load(out)
    assert session.status == "complete"
    ext4 = {r.task: r for r in session.runs if r.filesystem == "ext4"}
    copy = ext4["iso_copy_in"]
    assert copy.status == "failed" and copy.fault == "enospc"
    assert copy.error.startswith("ENOSPC: the target is too small")
    assert "No space left on device" in copy.error, "the tool's own words are kept"
    assert ext4["mkfs"].status == "ok" and ext4["umount"].status == "skipped"
    xfs = [r for r in session.runs if r.filesystem == "xfs"]
    assert len(xfs) == 6 and all(r.status == "ok" for r in xfs), "the run went on"
    assert session.profiles_as_run["xfs"]["image_size_bytes"] == 300 << 20
    assert "FAILED, INVALID OR SKIPPED RUNS" in result.stdout and "ENOSPC" in result.stdout
    assert not leftovers(workdir)
