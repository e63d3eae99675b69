"""Never lose a result, on real runs: same-second sessions, and results directories that are a
file, read-only, full, or fill mid-run (issue 24, findings 3 and 4).

Each results directory is a small tmpfs this test mounts in its own temporary
directory (and unmounts); each run is one --command on ext4, a few seconds.
"""

from __future__ import annotations

import datetime as real_dt
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.session.file import load
from tests.integration.conftest import FSARENA, REPO, leftovers

TINY = ("--fs", "ext4", "-n", "1", "--no-warmup", "--quiet")


def _run(work: Path, results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FSARENA, "run", *TINY, "--workdir", str(work / "w"), "--results-dir", str(results),
         *args],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@contextmanager
def _tmpfs(path: Path, size: str, read_only: bool = False) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def _error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith("fsarena: error:")]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


class _OneSecond:
    """datetime as `fsarena run` names sessions by it: every call in the same second."""

    class datetime:
        @staticmethod
        def now() -> real_dt.datetime:
            return real_dt.datetime(2026, 11, 25, 12, 0, 0)


def test_two_runs_started_in_the_same_second_keep_two_sessions(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fsarena.cli import running
    from fsarena.cli.commands import main

    monkeypatch.setattr(running, "dt", _OneSecond)
    results = workdir / "results"
    for n in (1, 2):
        args = ["run", *TINY, "--command", f"echo {n}", "--workdir", str(workdir / f"w{n}")]
        outcome = CliRunner().invoke(main, [*args, "--results-dir", str(results)])
        assert outcome.exit_code == 0, outcome.output[-3000:]
    sessions = sorted(results.glob("*.json"))
    assert [p.name for p in sessions] == [
        "fsarena-20261125-120000-command-2.json",
        "fsarena-20261125-120000-command.json",
    ]
    commands = {load(p).plan.model_dump()["commands"]["command"]["command"] for p in sessions}
    assert commands == {"echo 1", "echo 2"}
    with sqlite3.connect(results / "fsarena.sqlite") as db:
        named = sorted(r[0] for r in db.execute("SELECT source_path FROM sessions"))
    assert named == [str(p) for p in sessions], "two rows naming two files"
    assert not leftovers(workdir)


@pytest.mark.parametrize("kind", ["a file", "read-only", "full"])
def test_a_results_directory_that_cannot_hold_the_session_is_refused_first(
    workdir: Path, kind: str
) -> None:
    results = workdir / "results"
    if kind == "a file":
        results.write_text("not a directory\n")
        refused = _run(workdir, results, "--command", "true")
    else:
        with _tmpfs(results, "512k", read_only=kind == "read-only"):
            if kind == "full":
                subprocess.run(["sh", "-c", f"head -c 1M /dev/zero > {results}/fill"], check=False)
            refused = _run(workdir, results, "--command", "true")
            assert sorted(p.name for p in results.iterdir()) == ([] if kind != "full" else ["fill"])
    assert refused.returncode == 2, refused.stderr[-3000:]
    line = _error_line(refused.stderr)
    assert "not ready to run: results directory" in line and "fix:" in line
    assert {"a file": "is a file", "read-only": "read-only", "full": "MB free"}[kind] in line
    assert not (workdir / "w" / "images").exists(), "refused before anything was made"
    assert not leftovers(workdir / "w")


def test_a_results_directory_that_fills_mid_run_ends_like_ctrl_c(workdir: Path) -> None:
    with _tmpfs(workdir / "results", "2M") as results:
        marker = workdir / "filled-once"
        fill = (
            f"test -e {marker} || {{ touch {marker}; head -c 3M /dev/zero > {results}/fill; }}; "
            "true"
        )
        stopped = _run(workdir, results, "-n", "2", "--command", fill)
        assert stopped.returncode == 2, stopped.stderr[-3000:]
        line = _error_line(stopped.stderr)
        (path,) = results.glob("*.json")
        assert "the session could not be saved: disk full" in line
        assert f"continue with `fsarena run --resume {path}`" in line
        assert "nothing left mounted or attached" in line
        assert not leftovers(workdir / "w")
        assert load(path).status == "running", "its last save, resumable"
        (results / "fill").unlink()
        resumed = subprocess.run(
            [*FSARENA, "run", "--resume", str(path), "--quiet", "--results-dir", str(results)],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        session = load(path)
        assert (session.status, len(session.runs)) == ("complete", 2)


def test_a_failure_after_the_save_says_what_was_kept(workdir: Path) -> None:
    with _tmpfs(workdir / "results", "2M") as results:
        # The command leaves 24 KiB: room for the session's saves, not its HTML nor a store.
        squeeze = (
            f"a=$(df --output=avail -B1 {results} | tail -1); "
            f"head -c $((a - 24576)) /dev/zero > {results}/fill; true"
        )
        done = _run(workdir, results, "--command", squeeze)
        assert done.returncode == 1, done.stderr[-3000:]
        line = _error_line(done.stderr)
        (path,) = results.glob("*.json")
        assert line.startswith(f"fsarena: error: session saved: {path}; ")
        assert "; HTML not written: disk full" in line
        assert "; not added to the store: " in line
        assert load(path).status == "complete"
        assert sorted(p.name for p in results.iterdir()) == ["fill", path.name], "nothing half"
        assert not leftovers(workdir / "w")
