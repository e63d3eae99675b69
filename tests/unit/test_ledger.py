"""The resource ledger: recorded before creation, forgotten after undo, undone by cleanup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsarena.host import ledger
from fsarena.host.cleanup import CleanupReport, claims
from fsarena.host.cleanup import cleanup as undo_ours
from fsarena.host.ledger import Entry, Ledger
from fsarena.run.launch import workdir_lock


def cleanup(workdir: str) -> CleanupReport:
    """As `fsarena cleanup` does it: under the work directory's lock."""
    with workdir_lock(workdir):
        return undo_ours(workdir)


def test_track_and_untrack_persist_in_the_state_file(tmp_path: Path) -> None:
    book = Ledger(str(tmp_path))
    book.track("image", "/x/a.img")
    book.track("loop", "/x/a.img")
    book.track("image", "/x/a.img")  # recorded once
    again = Ledger(str(tmp_path))  # another process reading the same work directory
    assert again.entries() == [Entry("image", "/x/a.img"), Entry("loop", "/x/a.img")]
    again.untrack("loop", "/x/a.img")
    assert book.entries() == [Entry("image", "/x/a.img")]
    book.untrack("image", "/x/a.img")
    assert not (tmp_path / ledger.STATE_FILE).exists(), "an empty ledger leaves no file"


def test_unknown_kind_is_a_bug(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no undo registered"):
        Ledger(str(tmp_path)).track("zram", "/dev/zram9")


def test_damaged_state_file_reads_as_empty(tmp_path: Path) -> None:
    (tmp_path / ledger.STATE_FILE).write_text("{half")
    assert Ledger(str(tmp_path)).entries() == []


def test_cleanup_undoes_newest_first_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []

    def undo_note(ident: str) -> str:
        order.append(ident)
        return f"noted {ident}"

    monkeypatch.setitem(ledger.UNDO, "note", undo_note)
    image = tmp_path / "images" / "x.img"
    image.parent.mkdir()
    image.write_bytes(b"\0" * 10)
    book = Ledger(str(tmp_path))
    book.track("image", str(image))
    book.track("note", "first")
    book.track("note", "second")
    found = claims(str(tmp_path))
    assert Entry("image", str(image)) in found.ours
    report = cleanup(str(tmp_path))
    assert order == ["second", "first"]
    assert report.done == ("noted second", "noted first", f"deleted {image}")
    assert not image.exists()
    assert book.entries() == []
    assert cleanup(str(tmp_path)).done == (), "idempotent"


def test_a_failed_undo_stays_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(ident: str) -> str:
        raise OSError(f"busy: {ident}")

    monkeypatch.setitem(ledger.UNDO, "stuck", refuse)
    book = Ledger(str(tmp_path))
    book.track("stuck", "thing")
    report = cleanup(str(tmp_path))
    assert report.failed == ("stuck thing: busy: thing",)
    assert book.entries() == [Entry("stuck", "thing")]


def test_state_file_is_plain_json(tmp_path: Path) -> None:
    Ledger(str(tmp_path)).track("mount", "/w/mnt/ext4")
    Ledger(str(tmp_path)).track("mount", "/w/mnt/xfs", "/dev/loop4")
    data = json.loads((tmp_path / ledger.STATE_FILE).read_text())
    assert data == {
        "resources": [
            {"kind": "mount", "ident": "/w/mnt/ext4"},
            {"kind": "mount", "ident": "/w/mnt/xfs", "source": "/dev/loop4"},
        ]
    }
    assert Ledger(str(tmp_path)).entries()[1] == Entry("mount", "/w/mnt/xfs", "/dev/loop4")


def test_check_does_not_call_a_live_runs_resources_leftovers(tmp_path: Path) -> None:
    from fsarena.run.launch import check_leftovers, workdir_lock

    Ledger(str(tmp_path)).track("image", str(tmp_path / "x.img"))
    (tmp_path / "x.img").write_bytes(b"")
    with workdir_lock(str(tmp_path)):  # a run holds the work directory
        live = check_leftovers(str(tmp_path))
    assert live.ok and "a run is using" in live.detail
    dead = check_leftovers(str(tmp_path))
    assert not dead.ok and "x.img" in dead.detail and "fsarena cleanup" in dead.fix


def test_a_tracked_tree_is_removed_by_cleanup_or_by_the_run(tmp_path: Path) -> None:
    # git replay's host copy (WORKDIR/scratch/git-replay): a directory of files.
    from fsarena.host.executor import RealExecutor

    for by_run in (False, True):
        tree = tmp_path / "scratch" / "git-replay"
        (tree / "tree" / "sub").mkdir(parents=True)
        (tree / "tree" / "sub" / "f.c").write_text("int x;\n")
        book = Ledger(str(tmp_path))
        book.track("tree", str(tree))
        if by_run:
            RealExecutor(ledger=book).remove_path(str(tree))
        else:
            assert cleanup(str(tmp_path)).done == (f"deleted {tree}",)
        assert not tree.exists() and book.entries() == []
    assert cleanup(str(tmp_path)).done == (), "idempotent"


def test_a_process_counts_as_exited_once_it_holds_no_file() -> None:
    # Cleanup waits on this for every process it killed (wait_gone): a zombie has closed
    # its files (what cleanup waits for), a running process has not.
    import subprocess
    import time

    from fsarena.host.ledger import exited

    running = subprocess.Popen(["sleep", "30"])
    try:
        assert not exited(running.pid)
    finally:
        running.kill()
    deadline = time.monotonic() + 5
    while not exited(running.pid):  # killed, not yet reaped: a zombie
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert Path(f"/proc/{running.pid}").exists(), "still in the process table, as a zombie"
    running.wait()
    assert exited(running.pid)  # reaped: gone from /proc


def test_wait_gone_waits_for_a_killed_process_its_marker_no_longer_finds() -> None:
    # The marker (find) says nothing is left, yet a killed process still exits: wait.
    import subprocess
    import threading
    import time

    from fsarena.host.ledger import wait_gone

    slow = subprocess.Popen(["sleep", "30"])
    started = time.monotonic()  # before the timer: a preempted thread cannot see it early
    threading.Timer(0.3, slow.kill).start()
    wait_gone([slow.pid], lambda workdir: [], "/nowhere", timeout_s=5)
    assert 0.25 < time.monotonic() - started < 4
    slow.wait()


# ---------------------------------------------------------------- issue 36, case 2


def test_a_ledger_that_cannot_be_written_keeps_the_truth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full work directory: recording a new resource stops the run before the resource
    exists (WorkdirUnwritable); forgetting an undone one keeps the truth in memory (the
    teardown then does not say it "could not undo" what it undid), writes it once there
    is room, and leaves no temporary file per failed write."""
    import errno
    import os

    from fsarena.host.ledger import Entry, Ledger, WorkdirUnwritable

    ledger = Ledger(str(tmp_path))
    ledger.track("image", str(tmp_path / "a.img"))
    ledger.track("image", str(tmp_path / "b.img"))

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(WorkdirUnwritable):
        ledger.track("image", str(tmp_path / "c.img"))
    ledger.untrack("image", str(tmp_path / "a.img"))  # no exception: it was undone
    assert ledger.entries() == [Entry("image", str(tmp_path / "b.img"))]
    assert ledger.behind and len(Ledger(str(tmp_path)).entries()) == 2  # the file is behind
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no .state.* left
    monkeypatch.undo()
    assert ledger.flush() is None  # written once there is room
    assert Ledger(str(tmp_path)).entries() == [Entry("image", str(tmp_path / "b.img"))]
