"""Faults become data: a target too small for the dataset is an ENOSPC run, and the run goes on."""

from __future__ import annotations

from pathlib import Path

from fsarena.session.file import load
from tests.integration.conftest import fsarena, leftovers, measured


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
    assert result.returncode == 1, result.stderr  # partial: failures, not a crash
    session = load(out)
    assert session.status == "partial"
    assert result.stdout.startswith("fsarena results\nONLY PART WAS MEASURED (")
    ext4 = {r.task: r for r in session.runs if r.filesystem == "ext4"}
    copy = ext4["iso_copy_in"]
    assert copy.status == "failed" and copy.fault == "enospc"
    assert copy.error.startswith("ENOSPC: the target is too small")
    assert "No space left on device" in copy.error, "the tool's own words are kept"
    assert ext4["mkfs"].status == "ok" and ext4["umount"].status == "skipped"
    xfs = [r for r in session.runs if r.filesystem == "xfs"]
    assert len(xfs) == 6 and all(measured(r) for r in xfs), "the run went on"
    assert session.profiles_as_run["xfs"].image_size_bytes == 300 << 20
    assert "FAILED, INVALID OR SKIPPED RUNS" in result.stdout and "ENOSPC" in result.stdout
    assert not leftovers(workdir)


def test_a_run_that_measured_nothing_says_so_first_and_exits_3(workdir: Path) -> None:
    """Every mkfs fails (a suite's variants with options mkfs refuses): issue 11, item 3."""
    suite = workdir / "broken.toml"
    suite.write_text(
        'name = "broken-mkfs"\nrepetitions = 1\n'
        'tasks = ["mkfs", "mount", "iso_copy_in", "tree_copy_in", "tree_delete", "umount"]\n'
        '[filesystems.ext4-bad]\nbase = "ext4"\nmkfs_options = ["-O", "no_such_feature"]\n'
        '[filesystems.xfs-bad]\nbase = "xfs"\nmkfs_options = ["-m", "no_such_option=1"]\n'
    )
    out = workdir / "session.json"
    result = fsarena("run", "--suite", str(suite), "--scale", "0.01",
                     "--workdir", str(workdir / "w"), "--output", str(out),
                     check=False)  # fmt: skip
    assert result.returncode == 3, result.stderr
    session = load(out)
    assert session.status == "failed" and not session.ok_runs()
    lines = result.stdout.splitlines()
    assert lines[1].startswith("NOTHING WAS MEASURED (0 of 12 runs measured)")
    assert lines[3] == "Why (2 distinct reasons):"
    assert result.stdout.count("no_such_feature") == 2, "once on top, once in the failures list"
    assert "[filesystems.ext4-bad]" in result.stdout
    assert "time s (mean" not in result.stdout, "no table of dashes"
    assert "VERDICTS" not in result.stdout
    html = out.with_suffix(".html").read_text()
    assert 'id="outcome"' in html and "<p>None.</p>" not in html
    assert not leftovers(workdir)
