"""A session that measured nothing or only part says so first, once, with why and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.plan.model import Plan, make_plan
from fsarena.report import render
from fsarena.report.outcome import outcome
from fsarena.run.new_session import new_session
from fsarena.run.resume import resumable
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load, save
from tests.fakes import FakeDatasets, FakeExecutor

TASKS = 13  # article A's sequence


def _plan(tmp_path: Path, fs: list[str]) -> Plan:
    return make_plan("article-a-2006", fs, 1, 0.001, 7, str(tmp_path / "work"))


def _run(plan: Plan, ex: FakeExecutor, path: Path, datasets: FakeDatasets | None = None) -> Session:
    session = new_session(plan, {"kernel": "k1"}, {"cp": "9.1"})
    return Runner(plan, ex, session, path, "tmpfs", datasets=datasets or ex.datasets).run()


class NoLoop(FakeExecutor):
    """No loop device for the named filesystems: their sequences cannot start."""

    def __init__(self, *names: str) -> None:
        super().__init__()
        self.names = names

    def attach_loop(self, image: str) -> str:
        if any(f"/{name}" in image or f"-{name}" in image for name in self.names):
            raise FsarenaError("cannot attach: no free loop device")
        return super().attach_loop(image)


@pytest.fixture
def nothing(tmp_path: Path) -> Session:
    return _run(_plan(tmp_path, ["ext4", "xfs"]), NoLoop("ext4", "xfs"), tmp_path / "s.json")


def test_a_session_that_measured_nothing_is_failed_not_complete(nothing: Session) -> None:
    assert nothing.status == "failed" and not nothing.ok_runs()
    told = outcome(nothing)
    assert (told.measured, told.planned) == (0, 2 * TASKS)
    # One reason shared by both filesystems' 26 runs is one reason, counted.
    assert len(told.causes) == 1 and told.causes[0].runs == 2 * TASKS
    assert sorted(told.causes[0].filesystems) == ["ext4", "xfs"]


def test_the_text_report_starts_with_it_and_shows_no_table_of_dashes(nothing: Session) -> None:
    text = render(nothing, "text")
    lines = text.splitlines()
    assert lines[1].startswith("NOTHING WAS MEASURED (0 of 26 runs measured)")
    assert "Why (1 reason):" in lines[:5]
    # Once on top, then once per filesystem in the failures list (was: 26 times).
    assert " ".join(text.split()).count("no free loop device") == 3
    assert any(line.startswith("Fix: `fsarena check --fs ") for line in lines[:8])
    assert "mean ± sd" not in text and "VERDICTS" not in text
    assert "AGAINST THE ARTICLES" not in text, "no column of dashes against the articles"
    assert all(len(line) <= 80 for line in lines[: lines.index("") + 1])
    assert "status failed" in text


def test_json_draws_no_recommendation_from_no_data(nothing: Session) -> None:
    doc = json.loads(render(nothing, "json"))
    assert doc["status"] == "failed"
    assert doc["recommendation"] is None and doc["verdicts"] == []
    assert doc["tasks"] == []
    assert doc["outcome"]["measured_runs"] == 0 and doc["outcome"]["planned_runs"] == 26
    assert [c["runs"] for c in doc["outcome"]["causes"]] == [26]
    assert "tie" not in json.dumps(doc["outcome"])


def test_html_and_markdown_say_it_first(nothing: Session) -> None:
    html = render(nothing, "html")
    assert html.index('id="outcome"') < html.index('id="answer"')
    assert "NOTHING WAS MEASURED" in html and "<p>None.</p>" not in html
    md = render(nothing, "markdown").splitlines()
    assert md[2].startswith("> NOTHING WAS MEASURED")


def test_part_measured_is_partial_and_names_what_was_not(tmp_path: Path) -> None:
    session = _run(_plan(tmp_path, ["ext4", "xfs"]), NoLoop("xfs"), tmp_path / "s.json")
    assert session.status == "partial"
    text = render(session, "text")
    assert text.splitlines()[1].startswith("ONLY PART WAS MEASURED (13 of 26 runs measured)")
    assert "mkfs failed on xfs (13 runs not measured)" in text
    # The skipped runs point at the cause instead of repeating it.
    assert sum("no free loop device" in r.error for r in session.runs) == 1


def test_a_complete_session_has_no_such_block(tmp_path: Path) -> None:
    session = _run(_plan(tmp_path, ["ext4"]), FakeExecutor(), tmp_path / "s.json")
    assert session.status == "complete"
    text = render(session, "text")
    assert text.splitlines()[1:3] == ["", "ANSWER"], "the answer comes right after the title"
    assert "WAS MEASURED" not in text and "suite article-a-2006" in text


def test_an_old_complete_session_with_no_data_is_told_by_its_runs(
    nothing: Session, tmp_path: Path
) -> None:
    old = nothing.model_copy(update={"status": "complete"})  # as fsarena saved it before
    assert render(old, "text").splitlines()[1].startswith("NOTHING WAS MEASURED")
    assert json.loads(render(old, "json"))["status"] == "failed"


def test_a_run_stopped_before_its_first_run_records_why(tmp_path: Path) -> None:
    class NoSource(FakeDatasets):
        def materialize(self, spec, dest, cache, made):  # type: ignore[no-untyped-def]
            raise FsarenaError("cannot write the dataset: disk full")

    path = tmp_path / "s.json"
    with pytest.raises(FsarenaError):
        ex = FakeExecutor()
        _run(_plan(tmp_path, ["ext4"]), ex, path, NoSource(ex))
    saved = load(path)
    assert saved.status == "failed" and saved.runs == []
    assert [w.code for w in saved.warnings] == ["stopped"]
    assert "disk full" in saved.warnings[0].message
    assert "after 0 of 13 runs" in saved.warnings[0].message
    text = render(saved, "text")
    assert "NOTHING WAS MEASURED (0 of 13 runs measured)" in text
    assert "stopped by an error: cannot write the dataset: disk full" in text


def test_a_session_that_went_through_its_plan_is_not_resumable(
    nothing: Session, tmp_path: Path
) -> None:
    path = tmp_path / "done.json"
    save(nothing, path)
    with pytest.raises(FsarenaError, match=r"went through its whole plan .failed."):
        resumable(path)


def test_an_interrupted_session_records_the_signal(tmp_path: Path) -> None:
    class Stopped(FakeDatasets):
        def materialize(self, spec, dest, cache, made):  # type: ignore[no-untyped-def]
            raise KeyboardInterrupt("SIGTERM")

    path = tmp_path / "s.json"
    with pytest.raises(KeyboardInterrupt):
        ex = FakeExecutor()
        _run(_plan(tmp_path, ["ext4"]), ex, path, Stopped(ex))
    saved = load(path)
    assert saved.status == "interrupted" and saved.runs == []
    assert saved.warnings[0].message == "interrupted by SIGTERM, after 0 of 13 runs"
    assert render(saved, "text").splitlines()[1].startswith("NOTHING WAS MEASURED (0 of 13")
