"""Git replay aging on real loop devices, small: the same history gives the same tree everywhere.

The kernel tree is the generated look-alike (FSARENA_KERNEL=generated) at scale
0.01 and the replayed history 12 commits, pulled two at a time: seconds per
filesystem. The fresh twin's clean copy is read by aged_grep beside the aged one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.session.file import Session, load
from tests.integration.conftest import fsarena, leftovers, new_workdir

FILESYSTEMS = ("ext4", "xfs")
PROFILE = """
source = "integration test: a short git replay"
kind = "git-replay"
fullness = 0.5
commits = 12
pull_step = 2
"""
SUITE = """
name = "git-replay-test"
filesystems = ["ext4"]
tasks = ["mkfs", "mount", "aged_grep", "umount"]
age = "{profile}"

[datasets.agingrepo]  # the profile names it: a suite may set it
commits = 12
"""


@pytest.fixture(scope="module")
def replayed() -> Iterator[tuple[subprocess.CompletedProcess[str], Path, Path]]:
    work = new_workdir()
    (work / "replay.toml").write_text(PROFILE)
    (work / "suite.toml").write_text(SUITE.format(profile=work / "replay.toml"))
    out = work / "session.json"
    result = fsarena(
        "run", "--suite", str(work / "suite.toml"),
        "--fs", ",".join(FILESYSTEMS), "--scale", "0.01", "-n", "2", "--seed", "3",
        "--workdir", str(work / "w"), "--output", str(out), "--quiet",
        check=False, env={**os.environ, "FSARENA_KERNEL": "generated"},
    )  # fmt: skip
    yield result, out, work
    subprocess.run(["rm", "-rf", str(work)], check=False)


def _session(replayed: tuple[subprocess.CompletedProcess[str], Path, Path]) -> Session:
    result, out, _ = replayed
    assert result.returncode == 0, result.stderr
    return load(out)


def test_the_same_history_gives_the_same_tree_on_every_filesystem(replayed) -> None:  # type: ignore[no-untyped-def]
    session = _session(replayed)
    assert set(session.aging) == set(FILESYSTEMS)
    digests = {r.manifest_digest for r in session.aging.values()}
    heads = {r.head for r in session.aging.values()}
    assert len(digests) == 1 and len(heads) == 1, session.aging
    for fs, record in session.aging.items():
        assert record.on_disk_matches, fs  # the last commit, checked out clean
        assert record.rounds == 1 + 6, fs  # the first commit, then 12 commits two at a time
        assert record.stopped_by == "commits", fs
        assert (record.files or 0) > 0 and record.device_write_bytes > 0, fs


def test_aged_and_fresh_read_the_replayed_tree(replayed) -> None:  # type: ignore[no-untyped-def]
    session = _session(replayed)
    for run in session.runs:
        if run.filesystem.endswith("+replay") and run.task == "mkfs":
            assert run.status == "skipped", run.error
        else:
            assert run.status == "ok", (run.filesystem, run.task, run.error)
    greps = {r.filesystem for r in session.runs if r.task == "aged_grep"}
    assert greps == {*FILESYSTEMS, *(f"{fs}+replay" for fs in FILESYSTEMS)}


def test_nothing_is_left_behind(replayed) -> None:  # type: ignore[no-untyped-def]
    _session(replayed)
    assert leftovers(replayed[2] / "w") == []


def test_the_host_replay_is_removed_when_the_run_ends(replayed) -> None:  # type: ignore[no-untyped-def]
    # The fresh twin's source, replayed once on the host into the scratch directory.
    _session(replayed)
    scratch = replayed[2] / "w" / "scratch"
    assert not (scratch / "git-replay").exists(), sorted(os.listdir(scratch))
