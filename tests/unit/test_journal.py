"""The session's journal: constant-size saves, nothing lost at any cut, older files unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from fsarena.session.file import Run, Session, load, save
from fsarena.session.journal import Journal, journal_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _grown(n: int) -> tuple[Session, list[Run]]:
    """An empty copy of a recorded session, and n runs to add to it (the fixture's, cycled)."""
    full = load(FIXTURES / "full-v2.json")
    runs = [full.runs[i % len(full.runs)].model_copy(update={"repetition": i}) for i in range(n)]
    return full.model_copy(update={"runs": [], "warmup": []}, deep=True), runs


def _journaled(path: Path, session: Session, runs: list[Run]) -> Journal[Session]:
    """The session saved whole at path, then each run appended to its journal."""
    journal = Journal(path, save)
    journal.save(session)
    for run in runs:
        session.runs.append(run)
        journal.save(session)
    return journal


def _same(a: Session, b: Session) -> bool:
    return a.model_dump(mode="json") == b.model_dump(mode="json")


def test_runs_go_to_the_journal_and_load_merges_them(tmp_path: Path) -> None:
    session, runs = _grown(40)
    path = tmp_path / "s.json"
    journal = Journal(path, save)
    journal.save(session)  # the first save writes the file whole
    whole = path.read_bytes()
    for i, run in enumerate(runs):
        session.runs.append(run)
        if i == 20:
            session.status = "interrupted"  # the rest changes: carried once
        journal.save(session)
    assert path.read_bytes() == whole, "the file is not rewritten between the whole saves"
    assert json.loads(whole)["runs"] == []
    assert len(journal_of(path).read_text().splitlines()) == 40
    assert _same(load(path), session)
    journal.compact(session)
    assert not journal_of(path).exists()
    assert json.loads(path.read_text())["status"] == "interrupted"
    assert _same(load(path), session)


def test_a_save_writes_as_much_at_run_300_as_at_run_1(tmp_path: Path) -> None:
    session, runs = _grown(300)
    journal = Journal(tmp_path / "s.json", save)
    journal.save(session)
    sizes = []
    for run in runs:
        session.runs.append(run)
        before = journal.journal.stat().st_size if journal.journal.exists() else 0
        journal.save(session)
        sizes.append(journal.journal.stat().st_size - before)
    assert max(sizes[270:]) < 2 * max(sizes[:30]), "a late save writes what an early one did"
    assert len(load(tmp_path / "s.json").runs) == 300


def test_a_line_cut_short_by_a_crash_loses_that_run_only(tmp_path: Path) -> None:
    session, runs = _grown(5)
    path = tmp_path / "s.json"
    _journaled(path, session, runs)
    data = journal_of(path).read_bytes()
    journal_of(path).write_bytes(data[: len(data) - 40])  # the last line half-written
    assert [r.repetition for r in load(path).runs] == [0, 1, 2, 3]


def test_a_compaction_cut_before_the_journal_went_adds_nothing_twice(tmp_path: Path) -> None:
    session, runs = _grown(6)
    path = tmp_path / "s.json"
    journal = _journaled(path, session, runs)
    kept = journal_of(path).read_bytes()
    journal.compact(session)
    journal_of(path).write_bytes(kept)  # the crash came between the file and the unlink
    assert [r.repetition for r in load(path).runs] == list(range(6))


def test_another_sessions_journal_is_not_applied(tmp_path: Path) -> None:
    session, runs = _grown(3)
    path = tmp_path / "s.json"
    _journaled(path, session, runs)
    kept = journal_of(path).read_bytes()
    other, _ = _grown(0)
    other.created_at = "2026-11-27T00:00:00+00:00"
    save(other, path)  # --force: a new session at the same name
    journal_of(path).write_bytes(kept)
    assert load(path).runs == []


def test_resuming_compacts_and_goes_on_numbering(tmp_path: Path) -> None:
    session, runs = _grown(6)
    path = tmp_path / "s.json"
    first = Journal(path, save)
    first.save(session)
    for run in runs[:3]:
        session.runs.append(run)
        first.save(session)  # then kill -9: the journal stays
    resumed = load(path)
    assert len(resumed.runs) == 3 and resumed.journaled == 3
    second = Journal(path, save)
    second.save(resumed)  # a resume's first save: whole, the old journal gone
    assert not journal_of(path).exists()
    for run in runs[3:]:
        resumed.runs.append(run)
        second.save(resumed)
    assert [r.repetition for r in load(path).runs] == list(range(6))
    assert load(path).journaled == 6


def test_files_without_a_journal_load_as_before() -> None:
    for fixture in sorted(FIXTURES.glob("session-v*.json")):
        raw = json.loads(fixture.read_text())
        assert len(load(fixture).runs) == len(raw["runs"])


def test_a_name_with_a_killed_runs_journal_is_not_taken(tmp_path: Path) -> None:
    """A journal left by a kill -9 holds measurements: a new session never lands on it."""
    import pytest

    from fsarena.errors import FsarenaError
    from fsarena.session.file import claim

    taken = tmp_path / "s.json"
    journal_of(taken).write_text('{"seq":1,"session":"then","runs":{"at":0,"items":[]}}\n')
    assert claim(taken, rename=True) == tmp_path / "s-2.json"  # passed over
    with pytest.raises(FsarenaError, match="journal of a killed run's session"):
        claim(taken, rename=False)
    assert not taken.exists() and journal_of(taken).exists()
