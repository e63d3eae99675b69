"""Aging through a FUSE driver, at a tiny size: its own mount, the host's file set, every task.

A FUSE driver runs on the host: the aged tree is written through its FUSE
mount, like any host path. FUSE answers no FIEMAP: the aged layout has no
extent figures and says why, and the aged reads still run (a layout that
failed used to end the sequence before them).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fsarena.aging.profiles import resolve_age
from fsarena.aging.workload import AgingPlan, digest
from fsarena.filesystems.drivers import choose
from fsarena.session.file import load
from tests.integration.conftest import fsarena, leftovers
from tests.integration.test_aging_guest import PROFILE, SUITE

FUSE = "ntfs@fuse"  # ntfs-3g: the quickest FUSE driver here (fusefat ages at ~3 MB/s)

pytestmark = pytest.mark.skipif(not choose(FUSE).available, reason=f"{FUSE} is not installed")


def test_a_fuse_driver_ages_on_its_mount_and_runs_every_aged_task(workdir: Path) -> None:
    (workdir / "tiny.toml").write_text(PROFILE)
    (workdir / "suite.toml").write_text(SUITE)
    out = workdir / "session.json"
    fsarena(
        "run", "--suite", str(workdir / "suite.toml"), "--age", str(workdir / "tiny.toml"),
        "--fs", f"ext4,{FUSE}", "--image-size", "320M", "-n", "1", "--seed", "11",
        "--workdir", str(workdir / "w"), "--output", str(out), "--quiet",
    )  # fmt: skip
    session = load(out)
    for run in session.runs:
        if run.filesystem.endswith("+tiny") and run.task == "mkfs":
            continue
        assert run.status == "ok", (run.filesystem, run.task, run.error)
    size = session.aging["ext4"].image_size_bytes
    plan = AgingPlan(resolve_age(str(workdir / "tiny.toml")), size, 11)
    assert session.aging[FUSE].manifest_digest == digest(plan.final(), 11)
    assert session.aging[FUSE].on_disk_matches
    layout = next(r for r in session.runs if r.task == "aged_layout" and r.filesystem == FUSE)
    assert "FIEMAP" in layout.details["no_extents"]
    assert {r.task for r in session.runs if r.filesystem == f"{FUSE}+tiny"} >= {
        "aged_grep",
        "aged_tar",
        "aged_cat",
    }
    text = fsarena("report", str(out)).stdout
    assert f"{FUSE}: no extent figures nor layout score: the filesystem does not report" in text
    assert "Groups (ranked within a group only" in text and f"fuse: {FUSE}" in text
    assert not leftovers(workdir)
    subprocess.run(["rm", "-rf", str(workdir / "w")], check=False)
