"""Shared kernel settings: the previous value recorded, put back once, never over a stranger's."""

from __future__ import annotations

from pathlib import Path

from fsarena.host import ledger
from fsarena.host import sysctls as settings
from fsarena.host.cleanup import cleanup
from fsarena.host.ledger import Ledger
from fsarena.run.launch import workdir_lock


def test_plain_setting_is_restored_once(tmp_path: Path) -> None:
    knob = tmp_path / "dirty_bytes"
    knob.write_text("0\n")
    change = settings.change(str(knob), "268435456")
    assert change is not None and change.previous == "0"
    settings.apply(change)
    assert knob.read_text() == "268435456\n"
    assert settings.restore(change) == f"restored {knob} to 0"
    assert knob.read_text() == "0\n"
    assert settings.restore(change) == "", "a second restore has nothing to do"


def test_a_value_already_in_place_is_no_change(tmp_path: Path) -> None:
    knob = tmp_path / "knob"
    knob.write_text("7\n")
    assert settings.change(str(knob), "7") is None


def test_a_file_changed_by_someone_else_is_left_alone(tmp_path: Path) -> None:
    knob = tmp_path / "knob"
    knob.write_text("1\n")
    change = settings.change(str(knob), "2")
    assert change is not None
    settings.apply(change)
    knob.write_text("3\n")  # another engineer's value, set since
    assert settings.restore(change) == ""
    assert knob.read_text() == "3\n"


def test_a_file_that_is_gone_needs_nothing(tmp_path: Path) -> None:
    gone = settings.Setting(str(tmp_path / "cgroup" / "memory.max"), "1", "max")
    assert settings.restore(gone) == ""


def test_keyed_files_touch_only_their_key(tmp_path: Path) -> None:
    rules = tmp_path / "blkio.throttle.write_bps_device"
    rules.write_text("7:1 200000000\n")  # someone else's loop device
    assert settings.read_value(str(rules), "7:3", "keyed") == "0", "no rule reads as 0"
    assert settings.read_value(str(rules), "7:1", "keyed") == "200000000"
    change = settings.change(str(rules), "21086863", "7:3", "keyed")
    assert change is not None
    settings.apply(change)
    # The kernel merges one written line into its table; this file only shows the line written.
    assert rules.read_text() == "7:3 21086863\n"
    settings.restore(change)
    assert rules.read_text() == "7:3 0\n", "writing KEY 0 removes the rule"


def test_restore_can_write_another_file(tmp_path: Path) -> None:
    dirty, ratio = tmp_path / "dirty_bytes", tmp_path / "dirty_ratio"
    dirty.write_text("268435456\n")
    ratio.write_text("0\n")
    change = settings.Setting(str(dirty), "268435456", "20", restore_path=str(ratio))
    settings.restore(change)
    assert ratio.read_text() == "20\n"


def test_controllers_read_by_name(tmp_path: Path) -> None:
    control = tmp_path / "cgroup.subtree_control"
    control.write_text("cpu memory\n")
    assert settings.read_value(str(control), "memory", "controller") == "+memory"
    assert settings.read_value(str(control), "io", "controller") == "-io"


def test_the_ident_round_trips() -> None:
    change = settings.Setting("/p", "1", "0", "7:3", "keyed", "")
    assert settings.Setting.from_ident(change.ident()) == change


def test_cleanup_after_kill_restores_a_tracked_setting(tmp_path: Path) -> None:
    """What a SIGKILLed run left in the ledger is put back by `fsarena cleanup`."""
    knob = tmp_path / "knob"
    knob.write_text("10\n")
    change = settings.change(str(knob), "99")
    assert change is not None
    Ledger(str(tmp_path)).track("setting", change.ident())
    settings.apply(change)
    with workdir_lock(str(tmp_path)):
        report = cleanup(str(tmp_path))
    assert knob.read_text() == "10\n"
    assert report.done == (f"restored {knob} to 10",)
    assert not (tmp_path / ledger.STATE_FILE).exists()
