"""Your command and your data on real loop devices: a suite's [tasks.NAME], --command, --data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fsarena.session.file import load
from tests.integration.conftest import REPO, leftovers


def _run(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fsarena", "run", *args, "--workdir", str(work / "w"),
         "--results-dir", str(work / "results"), "--output", str(work / "session.json")],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "FSARENA_KERNEL": "generated"},
    )  # fmt: skip


def _mydata(root: Path) -> Path:
    """A small directory of the user's, with a symlink (left out) and nested files."""
    data = root / "mydata"
    (data / "docs" / "deep").mkdir(parents=True)
    for i in range(30):
        (data / "docs" / f"note{i}.txt").write_text(f"note {i}\n" * (i * 40 + 1))
    (data / "docs" / "deep" / "paper.pdf").write_bytes(os.urandom(200_000))
    (data / "link").symlink_to("docs")
    return data


def test_user_suite_with_your_data_and_command_ranks_filesystems(workdir: Path) -> None:
    data = _mydata(workdir)
    suite = workdir / "mine.toml"
    suite.write_text(
        f"""
name = "mine"
filesystems = ["ext4", "xfs"]
repetitions = 2
[tasks.tree_copy_in]
[tasks.tree_find_pattern]
[tasks.build]
prepare = "cp -r $FSARENA_DATASET_TREE src"
command = "tar cf out.tar src"
verify = "tar tf out.tar | grep -q paper.pdf"
cwd = "work"
datasets = ["tree"]
[tasks.tree_delete]
[datasets.tree]
kind = "directory"
path = "{data}"
"""
    )
    result = _run(workdir, "--suite", str(suite))
    assert result.returncode == 0, result.stderr[-3000:]
    session = load(workdir / "session.json")
    assert {r.status for r in session.runs} == {"ok"}
    assert session.datasets["tree"].files == 31, "regular files only: the symlink left out"
    assert str(session.datasets["tree"].origin).startswith(f"your directory {data}")
    copies = [r for r in session.runs if r.task == "tree_copy_in"]
    assert all(c.ok and "31 files" in c.detail for r in copies for c in r.checks)
    builds = [r for r in session.runs if r.task == "build"]
    assert len(builds) == 4 and all(r.checks[0].ok for r in builds)
    assert session.plan.task_info["build"].kind == "your_workload"
    assert "your workload:" in result.stdout, "the command's kind has a verdict"
    assert "build  [your_workload]" in result.stdout
    assert "AGAINST THE ARTICLES" not in result.stdout, "your data is not the article's tree"
    assert not (data / "work").exists(), "the user's directory was only read"
    assert not leftovers(workdir)


def test_a_fresh_task_runs_on_a_filesystem_made_for_it(workdir: Path) -> None:
    """A command after another sees what it left; one with `fresh = true` (as every
    --command and every replay) gets the filesystem made anew, untimed, and the report
    says which tasks did. Each sequence's filesystem is told apart by its UUID."""
    uuid = "findmnt -no UUID $FSARENA_MOUNT"
    suite = workdir / "fresh.toml"
    suite.write_text(
        f"""
name = "fresh"
filesystems = ["ext4"]
repetitions = 1
[tasks.mark]
command = "touch $FSARENA_MOUNT/marker && {uuid} > $FSARENA_SCRATCH/mark.uuid"
[tasks.after]
command = "true"
verify = "test -e $FSARENA_MOUNT/marker && {uuid} | cmp - $FSARENA_SCRATCH/mark.uuid"
[tasks.alone]
fresh = true
command = "true"
verify = "test ! -e $FSARENA_MOUNT/marker && ! {uuid} | cmp -s - $FSARENA_SCRATCH/mark.uuid"
"""
    )
    result = _run(workdir, "--suite", str(suite), "--no-warmup")
    assert result.returncode == 0, result.stderr[-3000:]
    session = load(workdir / "session.json")
    assert [(r.task, r.status) for r in session.runs] == [
        ("mark", "ok"),
        ("after", "ok"),
        ("alone", "ok"),
    ], [r.error for r in session.runs]
    assert [c.ok for r in session.runs for c in r.checks] == [True, True]
    assert session.plan.info("alone").fresh and not session.plan.info("after").fresh
    report = subprocess.run(
        [sys.executable, "-m", "fsarena", "report", str(workdir / "session.json")],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "(alone: each on a filesystem made anew for it)" in " ".join(report.split())
    assert not leftovers(workdir)


def test_a_failing_command_is_a_recorded_fault_with_its_stderr(workdir: Path) -> None:
    result = _run(
        workdir, "--fs", "ext4", "-n", "1",
        "--prepare", "echo prepared > p.txt",
        "--command", "cat p.txt && echo 'make: *** [all] Error 2' >&2 && exit 3",
    )  # fmt: skip
    # The command was the whole plan, and it failed: nothing was measured (exit 3).
    assert result.returncode == 3, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    session = load(workdir / "session.json")
    (run,) = session.runs
    assert run.task == "command" and run.status == "failed"
    assert "exit code 3" in run.error and "make: *** [all] Error 2" in run.error
    assert not leftovers(workdir)


def test_command_line_command_works_in_a_verified_copy_of_your_data(workdir: Path) -> None:
    """--data without --suite: the directory is copied onto each filesystem, the command's cwd."""
    data = _mydata(workdir)
    out = workdir / "counts"
    out.mkdir()
    count = f"find . -type f | wc -l > {out}/$(basename $FSARENA_MOUNT).$$ && pwd >> {out}/pwd"
    result = _run(
        workdir, "--fs", "ext4,xfs", "-n", "2", "--data", str(data),
        "--prepare", "test -f docs/deep/paper.pdf", "--command", count,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    session = load(workdir / "session.json")
    assert session.plan.suite == "command" and session.plan.tasks == ["command"]
    assert [r.status for r in session.runs] == ["ok"] * 4
    assert session.datasets["tree"].files == 31
    for run in session.runs:
        (copy,) = run.checks
        assert copy.ok and "31 files" in copy.detail, copy
    counts = [p.read_text() for p in out.iterdir() if p.name != "pwd"]
    assert counts == ["31\n"] * 4, "each run saw a fresh copy: 31 files, nothing left over"
    assert {Path(p).name for p in (out / "pwd").read_text().split()} == {"data"}
    assert not leftovers(workdir)


def test_data_too_big_for_the_image_is_refused_before_anything_runs(workdir: Path) -> None:
    data = _mydata(workdir)
    (data / "big.bin").write_bytes(b"\0" * (40 << 20))
    result = _run(workdir, "--fs", "ext4", "-n", "1", "--data", str(data), "--image-size", "32M")
    assert result.returncode != 0
    assert "does not fit" in result.stderr and "--image-size" in result.stderr
    assert not (workdir / "session.json").exists()
