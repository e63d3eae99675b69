"""Issue 36: what fsarena writes beside the user's files, and what a hostile directory holds.

- One rule for derived files (session.outputs): a report fsarena wrote may be replaced,
  a file or directory it did not write is never deleted or replaced (case 3);
- a dangling `*.json` symbolic link in a results directory is no session file: `run`,
  `run --dry-run`, `report` and `store import DIR` pass over it (case 5);
- a session is identified by its content: compare says "same session" only for the
  same measured content, and "same start time, different content" for a changed copy
  (case 6); two sessions differing only in mount options say so (case 7).

The real runs (`run --output` beside the user's HTML, root) are in
tests/integration/test_fault_matrix.py.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from click.testing import CliRunner, Result

from fsarena.cli.commands import main
from fsarena.session.file import load, save

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSION = FIXTURES / "session-v3.json"


def _cli(*args: str, cwd: Path | None = None) -> Result:
    if cwd is None:
        return CliRunner().invoke(main, list(args))
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)


def _one_line(result: Result, code: int, *words: str) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    errors = [x for x in result.output.splitlines() if x.startswith("fsarena: error:")]
    assert len(errors) == 1, result.output
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


# ---------------------------------------------------------------- case 3: derived files


def test_report_never_deletes_a_charts_directory_it_did_not_write(tmp_path: Path) -> None:
    """Issue 36: `report --format html -o DIR/x.html` deleted an existing DIR/x-charts/
    (shutil.rmtree) with what was in it."""
    charts = tmp_path / "x-charts"
    charts.mkdir()
    (charts / "holiday.jpg").write_bytes(b"the user's photo")
    result = _cli("report", str(SESSION), "--format", "html", "-o", str(tmp_path / "x.html"))
    _one_line(result, 2, "x-charts exists and is not a report's chart directory fsarena wrote")
    assert (charts / "holiday.jpg").read_bytes() == b"the user's photo"
    assert not (tmp_path / "x.html").exists()  # nothing half-written either


def test_report_replaces_the_report_and_charts_it_wrote_itself(tmp_path: Path) -> None:
    out = tmp_path / "x.html"
    first = _cli("report", str(SESSION), "--format", "html", "-o", str(out))
    assert first.exit_code == 0, first.output
    again = _cli("report", str(SESSION), "--format", "html", "-o", str(out))
    assert again.exit_code == 0, again.output  # its own report: no --force needed
    out.write_text(out.read_text() + "<!-- my notes -->")  # now partly the user's
    edited = _cli("report", str(SESSION), "--format", "html", "-o", str(out))
    _one_line(edited, 2, "exists already", "--force")
    assert out.read_text().endswith("<!-- my notes -->")


def test_report_writes_into_an_empty_file_the_user_made(tmp_path: Path) -> None:
    """Issue 36: `report -o FILE` refused an empty file the user had just made with mktemp."""
    fd, name = tempfile.mkstemp(dir=tmp_path, suffix=".md")
    os.close(fd)
    result = _cli("report", str(SESSION), "--format", "markdown", "-o", name)
    assert result.exit_code == 0, result.output
    assert Path(name).read_text().startswith("#")
    assert oct(Path(name).stat().st_mode & 0o777) == "0o600"  # mktemp's mode is kept


def test_run_refuses_an_output_whose_report_would_replace_the_users_files(
    tmp_path: Path,
) -> None:
    """Issue 36: `run --output R/y.json` overwrote R/y.html and deleted R/y-charts/. The run
    is refused before anything starts (--dry-run says so too); --force names the session
    file only, never what is beside it."""
    (tmp_path / "y.html").write_text("my page")
    (tmp_path / "y-charts").mkdir()
    (tmp_path / "y-charts" / "mine.svg").write_text("<svg/>")
    args = ["run", "--fs", "ext4", "--scale", "0.01", "--workdir", str(tmp_path / "w")]
    for more in ([], ["--force"]):
        result = _cli(*args, "--dry-run", "--output", str(tmp_path / "y.json"), *more)
        _one_line(result, 2, "y.html (HTML report)", "y-charts (report's chart directory)")
    assert (tmp_path / "y.html").read_text() == "my page"
    assert (tmp_path / "y-charts" / "mine.svg").exists()


def test_compare_and_store_history_follow_the_same_rule(tmp_path: Path) -> None:
    mine = tmp_path / "mine.txt"
    mine.write_text("keep me")
    result = _cli("compare", str(SESSION), str(FIXTURES / "session-v1.json"), "-o", str(mine))
    _one_line(result, 2, "exists already")
    assert mine.read_text() == "keep me"
    out = tmp_path / "cmp.txt"
    for _ in range(2):  # its own comparison, written again
        again = _cli("compare", str(SESSION), str(FIXTURES / "session-v1.json"), "-o", str(out))
        assert again.exit_code == 0, again.output


def test_a_parquet_export_never_replaces_the_users_file(tmp_path: Path) -> None:
    """`store export --parquet DIR` replaced DIR/runs.parquet whatever it was; now only an
    earlier export's, and all tables are checked before one is written."""
    store = tmp_path / "s.sqlite"
    assert _cli("store", "import", str(SESSION), "--store", str(store)).exit_code == 0
    out = tmp_path / "pq"
    out.mkdir()
    (out / "runs.parquet").write_text("mine")
    refused = _cli("store", "export", "--parquet", str(out), "--store", str(store))
    _one_line(refused, 2, "runs.parquet exists and is not a Parquet export fsarena wrote")
    assert sorted(p.name for p in out.iterdir()) == ["runs.parquet"]
    (out / "runs.parquet").unlink()
    for _ in range(2):  # its own export, written again
        again = _cli("store", "export", "--parquet", str(out), "--store", str(store))
        assert again.exit_code == 0, again.output


# ---------------------------------------------------------------- case 5: dangling links


def _results_with_a_dangling_link(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    save(load(SESSION), results / "fsarena-20261101-000000-article-a-2006.json")
    (results / "zz-gone.json").symlink_to(tmp_path / "nowhere.json")
    return results


def test_report_passes_over_a_dangling_json_link(tmp_path: Path) -> None:
    """Issue 36: a dangling `*.json` symlink in the results directory crashed `report`
    (session/file.py: stat of every *.json) with a traceback."""
    results = _results_with_a_dangling_link(tmp_path)
    result = _cli("report", "--results-dir", str(results))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def test_a_dry_run_passes_over_a_dangling_json_link(tmp_path: Path) -> None:
    """Issue 36: ... and `run --dry-run` (run/estimate.py reads the earlier sessions)."""
    results = _results_with_a_dangling_link(tmp_path)
    result = _cli("run", "--fs", "ext4", "--scale", "0.01", "--dry-run",
                  "--results-dir", str(results), "--workdir", str(tmp_path / "w"))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "dry run: nothing was created" in result.output


def test_store_import_of_a_directory_passes_over_a_dangling_link(tmp_path: Path) -> None:
    """Issue 36: ... and made `store import DIR` refuse the whole directory."""
    results = _results_with_a_dangling_link(tmp_path)
    store = tmp_path / "s.sqlite"
    result = _cli("store", "import", str(results), "--store", str(store))
    assert result.exit_code == 0, result.output
    assert "1 of 1 sessions added" in result.output
    assert "skipped" in result.output and "zz-gone.json: not a regular file" in result.output


# ---------------------------------------------------------------- case 6: session identity


def _copy(tmp_path: Path, name: str, slower: float = 1.0) -> Path:
    raw = json.loads(SESSION.read_text())
    if slower != 1.0:
        for run in raw["runs"]:
            if run["task"] == "iso_copy_in" and run.get("measurement"):
                run["measurement"]["wall_s"] *= slower
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def test_compare_with_a_modified_copy_says_same_start_time_different_content(
    tmp_path: Path,
) -> None:
    """Issue 36: `compare` of a session against a modified copy of itself warned "BASE and
    NEW are the same session … they can only agree" and compared them anyway."""
    result = _cli("compare", str(SESSION), str(_copy(tmp_path, "b.json", 1.5)))
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the text report wraps its lines
    assert "are the same session" not in said
    assert "have the same start time" in said and "but different content" in said


def test_compare_with_an_identical_copy_says_same_session(tmp_path: Path) -> None:
    result = _cli("compare", str(SESSION), str(_copy(tmp_path, "b.json")))
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "are the same session (started" in said and "content digest" in said


def test_the_digest_ignores_bookkeeping_and_sees_every_measurement() -> None:
    from fsarena.session.digest import session_digest

    session = load(SESSION)
    resaved = session.model_copy(update={"status": "complete", "finished_at": "later"})
    resaved.timing.report_s = 99.0
    assert session_digest(resaved) == session_digest(session)
    runs = [r.model_copy() for r in session.runs]
    assert runs[0].measurement is not None
    runs[0] = runs[0].model_copy(
        update={"measurement": runs[0].measurement.__class__(
            **{**runs[0].measurement.__dict__, "wall_s": runs[0].measurement.wall_s + 1e-9}
        )}
    )  # fmt: skip
    assert session_digest(session.model_copy(update={"runs": runs})) != session_digest(session)


# ---------------------------------------------------------------- case 7: what differs


def test_sessions_that_differ_only_in_mount_options_say_so(tmp_path: Path) -> None:
    """Issue 36: compare of two sessions that differ only in mount options said "WHAT
    DIFFERS — nothing but the labels"."""
    raw = json.loads(SESSION.read_text())
    raw["created_at"] = "2026-11-24T00:00:00+00:00"
    raw["profiles_as_run"]["ext4"]["mount_options"] = ["noatime"]
    other = tmp_path / "noatime.json"
    other.write_text(json.dumps(raw))
    result = _cli("compare", str(SESSION), str(other), "--label", "a", "--label", "b")
    assert result.exit_code == 0, result.output
    assert "nothing but the labels" not in result.output
    assert "ext4 mount options: a (none), b noatime" in result.output
