"""--age-repo: a real local repository's history replayed on real loop devices (issue 29).

The repository is built in the test from real history: a clone of fsarena's own
repository (the one these tests run from), its newest 12 first-parent commits pulled
3 at a time onto ext4. The report must name the repository and its commit range,
give the files each pull touched, and show the aged/fresh table.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.session.file import load
from tests.integration.conftest import REPO, fsarena, leftovers, new_workdir

PROFILE = """
source = "integration test: fsarena's own newest commits, 3 per pull"
kind = "git-replay"
fullness = 0.5
commits = 12
pull_step = 3
"""
SUITE = """
name = "age-repo-test"
tasks = ["mkfs", "mount", "umount"]
"""


def _git(*argv: str) -> str:
    return subprocess.run(["git", *argv], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def replayed() -> Iterator[tuple[subprocess.CompletedProcess[str], Path, Path, Path]]:
    work = new_workdir()
    common = Path(REPO, _git("-C", str(REPO), "rev-parse", "--git-common-dir").strip())
    user = work / "project"
    _git("clone", "-q", "--no-local", str(common), str(user))  # real history, our own copy
    (work / "replay.toml").write_text(PROFILE)
    (work / "suite.toml").write_text(SUITE)
    out = work / "session.json"
    result = fsarena(
        "run", "--suite", str(work / "suite.toml"), "--fs", "ext4", "--scale", "0.01", "-n", "2",
        "--seed", "3", "--age", str(work / "replay.toml"), "--age-repo", str(user),
        "--workdir", str(work / "w"), "--output", str(out),
        check=False, env={**os.environ, "FSARENA_KERNEL": "generated"},
    )  # fmt: skip
    yield result, out, work, user
    subprocess.run(["rm", "-rf", str(work)], check=False)


def test_the_report_names_the_repository_its_range_and_the_files_per_pull(replayed) -> None:  # type: ignore[no-untyped-def]
    result, out, work, user = replayed
    assert result.returncode == 0, result.stderr[-3000:]
    line = _git("-C", str(user), "rev-list", "--first-parent", "--max-count=13", "HEAD").split()
    session = load(out)
    record = session.aging["ext4"]
    assert record.first_commit == line[-1] and record.head == line[0]
    assert record.rounds == 5 and record.files_touched and len(record.files_touched) == 5
    text = " ".join(result.stdout.split())
    assert f"the real history of the git repository {user}" in text
    assert f"commits {line[-1][:12]}..{line[0][:12]}" in text
    assert "5 pulls; the first (the clone) brought" in text
    assert "Aged (replay) beside fresh: time per task" in result.stdout
    assert "aged_grep" in result.stdout and "Aging beside published effects" in result.stdout
    assert "Reference (published, not measured here)" in result.stdout
    assert leftovers(work / "w") == []
