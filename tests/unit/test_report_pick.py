"""`fsarena report` with no path: which session it picked, on stderr; empty ones passed over."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.session.file import load, save

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "session-v2.json"


def _empty(path: Path, mtime: float) -> None:
    session = load(FIXTURE).model_copy(update={"runs": [], "status": "failed"})
    save(session, path)
    os.utime(path, (mtime, mtime))


def _report(results: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["report", "--results-dir", str(results)])
    return result.exit_code, result.stdout, result.stderr


def test_it_says_which_file_it_picked(tmp_path: Path) -> None:
    shutil.copy(FIXTURE, tmp_path / "a.json")
    code, out, err = _report(tmp_path)
    assert code == 0 and out.startswith("fsarena results")
    assert err == f"fsarena: reporting {tmp_path / 'a.json'}, the newest session in {tmp_path}\n"


def test_newer_empty_sessions_are_passed_over_and_named(tmp_path: Path) -> None:
    shutil.copy(FIXTURE, tmp_path / "good.json")
    os.utime(tmp_path / "good.json", (1000, 1000))
    _empty(tmp_path / "empty.json", 2000)
    (tmp_path / "summary.json").write_text("{}")  # a JSON summary, not a session
    code, out, err = _report(tmp_path)
    assert code == 0 and "NOTHING WAS MEASURED" not in out
    assert err.count("\n") == 1
    assert f"reporting {tmp_path / 'good.json'}, the newest session in {tmp_path} that " in err
    assert "passed over 2 newer file(s): summary.json: not a session file; " in err
    assert "empty.json: measured nothing (no run)" in err


def test_when_every_session_is_empty_it_says_so(tmp_path: Path) -> None:
    _empty(tmp_path / "old.json", 1000)
    _empty(tmp_path / "new.json", 2000)
    code, out, err = _report(tmp_path)
    assert code == 0
    assert err == (
        f"fsarena: reporting {tmp_path / 'new.json'}, the newest session in {tmp_path}: "
        "it measured nothing (no run); no session there measured anything\n"
    )
    assert out.splitlines()[1].startswith("NOTHING WAS MEASURED (0 of ")
