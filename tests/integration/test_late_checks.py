"""Issue 36: checks that came late, and outputs beside the user's files, on real runs.

- `run --output R/y.json` beside the user's R/y.html and R/y-charts/: refused before
  anything is made, and every byte of them kept (case 3);
- a refused run leaves no results directory behind (case 7);
- `run --resume` with the default results directory keeps its store beside the
  session, not in the current directory's results/ (case 7);
- the user's own file where a run's image would go: refused at once, with a fix that
  names it (not "`fsarena check` says what is missing") (case 7).
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from tests.integration import stops
from tests.integration.conftest import REPO
from tests.integration.stops import after, child, stop_at

SMALL = ["--fs", "ext4", "--scale", "0.01", "-n", "1", "--seed", "7"]


def _fsarena(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*stops.FSARENA, *args], capture_output=True, text=True,
                          check=False, cwd=cwd)  # fmt: skip


def _one_error(found: subprocess.CompletedProcess[str]) -> str:
    errors = [x for x in found.stderr.splitlines() if x.startswith("fsarena: error:")]
    assert len(errors) == 1 and "Traceback" not in found.stderr, found.stderr
    return errors[0]


def test_run_output_beside_the_users_report_is_refused(workdir: Path, tmp_path: Path) -> None:
    """Issue 36, case 3: `run --output R/y.json` overwrote an existing R/y.html and deleted
    R/y-charts/ with what was in it."""
    results = tmp_path / "R"
    (results / "y-charts").mkdir(parents=True)
    (results / "y.html").write_text("my own page")
    (results / "y-charts" / "plot.png").write_bytes(b"my own plot")
    found = _fsarena("run", *SMALL, "--workdir", str(workdir), "--output", str(results / "y.json"))
    assert found.returncode == 2, found.stderr
    assert "y.html (HTML report)" in _one_error(found)
    assert (results / "y.html").read_text() == "my own page"
    assert (results / "y-charts" / "plot.png").read_bytes() == b"my own plot"
    assert not (results / "y.json").exists() and stops.leftovers(workdir) == []


def test_a_refused_run_leaves_no_results_directory(workdir: Path, tmp_path: Path) -> None:
    """Issue 36, case 7: a refused run still created its results directory. Refused here
    by the user's file where its image goes (below), after the results check."""
    (workdir / "images").mkdir()
    (workdir / "images" / "notes.txt").write_text("mine")
    results = tmp_path / "new" / "results"
    found = _fsarena("run", *SMALL, "--workdir", str(workdir), "--results-dir", str(results))
    assert found.returncode == 2, found.stderr
    assert not (tmp_path / "new").exists()


def test_the_users_file_where_an_image_goes_is_named_with_its_fix(
    workdir: Path, tmp_path: Path
) -> None:
    """Issue 36, case 7: a run over the user's own file at its image's path got the Fix
    "`fsarena check --fs ext4` says what is missing", which check cannot see. It is
    refused before anything is made, naming the file and what to do; the file is kept."""
    image = workdir / "images" / "ext4-r1.img"
    image.parent.mkdir()
    image.write_bytes(b"the user's own file")
    found = _fsarena("run", *SMALL, "--workdir", str(workdir), "--results-dir", str(tmp_path))
    assert found.returncode == 2, found.stderr
    line = _one_error(found)
    assert str(image) in line and "move it away, or use another --workdir" in line
    assert "fsarena check" not in found.stderr
    assert image.read_bytes() == b"the user's own file"
    assert stops.leftovers(workdir) == []


def test_resume_keeps_its_store_beside_the_session(workdir: Path, tmp_path: Path) -> None:
    """Issue 36, case 7: `--resume` with the default results directory wrote into the
    current directory's results/, not beside the session."""
    results, elsewhere = tmp_path / "R", tmp_path / "cwd"
    elsewhere.mkdir()
    args = ["run", *SMALL, "--workdir", str(workdir), "--results-dir", str(results)]
    stopped = stop_at(args, workdir, after("repetition 1: ext4", child("cp")), signal.SIGINT)
    assert stopped.code == 130, stopped.stderr
    session = next(results.glob("*.json"))
    resumed = _fsarena("run", "--resume", str(session), "--quiet", cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    assert not (elsewhere / "results").exists()
    assert (results / "fsarena.sqlite").exists()
